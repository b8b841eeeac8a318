"""The in-process cases of the fault corpus (``kind: api``): calls of the game contract that
must be refused, or must not leak, named by ``call:`` in ``cases.yaml`` (its ``args`` are the
call's ``key=value`` parameters).

Each call returns a list of problems (empty: the contract held)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np

from omega_cluster.games.api import GameError, State
from omega_cluster.games.registry import make_game

CALLS: dict[str, Callable[..., list[str]]] = {}
LOOSE_ACTIONS: dict[str, Callable[[int], Any]] = {
    "float": float,
    "str": str,
    "bool": lambda a: bool(a),
    "numpy_float": np.float32,
    "none": lambda a: None,
}


def call(fn: Callable[..., list[str]]) -> Callable[..., list[str]]:
    CALLS[fn.__name__] = fn
    return fn


def _game(name: str, params: dict[str, Any]) -> Any:
    return make_game(name, **params)


def _decision_state(game: Any, seed: int = 0, moves: int = 0) -> State:
    """A state where a player acts, after the chance nodes and ``moves`` further moves."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
        elif moves > 0:
            if state.is_simultaneous_node():
                state.apply_joint_action([state.legal_actions(p)[0] for p in state.current_players])
            else:
                state.apply_action(rng.choice(list(state.legal_actions())))
            moves -= 1
        else:
            return state
    raise AssertionError(f"{game.spec.name} ended before a decision")


def _refused(step: Callable[[], Any], what: str, words: tuple[str, ...]) -> list[str]:
    try:
        step()
    except GameError as err:
        text = str(err).lower()
        return (
            [] if all(w in text for w in words) else [f"{what}: refused, but {err} lacks {words}"]
        )
    except Exception as err:  # the point: only a GameError is the contract's refusal
        return [f"{what}: raised {type(err).__name__} ({err}), not a GameError"]
    return [f"{what}: accepted"]


@call
def loose_action(game: str, kind: str, **params: Any) -> list[str]:
    """A legal action given as another type (float, str, bool, numpy float, None) is refused."""
    g = _game(game, params)
    state = _decision_state(g)
    players = state.current_players
    legal = [state.legal_actions(p)[-1] for p in players]
    loose = [LOOSE_ACTIONS[kind](a) for a in legal]
    if len(players) == 1:
        return _refused(
            lambda: state.clone().apply_action(loose[0]), f"apply_action({loose[0]!r})", ()
        )
    return _refused(
        lambda: state.clone().apply_joint_action(loose), f"apply_joint_action({loose!r})", ()
    )


@call
def loose_history(game: str, kind: str, **params: Any) -> list[str]:
    """A history whose first action is not an int is refused by ``Game.replay``."""
    g = _game(game, params)
    first = g.new_initial_state(0)
    action = first.chance_outcomes()[0][0] if first.is_chance_node() else first.legal_actions()[0]
    loose = LOOSE_ACTIONS[kind](action)
    return _refused(lambda: g.replay(0, [loose]), f"replay(0, [{loose!r}])", ())


@call
def illegal_action(game: str, **params: Any) -> list[str]:
    """An int that is not legal is refused with the legal actions in the message."""
    g = _game(game, params)
    state = _decision_state(g)
    players = state.current_players
    bad = 10**6
    if len(players) == 1:
        return _refused(lambda: state.clone().apply_action(bad), "apply_action(10**6)", ("legal",))
    joint = [bad] * len(players)
    return _refused(
        lambda: state.clone().apply_joint_action(joint), "apply_joint_action", ("legal",)
    )


@call
def chance_outcomes_possible(game: str, forbidden: list[int], **params: Any) -> list[str]:
    """The first chance node offers only outcomes of positive probability, and not exactly the
    set ``forbidden`` (outcomes the parameters rule out, e.g. pass directions without passing)."""
    state = _game(game, params).new_initial_state(0)
    outcomes = state.chance_outcomes() if state.is_chance_node() else []
    problems = [f"outcome {a} has probability {p}" for a, p in outcomes if not p > 0]
    if sorted(a for a, _ in outcomes) == sorted(forbidden):
        problems.append(
            f"the first chance node offers {sorted(forbidden)}, which {params} rules out"
        )
    return problems


@call
def sample_world_hides(game: str, moves: int = 20, samples: int = 20, **params: Any) -> list[str]:
    """``sample_world`` never hands the player the true hidden information: no sampled world
    equals the truth in every other player's information set (it may instead refuse with an
    error naming the game)."""
    g = _game(game, params)
    state = _decision_state(g, moves=moves)
    player = state.current_players[0]
    rng = random.Random(0)
    truth = 0
    for _ in range(samples):
        try:
            world = state.sample_world(player, rng)
        except GameError as err:
            return (
                []
                if game.split(":")[-1] in str(err)
                else [f"refused without naming the game: {err}"]
            )
        others = [q for q in range(g.num_players) if q != player]
        if world.information_set_key(player) != state.information_set_key(player):
            return ["a sampled world contradicts the player's information set"]
        truth += all(world.information_set_key(q) == state.information_set_key(q) for q in others)
    return [f"{truth} of {samples} sampled worlds were the true deal"] if truth else []
