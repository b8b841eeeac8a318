"""The PettingZoo environments (omega_cluster/interop/pettingzoo.py): PettingZoo's own checkers
(api_test, parallel_api_test, seed_test, parallel_seed_test, render_test, state_test) on every
built-in game and the examples/ games, the rewards are the game's returns, seeds repeat games,
an action the mask forbids ends the game as PettingZoo's classic games do, render() shows one
seat's view, state() is the full position, misuse is refused in one line."""

from __future__ import annotations

import logging
import random
from typing import Any

import numpy as np
import pytest
from ecosystem_games import ECOSYSTEM_GAMES, ecosystem_ids, load_example
from pettingzoo.test import (
    api_test,
    parallel_api_test,
    parallel_seed_test,
    render_test,
    seed_test,
    state_test,
)
from pettingzoo.test.state_test import test_parallel_env as check_parallel_state

from omega_cluster.games.errors import GameError, IllegalActionError
from omega_cluster.games.registry import make_game
from omega_cluster.interop.pettingzoo import GameAECEnv, GameParallelEnv, env, parallel_env
from omega_cluster.interop.table import NoFullStateError

load_example("race_to_n")  # examples/ on the path, as a user puts it: PYTHONPATH=examples
load_example("blind_war")

TURN_BASED = [(n, p) for n, p in ECOSYSTEM_GAMES if not make_game(n, **p).spec.simultaneous]
IDS = ecosystem_ids(TURN_BASED)
EVERY_GAME, EVERY_ID = ECOSYSTEM_GAMES, ecosystem_ids(ECOSYSTEM_GAMES)
NO_FULL_STATE = {"blind_war:BlindWarGame"}  # hidden information, no State.hidden_state


@pytest.mark.parametrize(("name", "params"), TURN_BASED, ids=IDS)
def test_aec_passes_pettingzoo_api_seed_and_render_tests(name: str, params: dict[str, Any]) -> None:
    api_test(env(name, **params), num_cycles=60)
    seed_test(lambda: env(name, **params), num_cycles=60)
    render_test(lambda render_mode=None: env(name, render_mode=render_mode, **params))


@pytest.mark.parametrize(("name", "params"), EVERY_GAME, ids=EVERY_ID)
def test_parallel_passes_pettingzoo_parallel_api_and_seed_tests(
    name: str, params: dict[str, Any]
) -> None:
    parallel_api_test(parallel_env(name, **params), num_cycles=40)
    # it samples its actions without the mask: an illegal one ends the game, as in PettingZoo
    parallel_seed_test(lambda: parallel_env(name, **params), num_cycles=40)


@pytest.mark.parametrize(
    ("name", "params"),
    [(n, p) for n, p in TURN_BASED if n not in NO_FULL_STATE],
    ids=[i for i, (n, _) in zip(IDS, TURN_BASED, strict=True) if n not in NO_FULL_STATE],
)
def test_pettingzoo_state_test_passes_where_the_game_has_a_full_state(
    name: str, params: dict[str, Any]
) -> None:
    # state_test steps actions drawn without the mask, so this also runs the illegal-move path
    state_test(env(name, **params), parallel_env(name, **params), num_cycles=20)


def test_a_simultaneous_games_parallel_state_passes_pettingzoos_check() -> None:
    # state_test needs an AEC environment too, which Goofspiel has not: its parallel part
    check_parallel_state(parallel_env("goofspiel"))
    e = parallel_env("goofspiel")
    e.reset(seed=1)
    np.testing.assert_array_equal(e.state(), e.table.observation(0))


def _play_aec(e: GameAECEnv, seed: int) -> tuple[list[Any], dict[str, float]]:
    """One whole game with random legal moves; the trace and the rewards summed per agent."""
    e.reset(seed=seed)
    moves = random.Random(seed)
    trace: list[Any] = []
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        total[agent] += reward
        assert not truncated
        if terminated:
            e.step(None)
            continue
        assert reward == 0.0, "no reward before the end"
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0
        action = int(moves.choice(list(legal)))
        trace.append((agent, action, obs["observation"].tobytes()))
        e.step(action)
    return trace, total


@pytest.mark.parametrize(("name", "params"), TURN_BASED, ids=IDS)
def test_aec_rewards_are_the_games_returns_and_seeds_repeat(
    name: str, params: dict[str, Any]
) -> None:
    e = env(name, **params)
    trace, total = _play_aec(e, seed=3)
    assert e.agents == []
    returns = e.table.returns()
    assert total == {f"player_{i}": r for i, r in enumerate(returns)}
    assert any(r != 0.0 for r in returns)
    again, _ = _play_aec(env(name, **params), seed=3)
    assert again == trace


