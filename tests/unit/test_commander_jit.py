"""The compiled Commander (numba) against the Python one: the same move at every decision and
the same returns from every playout, over every rule variant; and the search that uses it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from omega_cluster._optional import numba_available
from omega_cluster.games import make_game
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.players import RandomPlayer
from omega_cluster.players.registry import make_player
from omega_cluster.search.evaluators import play_out
from omega_cluster.search.fast import SplitMixRandom

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba is an optional extra")

VARIANTS = [
    {"players": 4, "rounds": 1},
    {"players": 2, "rounds": 1},
    {"players": 8, "rounds": 1},
    {"players": 3, "rounds": 1, "strict_doubles": False},
    {"players": 4, "rounds": 1, "must_play": False},
    {"players": 4, "rounds": 1, "draw_until_playable": True},
    {"players": 4, "rounds": 1, "first_turn_chain": True},
    {"players": 3, "rounds": 1, "double_set": 9, "double_blank_value": 25},
    {"players": 4, "rounds": 2},  # the first round's playouts stay in Python
    {
        "players": 5,
        "rounds": 1,
        "objective": "go_out",
        "strict_doubles": False,
        "first_turn_chain": True,
        "must_play": False,
    },
]


def _played(game: Any, seed: int, moves: int, mover: Commander, rng: random.Random) -> Any:
    """Deal ``seed`` after up to ``moves`` of ``mover``'s moves (fewer if the round ends)."""
    state = game.new_initial_state(seed=seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(mover.act(state, state.current_players[0], rng))
    return state


@pytest.mark.parametrize(
    "params", VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items())
)
def test_compiled_commander_plays_the_python_commanders_moves(params: dict) -> None:
    """Along games of Commanders mixed with random moves (so positions off Commander's own
    path occur too), the compiled Commander picks the Python Commander's move at every decision
    and a compiled playout ends with the returns of ``play_out`` with Python Commanders."""
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    game = make_game("mexican_train", **params)
    python = Commander(game, compiled=False)
    compiled = CompiledCommander(
        game, python.weights.vector(), python.weights.danger_hand_size, python.chain_budget
    )
    rand = RandomPlayer(game)
    rng = random.Random(7)
    decisions = playouts = 0
    for seed in range(12):
        state = game.new_initial_state(seed=seed)
        while not state.is_terminal():
            p = state.current_players[0]
            assert compiled.act(state) == python.act(state, p, rng), (seed, state.history)
            decisions += 1
            if rng.random() < 0.15:
                expected = state.clone()
                play_out(expected, [python] * game.num_players, rng, 100_000)
                got = compiled.playout_returns(state)
                if compiled.supports(state):
                    assert got == tuple(expected.returns()), (seed, state.history)
                    playouts += 1
                else:  # a round still to deal after this one: Python's turn
                    assert got is None and state.round_index < game.num_rounds - 1
            mover = python if rng.random() < 0.6 else rand
            state.apply_action(mover.act(state, p, rng))
    assert decisions > 300
    assert playouts > 20 or params.get("rounds") == 2


def _checked_playout(
    state: Any,
    seats: list[Any],
    compiled: Callable[[Any, random.Random], tuple[float, ...] | None],
    default: Commander,
    rng: random.Random,
) -> bool:
    """Assert that ``compiled`` (a compiled playout) returns what ``seats`` playing ``state``
    out in Python return; whether four default Commanders would have played otherwise."""
    expected = state.clone()
    play_out(expected, seats, rng, 100_000)
    assert compiled(state, rng) == tuple(expected.returns())
    other = state.clone()
    play_out(other, [default] * 4, rng, 100_000)
    return bool(other.history != expected.history)


def test_commander_with_other_weights_compiles_the_same_moves() -> None:
    """Weights, danger threshold and chain budget reach the compiled Commander."""
    game = make_game("mexican_train", players=4, rounds=1)
    weights = {"dump_pips": 1.5, "block_opponent": 9.0, "danger_hand_size": 5}
    python = Commander(game, weights=weights, chain_budget=7, compiled=False)
    fast = Commander(game, weights=weights, chain_budget=7, compiled=True)
    default = Commander(game, compiled=True)
    rng = random.Random(3)
    differs = 0
    for seed in range(30):
        state = _played(game, seed, rng.randrange(0, 30), python, rng)
        if state.is_terminal():
            continue
        differs += _checked_playout(state, [python] * 4, fast.playout_returns, default, rng)
    assert differs > 0  # the weights do change the play: the check above can fail


def test_search_with_compiled_rollouts_is_the_python_search() -> None:
    """ISMCTS with Commander rollouts and the deductions returns the same result whether it runs
    compiled (the tree, its worlds and its rollouts) or in Python (same visits, values and move,
    from one splitmix64 stream), and leaves the state untouched."""
    game = make_game("mexican_train", players=4, rounds=1)
    rng = random.Random(0)
    mover = Commander(game)
    state = game.new_initial_state(seed=3)
    for _ in range(14):
        state.apply_action(mover.act(state, state.current_players[0], rng))
    player = state.current_players[0]
    before = list(state.history)
    results = []
    for compiled in (True, False):
        searcher = make_player("ismcts:commander_rollout:300:deduce=true:c_uct=2.5", game)
        searcher.evaluator.policy.compiled = compiled
        results.append(searcher.search.search(state, player, SplitMixRandom(5)))
    fast, slow = results
    assert fast.action == slow.action
    assert fast.visits == slow.visits
    assert fast.action_values == slow.action_values
    assert state.history == before


def test_compiled_option_is_checked() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    with pytest.raises(ValueError, match="compiled must be None"):
        Commander(game, compiled="yes")  # type: ignore[arg-type]
    python = Commander(game, compiled=False)
    assert python.playout_returns(game.new_initial_state(seed=1), random.Random(0)) is None
