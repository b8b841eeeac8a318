"""The OpenSpiel adapter: pyspiel games behind the game contract (omega_cluster.games.openspiel).

Games covered: tic_tac_toe (perfect information), kuhn_poker and leduc_poker (chance, hidden
cards, pyspiel's resample_from_infostate), goofspiel (simultaneous moves), liars_dice (hidden
dice, no resampler), hearts (a resampler whose worlds contradict the history) and gin_rummy (one
whose worlds cannot be checked, refused), a matrix game and
a one-player "simultaneous" game.
"""

from __future__ import annotations

import pickle
import random
import sys
from collections import Counter
from typing import Any, TypeVar

import pytest

from omega_cluster.games import (
    CHANCE,
    IllegalActionError,
    InvalidParameterError,
    SamplingNotSupportedError,
    State,
    make_game,
)
from omega_cluster.games.conformance import check_game
from omega_cluster.games.openspiel import OpenSpielGame, OpenSpielState, supported_openspiel_games

S = TypeVar("S", bound=State)


def play_randomly_one(state: State, rng: random.Random) -> None:
    """One uniformly random move (chance outcomes uniformly too)."""
    acting = state.current_players
    if acting == (CHANCE,):
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    elif len(acting) == 1:
        state.apply_action(rng.choice(state.legal_actions()))
    else:
        state.apply_joint_action([rng.choice(state.legal_actions(p)) for p in acting])


def play_randomly(state: S, rng: random.Random, max_steps: int = 10_000) -> S:
    """Play uniformly random moves (chance by its probabilities) to the end."""
    for _ in range(max_steps):
        acting = state.current_players
        if not acting:
            return state
        if acting == (CHANCE,):
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, probs)[0])
        elif len(acting) == 1:
            state.apply_action(rng.choice(state.legal_actions()))
        else:
            state.apply_joint_action([rng.choice(state.legal_actions(p)) for p in acting])
    raise AssertionError(f"no end after {max_steps} steps")