def test_aec_masks_match_the_legal_actions_and_observations_the_encoder() -> None:
    e = env("mexican_train", players=4)
    e.reset(seed=11)
    state = e.table.state
    seat = state.current_players[0]
    obs = e.observe(f"player_{seat}")
    assert e.agent_selection == f"player_{seat}"
    assert list(np.flatnonzero(obs["action_mask"])) == list(state.legal_actions(seat))
    np.testing.assert_array_equal(
        obs["observation"], e.table.encoder.encode_observation(state, seat)
    )
    other = f"player_{(seat + 1) % 4}"
    assert not e.observe(other)["action_mask"].any(), "a seat that does not act has no move"


def test_a_different_seed_deals_another_game() -> None:
    first, _ = _play_aec(env("mexican_train", players=2), seed=1)
    second, _ = _play_aec(env("mexican_train", players=2), seed=2)
    assert first[0][2] != second[0][2]


def test_chance_is_played_inside_the_environment() -> None:
    e = env("leduc_poker")
    e.reset(seed=5)
    assert not e.table.state.is_chance_node()
    e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    assert not e.table.state.is_chance_node()


def test_an_action_the_mask_forbids_ends_the_game_with_that_agent_losing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    e = env("openspiel:tic_tac_toe")
    e.reset(seed=0)
    e.step(4)
    assert e.agent_selection == "player_1"
    with caplog.at_level(logging.WARNING, logger="omega_cluster.interop.table"):
        e.step(4)  # taken: PettingZoo's classic games end the game, the mover losing with -1
    (warning,) = caplog.messages
    assert "illegal action 4" in warning and "player_1 losing" in warning
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards == {"player_0": 0.0, "player_1": -1.0}
    left = {}
    for agent in e.agent_iter():  # both step out with None
        left[agent] = e.last()[1]
        e.step(None)
    assert left == {"player_1": -1.0, "player_0": 0.0} and e.agents == []
    with pytest.raises(GameError, match="the game ended on an illegal move of player_1"):
        e.table.play({1: 0})


def test_the_penalty_is_never_milder_than_losing_the_game() -> None:
    e = env("leduc_poker")  # returns in chips, down to -13: an illegal move costs that much
    e.reset(seed=0)
    agent = e.agent_selection
    assert e.observe(agent)["action_mask"][0] == 0, "no fold before a bet"
    e.step(0)
    assert e.rewards[agent] == make_game("leduc_poker").spec.min_return == -13.0
    assert sum(e.rewards.values()) == -13.0


def test_a_value_outside_the_action_space_is_refused_and_changes_nothing() -> None:
    e = env("openspiel:tic_tac_toe")
    e.reset(seed=0)
    e.step(4)
    before = list(e.table.state.history)
    with pytest.raises(IllegalActionError, match="a float"):
        e.step(1.0)
    with pytest.raises(IllegalActionError, match="illegal action 9 "):
        e.step(9)  # past the 9 squares: not an action of the space
    assert e.table.state.history == before and not e.table.over()


def test_a_parallel_step_with_a_forbidden_action_ends_the_game() -> None:
    e = parallel_env("goofspiel")
    obs, _ = e.reset(seed=0)
    mask = obs["player_0"]["action_mask"]
    played = int(np.flatnonzero(mask)[0])
    obs, *_ = e.step({"player_0": played, "player_1": played})
    assert obs["player_0"]["action_mask"][played] == 0, "a bid card is spent"
    _, rewards, terminations, _, _ = e.step({"player_0": played, "player_1": played})
    assert rewards == {"player_0": -1.0, "player_1": -1.0}
    assert all(terminations.values()) and e.agents == []


def test_a_simultaneous_game_needs_the_parallel_environment() -> None:
    with pytest.raises(GameError, match="goofspiel has simultaneous moves: use .*parallel_env"):
        env("goofspiel")


def test_render_shows_what_the_agent_to_act_sees_never_every_hand() -> None:
    e = env("mexican_train", render_mode="ansi", players=2)
    with pytest.raises(GameError, match="call reset"):
        e.render()
    e.reset(seed=0)
    state = e.table.state
    seat = state.current_players[0]
    text = e.render()
    assert isinstance(text, str)
    assert text.startswith(f"mexican_train: player_{seat} to act; what player_{seat} sees:")
    tiles = state.game.tiles
    mine = [tiles.name(t) for t in tiles.mask_tiles(state.hands[seat])]
    theirs = [tiles.name(t) for t in tiles.mask_tiles(state.hands[1 - seat])]
    assert all(name in text for name in mine)
    assert not any(name in text for name in theirs), "the other hand stays hidden"
    assert all(name in state.render() for name in theirs), "(which the state's own render shows)"


