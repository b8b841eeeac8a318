"""The contract's own machinery: registry, parameter validation, checked moves, replay, rng."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from omega_cluster.games import (
    Game,
    GameInputError,
    IllegalActionError,
    InvalidParameterError,
    ParamSpec,
    ReplayError,
    as_rng,
    available_games,
    make_game,
    register_game,
)
from omega_cluster.games.api import HistoryEntry, win_shares_from_returns


def test_unknown_game_lists_the_available_ones() -> None:
    with pytest.raises(InvalidParameterError) as err:
        make_game("mexican_trian")
    message = str(err.value)
    assert "mexican_trian" in message
    for name in ("mexican_train", "goofspiel", "kuhn_poker", "leduc_poker"):
        assert name in message


def test_registered_user_game_builds_by_name(blind_war: ModuleType) -> None:
    register_game("blind_war_test", blind_war.BlindWarGame, replace=True)
    game = make_game("blind_war_test", players=3, deck=10)
    assert game.num_players == 3 and game.spec.num_actions == 10
    assert "blind_war_test" in available_games()
    with pytest.raises(InvalidParameterError, match="already registered"):
        register_game("blind_war_test", blind_war.BlindWarGame)


def test_unknown_parameter_names_the_valid_ones(blind_war: ModuleType) -> None:
    with pytest.raises(InvalidParameterError) as err:
        blind_war.BlindWarGame(players=2, decks=3)
    assert "decks" in str(err.value)
    assert "players" in str(err.value) and "hand" in str(err.value)


@pytest.mark.parametrize(
    ("value", "fragment"), [(1, "below the minimum"), (5, "above the maximum"), ("2", "type int")]
)
def test_parameter_values_are_checked(blind_war: ModuleType, value: object, fragment: str) -> None:
    with pytest.raises(InvalidParameterError, match=fragment) as err:
        blind_war.BlindWarGame(players=value)
    assert "[2, 4]" in str(err.value)


def test_param_spec_choices_and_bool_is_not_int() -> None:
    spec = ParamSpec("points", "how the game is scored", str, choices=("points", "go_out"))
    assert spec.check("g", "objective", "go_out") == "go_out"
    with pytest.raises(InvalidParameterError, match="'points', 'go_out'"):
        spec.check("g", "objective", "goout")
    with pytest.raises(InvalidParameterError, match="type int"):
        ParamSpec(2, "n", int).check("g", "players", True)
    assert ParamSpec(0.5, "x", float).check("g", "x", 1) == 1.0


def test_illegal_action_error_names_action_player_and_legal_set(blind_war: ModuleType) -> None:
    game = blind_war.BlindWarGame(players=2)
    state = game.new_initial_state(1)
    legal = state.legal_actions()
    illegal = next(a for a in range(game.spec.num_actions) if a not in legal)
    with pytest.raises(IllegalActionError) as err:
        state.apply_action(illegal)
    message = str(err.value)
    assert f"illegal action {illegal}" in message and "player 0" in message
    for action in legal:
        assert f"{action}=play {action + 1}" in message
    assert err.value.legal == tuple(legal) and err.value.player == 0
    with pytest.raises(IllegalActionError, match="not an int"):
        state.apply_action("3")  # type: ignore[arg-type]


def test_replay_reproduces_and_rejects_malformed_histories(blind_war: ModuleType) -> None:
    game = blind_war.BlindWarGame(players=2)
    state = game.new_initial_state(9)
    rng = random.Random(0)
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    again = game.replay(9, state.history)
    assert again.render() == state.render() and again.returns() == state.returns()
    with pytest.raises(ReplayError, match="step 0"):
        game.replay(9, [(1, 2)])
    with pytest.raises(ReplayError, match="not an int"):
        game.replay(9, ["x"])  # type: ignore[list-item]
    with pytest.raises(ReplayError, match="already over"):
        game.replay(9, [*state.history, 0])
    with pytest.raises(ReplayError, match="step 1"):
        game.replay(9, [state.history[0], state.history[0]])


def test_as_rng_is_deterministic_from_every_source() -> None:
    assert as_rng(5).random() == as_rng(5).random()
    a = as_rng(np.random.default_rng(3)).random()
    b = as_rng(np.random.default_rng(3)).random()
    assert a == b
    r = random.Random(1)
    assert as_rng(r) is r
    with pytest.raises(TypeError):
        as_rng("seed")  # type: ignore[arg-type]


def test_win_shares_split_ties() -> None:
    assert win_shares_from_returns([1.0, -1.0]) == (1.0, 0.0)
    assert win_shares_from_returns([2.0, 2.0, 0.0, 2.0]) == (1 / 3, 1 / 3, 0.0, 1 / 3)


# -- loose types: an action is an int (or a numpy integer), never a float, a string or a bool ----
LOOSE_GAMES = [
    ("mexican_train", {"players": 2, "rounds": 1}),
    ("goofspiel", {"num_cards": 4}),
    ("goofspiel", {"num_cards": 4, "players": 3, "imp_info": True}),
    ("kuhn_poker", {}),
    ("leduc_poker", {}),
    ("openspiel:kuhn_poker", {}),
    ("openspiel:goofspiel", {"num_cards": 4}),
    ("openspiel:tic_tac_toe", {}),
]


def _loose_values(legal: int) -> list[object]:
    return [float(legal), str(legal), np.float64(legal), bool(legal % 2), None, [legal]]


@pytest.mark.parametrize(("name", "params"), LOOSE_GAMES, ids=[g[0] for g in LOOSE_GAMES])
def test_every_game_refuses_loose_action_types(name: str, params: dict[str, object]) -> None:
    game = make_game(name, **params)
    state = game.new_initial_state(3)
    rng = random.Random(0)
    seen_joint = seen_single = False
    while not state.is_terminal() and not (
        seen_single and (seen_joint or not game.spec.simultaneous)
    ):
        acting = state.current_players
        joint = [state.legal_actions(p)[0] for p in acting]
        for value in _loose_values(joint[0]):
            with pytest.raises(IllegalActionError) as err:
                if len(acting) == 1:
                    state.apply_action(value)  # type: ignore[arg-type]
                else:
                    state.apply_joint_action([value, *joint[1:]])  # type: ignore[list-item]
            assert repr(value) in str(err.value)
            assert f"a {type(value).__name__}, not an int" in str(err.value)
        seen_joint |= len(acting) > 1
        seen_single |= len(acting) == 1
        if len(acting) == 1:
            state.apply_action(np.int64(rng.choice(list(state.legal_actions()))))  # type: ignore[arg-type]
        else:
            state.apply_joint_action(
                np.array([rng.choice(list(state.legal_actions(p))) for p in acting])
            )
        last = state.history[-1]
        assert all(type(a) is int for a in (last if isinstance(last, tuple) else (last,)))


def test_user_games_refuse_loose_types_through_the_contract(
    blind_war: ModuleType, race_to_n: ModuleType
) -> None:
    for game in (blind_war.BlindWarGame(players=2), race_to_n.RaceGame()):
        state = game.new_initial_state(1)
        legal = state.legal_actions()[0]
        for value in (float(legal), str(legal), True, np.float64(legal)):
            with pytest.raises(IllegalActionError, match="not an int"):
                state.apply_action(value)  # type: ignore[arg-type]
        assert state.history == []
        with pytest.raises(IllegalActionError, match="tuple of 1 actions, got int"):
            state.apply_joint_action(legal)  # type: ignore[arg-type]
        state.apply_action(np.int32(legal))  # type: ignore[arg-type]
        assert state.history == [legal] and type(state.history[0]) is int


def test_replay_refuses_loose_types(blind_war: ModuleType) -> None:
    game = blind_war.BlindWarGame(players=2)
    legal = game.new_initial_state(9).legal_actions()[0]
    for entry in (float(legal), True, str(legal)):
        with pytest.raises(ReplayError, match="not an int"):
            game.replay(9, [entry])  # type: ignore[list-item]
    assert game.replay(9, [np.int64(legal)]).history == [legal]  # type: ignore[list-item]


# -- input types: seeds, histories and joint actions are checked in the contract, never coerced --
def _some_history(game: Game, seed: int) -> list[HistoryEntry]:
    state, rng = game.new_initial_state(seed), random.Random(seed)
    while not state.is_terminal() and len(state.history) < 6:
        acting = state.current_players
        moves = [rng.choice(list(state.legal_actions(p))) for p in acting]
        if len(acting) > 1:
            state.apply_joint_action(tuple(moves))
        else:
            state.apply_action(moves[0])
    return list(state.history)


@pytest.mark.parametrize(("name", "params"), LOOSE_GAMES, ids=[g[0] for g in LOOSE_GAMES])
def test_every_game_refuses_seeds_that_are_not_ints(name: str, params: dict[str, object]) -> None:
    game = make_game(name, **params)
    history = _some_history(game, 3)
    for seed in (3.5, 3.0, True, "3", None, np.float64(3)):
        with pytest.raises(GameInputError) as err:
            game.new_initial_state(seed)  # type: ignore[arg-type]
        assert repr(seed) in str(err.value)
        assert f"a {type(seed).__name__}, not an int" in str(err.value)
        with pytest.raises(GameInputError, match="not an int"):
            game.replay(seed, history)  # type: ignore[arg-type]
    for seed in (np.int64(3), np.uint32(3)):
        assert game.new_initial_state(seed).render() == game.new_initial_state(3).render()  # type: ignore[arg-type]
        assert game.replay(seed, history).history == history  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # the builtin kind, for callers that catch it
        game.new_initial_state(1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "params"), LOOSE_GAMES, ids=[g[0] for g in LOOSE_GAMES])
def test_every_game_refuses_histories_that_are_not_sequences(
    name: str, params: dict[str, object]
) -> None:
    game = make_game(name, **params)
    history = _some_history(game, 3)
    text = "".join(map(str, history[:2]))
    for bad in (text, set(history[:1]), dict.fromkeys(history[:1]), (h for h in history), 0, None):
        with pytest.raises(ReplayError) as err:
            game.replay(3, bad)  # type: ignore[arg-type]
        assert repr(bad) in str(err.value)
        assert f"is a {type(bad).__name__}, not a list or tuple" in str(err.value)
    assert game.replay(3, tuple(history)).history == history
    as_floats = [tuple(map(float, e)) if isinstance(e, tuple) else float(e) for e in history]
    with pytest.raises(ReplayError, match="a float, not an int"):
        game.replay(3, as_floats)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "params"), LOOSE_GAMES, ids=[g[0] for g in LOOSE_GAMES])
def test_every_game_refuses_joint_actions_that_are_not_sequences(
    name: str, params: dict[str, object]
) -> None:
    game = make_game(name, **params)
    state = game.new_initial_state(3)
    while not state.is_terminal() and not state.is_simultaneous_node():
        state.apply_action(state.legal_actions()[-1])
    if state.is_terminal():  # a sequential game: its single-player nodes refuse the same way
        state = game.new_initial_state(3)
    acting = state.current_players
    # distinct bids where the hands allow: a set of them has the joint action's length
    joint = tuple(state.legal_actions(p)[-i] for i, p in enumerate(acting))
    before = list(state.history)
    for bad in (joint[0], set(joint), dict.fromkeys(joint), "".join(map(str, joint)), None):
        with pytest.raises(IllegalActionError) as err:
            state.apply_joint_action(bad)  # type: ignore[arg-type]
        assert repr(bad) in str(err.value) and f"got {type(bad).__name__}" in str(err.value)
        assert state.history == before
    with pytest.raises(IllegalActionError, match="got ndarray"):
        state.apply_joint_action(np.array(joint[0]))  # a 0-d array is not a sequence
    state.apply_joint_action(list(joint))
    assert state.history[-1] == (joint if len(joint) > 1 else joint[0])


def test_the_seed_check_wraps_a_user_game_keeping_its_signature(blind_war: ModuleType) -> None:
    seen: list[object] = []

    class Seeded(blind_war.BlindWarGame):  # type: ignore[misc]
        def new_initial_state(self, seed: int = 7) -> Any:
            seen.append(seed)
            return super().new_initial_state(seed)

    class Keyword(blind_war.BlindWarGame):  # type: ignore[misc]
        def new_initial_state(self, seed: int = 0, *, note: str = "") -> Any:
            seen.append((seed, note))
            return super().new_initial_state(seed)

    Seeded().new_initial_state()
    Seeded().new_initial_state(np.int64(4))
    Seeded().new_initial_state(seed=5)
    Keyword().new_initial_state(np.int16(2), note="x")
    Keyword().new_initial_state(seed=3)
    assert seen == [7, 4, 5, (2, "x"), (3, "")]
    assert all(type(s if type(s) is not tuple else s[0]) is int for s in seen)
    for game in (Seeded(), Keyword()):
        with pytest.raises(GameInputError, match="seed 2.5 is a float"):
            game.new_initial_state(2.5)
        with pytest.raises(GameInputError, match="seed 2.5 is a float"):
            game.new_initial_state(seed=2.5)
    assert Seeded.new_initial_state.__name__ == "new_initial_state"