def states_along(game: OpenSpielGame, seed: int) -> list[OpenSpielState]:
    """Every state of one random game (copies), the terminal one included."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    seen = [state.clone()]
    while not state.is_terminal():
        play_randomly_one(state, rng)
        seen.append(state.clone())
    return seen


# -- building games ---------------------------------------------------------------------------
def test_spec_comes_from_the_pyspiel_game_type() -> None:
    kuhn = OpenSpielGame(name="kuhn_poker", players=3)
    spec = kuhn.spec
    assert spec.name == "openspiel:kuhn_poker" and spec.num_players == 3
    assert (spec.min_players, spec.max_players) == (2, 10)
    assert spec.num_actions == 2 and spec.max_game_length == kuhn.pyspiel_game.max_game_length()
    assert spec.hidden_information and spec.explicit_chance and spec.zero_sum
    assert not spec.simultaneous
    assert (spec.min_return, spec.max_return) == (-2.0, 4.0)

    ttt = OpenSpielGame(name="tic_tac_toe").spec
    assert not ttt.hidden_information and not ttt.explicit_chance and ttt.num_actions == 9
    goof = OpenSpielGame(name="goofspiel", num_cards=4).spec
    assert goof.simultaneous and goof.explicit_chance and goof.num_actions == 4
    assert not OpenSpielGame(name="matrix_pd").spec.zero_sum


def test_make_game_builds_openspiel_games_by_prefixed_name() -> None:
    game = make_game("openspiel:liars_dice", players=2, numdice=2)
    assert isinstance(game, OpenSpielGame)
    assert game.params["numdice"] == 2 and game.params["name"] == "liars_dice"
    assert game.spec.name == "openspiel:liars_dice"
    assert OpenSpielGame(name="liars_dice", numdice=2).spec == game.spec


def test_resolved_parameters_list_every_default_and_rebuild_the_same_game() -> None:
    game = OpenSpielGame(name="goofspiel", num_cards=5, players=3)
    assert game.params["points_order"] == "random" and game.params["num_cards"] == 5
    assert set(game.params) == set(OpenSpielGame.parameters_of("goofspiel"))
    rebuilt = OpenSpielGame(**game.params)
    assert rebuilt.spec == game.spec
    assert str(rebuilt.pyspiel_game) == str(game.pyspiel_game)


def test_player_count_sentinel_defaults_resolve_to_the_real_count() -> None:
    # hanabi's parameter_specification says players=0, meaning "the default" (2).
    game = OpenSpielGame(name="hanabi")
    assert game.params["players"] == game.num_players == 2


def test_unknown_game_is_named_and_the_supported_ones_listed() -> None:
    with pytest.raises(InvalidParameterError) as err:
        OpenSpielGame(name="kuhn_pokr")
    message = str(err.value)
    assert "'kuhn_pokr'" in message and "kuhn_poker" in message and "tic_tac_toe" in message
    with pytest.raises(InvalidParameterError, match="must be a pyspiel game name"):
        OpenSpielGame()
    assert "liars_dice" in supported_openspiel_games()


@pytest.mark.parametrize(
    ("name", "reason"),
    [("tarok", "SAMPLED_STOCHASTIC"), ("mfg_crowd_modelling", "mean-field")],
)
def test_games_that_cannot_replay_exactly_are_refused(name: str, reason: str) -> None:
    with pytest.raises(InvalidParameterError, match=reason) as err:
        OpenSpielGame(name=name)
    assert name in str(err.value)
    assert name not in supported_openspiel_games()


def test_unknown_parameter_is_named_and_the_valid_ones_listed() -> None:
    with pytest.raises(InvalidParameterError) as err:
        OpenSpielGame(name="liars_dice", dice=3)
    message = str(err.value)
    assert "unknown parameter(s) dice" in message
    for valid in ("numdice", "dice_sides", "bidding_rule", "players"):
        assert valid in message


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"name": "liars_dice", "numdice": "2"}, "numdice='2' must be of type int"),
        ({"name": "liars_dice", "numdice": True}, "must be of type int"),
        ({"name": "kuhn_poker", "players": 11}, "above the maximum"),
        ({"name": "liars_dice", "players": 3}, "above the maximum"),
        ({"name": "tic_tac_toe", "players": 3}, "exactly 2 players"),
        ({"name": "goofspiel", "points_order": "sideways"}, "sideways"),
    ],
)
def test_bad_parameter_values_are_refused(params: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidParameterError, match=fragment):
        OpenSpielGame(**params)


def test_a_float_parameter_accepts_an_int() -> None:
    game = OpenSpielGame(name="pathfinding", step_reward=-1)
    assert game.params["step_reward"] == -1.0 and isinstance(game.params["step_reward"], float)


def test_missing_pyspiel_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # what `import pyspiel` sees when absent
    with pytest.raises(ImportError, match=r"pip install 'omega_cluster\[openspiel\]'"):
        OpenSpielGame(name="kuhn_poker")


# -- who acts, moves, errors --------------------------------------------------------------------
def test_current_players_map_chance_simultaneous_and_terminal() -> None:
    kuhn = OpenSpielGame(name="kuhn_poker").new_initial_state()
    assert kuhn.current_players == (CHANCE,) and kuhn.is_chance_node()
    assert kuhn.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    assert kuhn.legal_actions() == kuhn.legal_actions(CHANCE) == [0, 1, 2]
    assert kuhn.legal_actions(0) == []
    kuhn.apply_action(2)
    kuhn.apply_action(0)
    assert kuhn.current_players == (0,) and kuhn.legal_actions() == [0, 1]
    assert kuhn.legal_actions(1) == [] and kuhn.legal_actions(CHANCE) == []
    kuhn.apply_action(1)  # bet
    kuhn.apply_action(0)  # fold
    assert kuhn.current_players == () and kuhn.returns() == (1.0, -1.0)

    goof = OpenSpielGame(name="goofspiel", num_cards=3, points_order="descending")
    state = goof.new_initial_state()
    assert state.current_players == (0, 1) and state.is_simultaneous_node()
    assert state.legal_actions(0) == state.legal_actions(1) == [0, 1, 2]
    state.apply_joint_action((2, 0))
    assert state.history == [(2, 0)]


def test_illegal_action_names_the_action_the_player_and_the_legal_set() -> None:
    state = OpenSpielGame(name="tic_tac_toe").new_initial_state()
    state.apply_action(4)
    with pytest.raises(IllegalActionError) as err:
        state.apply_action(4)
    message = str(err.value)
    assert "illegal action 4" in message and "player 1" in message
    assert err.value.legal == (0, 1, 2, 3, 5, 6, 7, 8)
    assert "0=x(0,0)" in message  # legal actions are named by pyspiel's action_to_string
    assert state.history == [4]


def test_illegal_simultaneous_action_names_the_player() -> None:
    state = OpenSpielGame(name="goofspiel", num_cards=3, points_order="descending")
    s = state.new_initial_state()
    s.apply_joint_action((0, 1))
    with pytest.raises(IllegalActionError, match="player 1") as err:
        s.apply_joint_action((2, 1))  # player 1 already bid card 1
    assert err.value.legal == (0, 2)


def test_naming_an_illegal_chess_move_does_not_crash() -> None:
    # pyspiel's chess segfaults in State.action_to_string for an illegal move id; the adapter
    # never asks a state to name an action that is illegal there.
    game = OpenSpielGame(name="chess")
    state = game.new_initial_state()
    with pytest.raises(IllegalActionError):
        state.apply_action(5)
    assert isinstance(game.describe_action(5), str)
    assert state.describe_action(5) == game.describe_action(5)


def test_actions_are_described_in_their_position() -> None:
    state = OpenSpielGame(name="kuhn_poker").new_initial_state()
    assert state.describe_action(1) == "Deal:1"
    state.apply_action(0)
    state.apply_action(1)
    assert [state.describe_action(a) for a in state.legal_actions()] == ["Pass", "Bet"]
    assert OpenSpielGame(name="leduc_poker").describe_action(2) == "Raise"
    assert OpenSpielGame(name="kuhn_poker").describe_action(-3) == "-3"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("tic_tac_toe", {}),
        ("kuhn_poker", {"players": 3}),
        ("leduc_poker", {}),
        ("goofspiel", {"num_cards": 5, "players": 3}),
        ("liars_dice", {"numdice": 2}),
        ("matrix_rps", {}),
        ("pathfinding", {}),
    ],
)
def test_random_playouts_end_with_one_return_per_player(name: str, params: dict[str, Any]) -> None:
    game = OpenSpielGame(name=name, **params)
    for seed in range(5):
        state = play_randomly(game.new_initial_state(), random.Random(seed))
        returns = state.returns()
        assert len(returns) == game.num_players and all(isinstance(r, float) for r in returns)
        assert returns == tuple(state.pyspiel_state.returns())
        assert game.spec.min_return is not None and game.spec.max_return is not None
        assert all(game.spec.min_return <= r <= game.spec.max_return for r in returns)
        if game.spec.zero_sum:
            assert sum(returns) == pytest.approx(0.0)
        assert abs(sum(state.win_shares()) - 1.0) < 1e-9


# -- history, replay, clone, pickle -----------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params"), [("leduc_poker", {}), ("goofspiel", {"num_cards": 4}), ("pathfinding", {})]
)
def test_history_mirrors_pyspiel_and_replay_reproduces_the_state(
    name: str, params: dict[str, Any]
) -> None:
    game = OpenSpielGame(name=name, **params)
    state = play_randomly(game.new_initial_state(), random.Random(3))
    flat = [a for entry in state.history for a in (entry if isinstance(entry, tuple) else (entry,))]
    assert flat == list(state.pyspiel_state.history())
    # The seed changes nothing: chance outcomes are in the history, as in pyspiel.
    for seed in (0, 12345):
        again = game.replay(seed, state.history)
        assert again.render() == state.render() and again.history == state.history
        assert again.returns() == state.returns()


def test_clones_are_independent() -> None:
    game = OpenSpielGame(name="leduc_poker")
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    twin = state.clone()
    before = (state.render(), list(state.history), state.information_set_key(0))
    play_randomly(twin, random.Random(1))
    assert (state.render(), list(state.history), state.information_set_key(0)) == before
    assert twin.is_terminal() and not state.is_terminal()


def test_games_and_states_pickle_by_parameters_and_history() -> None:
    game = OpenSpielGame(name="goofspiel", num_cards=4, players=3)
    state = play_randomly(game.new_initial_state(), random.Random(5))
    game_back = pickle.loads(pickle.dumps(game))
    assert game_back.params == game.params and game_back.spec == game.spec
    state_back = pickle.loads(pickle.dumps(state))
    assert state_back.history == state.history and state_back.render() == state.render()


# -- information --------------------------------------------------------------------------------
def test_information_set_key_is_pyspiels_information_state_string() -> None:
    state = OpenSpielGame(name="kuhn_poker").new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    assert state.information_set_key(0) == state.pyspiel_state.information_state_string(0)
    assert state.information_set_key(0) != state.information_set_key(1)
    assert state.observation(1) == state.information_set_key(1)
    other = OpenSpielGame(name="kuhn_poker").new_initial_state()
    other.apply_action(2)
    other.apply_action(1)  # player 1 holds another card: player 0 cannot tell
    assert other.information_set_key(0) == state.information_set_key(0)
    assert other.information_set_key(1) != state.information_set_key(1)
    tensor = state.observation_tensor(0)
    assert tensor.shape == (state.game.pyspiel_game.information_state_tensor_size(),)
    with pytest.raises(Exception, match="not a seat"):
        state.information_set_key(2)


@pytest.mark.parametrize(
    ("name", "params"),
    [("kuhn_poker", {}), ("kuhn_poker", {"players": 3}), ("leduc_poker", {}), ("hearts", {})],
)
def test_sample_world_keeps_the_information_set(name: str, params: dict[str, Any]) -> None:
    game = OpenSpielGame(name=name, **params)
    rng = random.Random(7)
    for seed in range(2 if name == "hearts" else 6):
        for state in states_along(game, seed)[:: 3 if name == "hearts" else 1]:
            for p in range(game.num_players):
                world = state.sample_world(p, rng)
                assert world.information_set_key(p) == state.information_set_key(p)
                assert world.current_players == state.current_players
                assert len(world.history) == len(state.history)
                play_randomly(world, rng)  # a live, legal state


def test_sample_world_varies_what_the_player_cannot_see_and_is_seeded() -> None:
    state = OpenSpielGame(name="kuhn_poker").new_initial_state()
    state.apply_action(0)  # player 0 holds the jack
    state.apply_action(1)
    # Player 1's card is uniform over {queen, king} in player 0's eyes: 200 draws see both
    # (a miss has probability 2 * 2**-200).
    rng = random.Random(0)
    dealt = Counter(state.sample_world(0, rng).history[1] for _ in range(200))
    assert set(dealt) == {1, 2} and min(dealt.values()) > 60
    first = [state.sample_world(0, random.Random(42)).history for _ in range(3)]
    assert first[0] == first[1] == first[2]


def test_sample_world_at_chance_nodes_falls_back_to_the_last_decision() -> None:
    # pyspiel's leduc resampler returns a state with an extra deal at chance nodes; the adapter
    # resamples at the last decision node and re-applies the history since then.
    game = OpenSpielGame(name="leduc_poker")
    state = game.new_initial_state()
    for action in (0, 3, 1, 1):  # deal J, Q; both call: the public card is next
        state.apply_action(action)
    assert state.is_chance_node()
    rng = random.Random(1)
    worlds = [state.sample_world(0, rng) for _ in range(60)]
    assert all(w.information_set_key(0) == state.information_set_key(0) for w in worlds)
    assert all(w.is_chance_node() and w.history[2:] == [1, 1] for w in worlds)
    assert len({w.history[1] for w in worlds}) > 1  # player 1's card varies


def test_perfect_information_sample_world_is_a_clone() -> None:
    state = OpenSpielGame(name="tic_tac_toe").new_initial_state()
    state.apply_action(4)
    world = state.sample_world(1, random.Random(0))
    assert world is not state and world.render() == state.render()
    world.apply_action(0)
    assert state.history == [4]


def test_a_game_without_a_resampler_raises_naming_it() -> None:
    state = OpenSpielGame(name="liars_dice").new_initial_state()
    play_randomly_one(state, random.Random(0))
    with pytest.raises(SamplingNotSupportedError, match="liars_dice"):
        state.sample_world(0, random.Random(0))


def test_a_resampler_whose_worlds_cannot_be_checked_is_refused() -> None:
    # gin_rummy's resampler changes hidden cards without rewriting the history: its worlds
    # cannot be checked against what the player saw, and one rebuilt from its history is the
    # true state, so the adapter refuses it rather than hand out unchecked worlds
    game = OpenSpielGame(name="gin_rummy")
    state, rng = game.new_initial_state(), random.Random(0)
    for _ in range(25):
        play_randomly_one(state, rng)
    assert not game.supports_sampling()
    with pytest.raises(SamplingNotSupportedError, match="gin_rummy.*without rewriting the history"):
        state.sample_world(0, random.Random(0))


# -- the public conformance suite -------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params", "playouts"),
    [
        ("tic_tac_toe", {}, 20),
        ("kuhn_poker", {}, 30),
        ("kuhn_poker", {"players": 4}, 10),
        ("leduc_poker", {}, 20),
        ("goofspiel", {"num_cards": 4}, 15),
        ("goofspiel", {"num_cards": 4, "players": 3, "points_order": "descending"}, 10),
        ("oh_hell", {}, 3),
        ("hearts", {}, 2),
        ("matrix_rps", {}, 5),
        ("pathfinding", {}, 2),
    ],
)
def test_wrapped_games_pass_the_conformance_suite(
    name: str, params: dict[str, Any], playouts: int
) -> None:
    report = check_game(OpenSpielGame(name=name, **params), playouts=playouts, seed=11)
    assert report.playouts == playouts and report.states > 0
    if OpenSpielGame(name=name, **params).spec.hidden_information:
        assert report.sampled_worlds > 0 and report.worlds_differing > 0


def test_chance_outcomes_that_cannot_happen_are_not_offered() -> None:
    # pyspiel's hearts with pass_cards=false lists four pass directions at 1/4 each, though only
    # "no pass" is legal: the adapter offers that one, at probability 1
    game = OpenSpielGame(name="hearts", pass_cards=False)
    state = game.new_initial_state()
    assert state.pyspiel_state.chance_outcomes() == [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
    assert state.chance_outcomes() == [(0, 1.0)] and state.legal_actions() == [0]
    with pytest.raises(IllegalActionError):
        state.apply_action(1)
    report = check_game(game, playouts=1, seed=3, sample_every=40)
    assert report.playouts == 1