def test_render_modes_follow_pettingzoos_convention(capsys: pytest.CaptureFixture[str]) -> None:
    quiet = env("kuhn_poker")
    quiet.reset(seed=0)
    assert quiet.render_mode is None and quiet.render() is None
    assert quiet.metadata["render_modes"] == ["ansi", "human"]
    shown = env("kuhn_poker", render_mode="human")
    shown.reset(seed=0)
    capsys.readouterr()
    assert shown.render() is None
    assert capsys.readouterr().out.startswith("kuhn_poker: player_0 to act")
    shown.step(0)  # "human" draws after every step, as the classic games do
    assert "player_1 to act" in capsys.readouterr().out
    over = parallel_env("kuhn_poker", render_mode="ansi")
    over.reset(seed=0)
    over.step({"player_0": 0, "player_1": 0})
    over.step({"player_0": 0, "player_1": 0})
    text = over.render()
    assert text is not None and text.startswith("kuhn_poker: over, returns [")
    with pytest.raises(GameError, match=r"render_mode='rgb_array' is not one of: None, 'ansi'"):
        env("kuhn_poker", render_mode="rgb_array")


def test_state_is_seat_0s_view_and_what_it_cannot_see() -> None:
    e = env("mexican_train", players=2)
    e.reset(seed=5)
    state, size = e.table.state, e.table.observation_size
    full = e.state()
    assert e.state_space.shape == full.shape == (size + 91,)
    assert e.state_space.contains(full) and e.state_space is e.state_space
    np.testing.assert_array_equal(full[:size], e.table.observation(0))
    codes = full[size:]
    # the locations of the 91 tiles as seat 0 cannot see them: 1 boneyard, 2 the other hand
    assert int((codes == 1).sum()) == len(state.boneyard)
    assert int((codes == 2).sum()) == state.hands[1].bit_count()
    tic = env("openspiel:tic_tac_toe")  # perfect information: seat 0's view is everything
    tic.reset(seed=0)
    np.testing.assert_array_equal(tic.state(), tic.table.observation(0))


def test_a_game_without_a_full_state_says_so() -> None:
    e = env("blind_war:BlindWarGame")
    e.reset(seed=0)
    assert not hasattr(e, "state_space")
    with pytest.raises(NoFullStateError, match="blind_war has hidden information .* no full"):
        e.state()


def test_unknown_parameters_are_the_registrys_one_line_error() -> None:
    with pytest.raises(GameError, match="unknown parameter"):
        env("kuhn_poker", seats=3)


def _play_parallel(e: GameParallelEnv, seed: int) -> tuple[list[Any], dict[str, float]]:
    obs, _ = e.reset(seed=seed)
    moves = random.Random(seed)
    trace: list[Any] = []
    total = dict.fromkeys(e.possible_agents, 0.0)
    while e.agents:
        # a seat that does not act at this node (all-zero mask) hands any action: it is ignored
        actions = {
            a: int(moves.choice(list(np.flatnonzero(obs[a]["action_mask"])) or [0]))
            for a in e.agents
        }
        trace.append(actions)
        obs, rewards, terminations, truncations, _ = e.step(actions)
        for a, r in rewards.items():
            total[a] += r
        assert not any(truncations.values())
        assert all(terminations.values()) == (not e.agents)
    return trace, total


def test_parallel_rewards_are_the_returns_and_seeds_repeat() -> None:
    e = parallel_env("goofspiel")
    trace, total = _play_parallel(e, seed=4)
    assert 10 < len(trace) <= make_game("goofspiel").spec.max_game_length
    assert total == {f"player_{i}": r for i, r in enumerate(e.table.returns())}
    assert sorted(total.values()) == [-1.0, 1.0] or set(total.values()) == {0.0}
    again, _ = _play_parallel(parallel_env("goofspiel"), seed=4)
    assert again == trace
    # the point cards come from the seeded rng: another seed turns another card first
    firsts = {
        parallel_env("goofspiel").reset(seed=s)[0]["player_0"]["observation"].tobytes()
        for s in range(6)
    }
    assert len(firsts) > 1


def test_parallel_refuses_a_missing_action_in_one_line() -> None:
    e = parallel_env("goofspiel")
    e.reset(seed=0)
    with pytest.raises(GameError, match="player_1 must act now"):
        e.step({"player_0": 0})


def test_a_turn_based_game_runs_in_the_parallel_environment_too() -> None:
    e = parallel_env("kuhn_poker")
    _, total = _play_parallel(e, seed=2)
    assert sum(total.values()) == 0.0 and total["player_0"] != 0.0
