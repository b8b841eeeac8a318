"""The PettingZoo environments (omega_cluster/interop/pettingzoo.py): PettingZoo's own API and
seed tests on every built-in game, the rewards are the game's returns, seeds repeat games,
illegal moves and misuse are refused in one line."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test

from omega_cluster.games.errors import GameError, IllegalActionError
from omega_cluster.games.registry import make_game
from omega_cluster.interop.pettingzoo import GameAECEnv, GameParallelEnv, env, parallel_env

TURN_BASED: list[tuple[str, dict[str, Any]]] = [
    ("mexican_train", {"players": 2}),
    ("mexican_train", {"players": 4}),
    ("kuhn_poker", {}),
    ("leduc_poker", {}),
    ("openspiel:tic_tac_toe", {}),
]
IDS = [f"{name}-{params.get('players', 2)}p" for name, params in TURN_BASED]


@pytest.mark.parametrize(("name", "params"), TURN_BASED, ids=IDS)
def test_aec_passes_pettingzoo_api_and_seed_tests(name: str, params: dict[str, Any]) -> None:
    api_test(env(name, **params), num_cycles=60)
    seed_test(lambda: env(name, **params), num_cycles=60)


def test_goofspiel_passes_the_parallel_api_test() -> None:
    parallel_api_test(parallel_env("goofspiel"), num_cycles=40)


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


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    e = env("openspiel:tic_tac_toe")
    e.reset(seed=0)
    e.step(4)
    before = list(e.table.state.history)
    with pytest.raises(IllegalActionError, match=r"illegal action 4 .* legal actions"):
        e.step(4)
    assert e.table.state.history == before
    with pytest.raises(IllegalActionError, match="a float"):
        e.step(1.0)


def test_a_simultaneous_game_needs_the_parallel_environment() -> None:
    with pytest.raises(GameError, match="goofspiel has simultaneous moves: use .*parallel_env"):
        env("goofspiel")


def test_render_is_the_games_text_and_reset_comes_first() -> None:
    e = env("kuhn_poker")
    with pytest.raises(GameError, match="call reset"):
        e.render()
    e.reset(seed=0)
    assert e.render() == e.table.state.render()
    assert e.render_mode == "ansi"


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
