"""The RLlib environment (omega_cluster/cluster/rllib_env.py) on a real local Ray: RLlib's own
multi-agent env checker, whole games with masked moves, one PPO iteration (new API stack) with
the action-masking module, whose masked moves keep no probability."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from cluster_helpers import fresh_ray
from ray.rllib.core.columns import Columns
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from omega_cluster.cluster.rllib_env import MAIN_POLICY, GameMultiAgentEnv, ppo_config
from omega_cluster.games.errors import GameError, IllegalActionError

pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    with fresh_ray():
        yield


# RLlib's checker steps with an action drawn without the mask: these games allow every action at
# their first decision (Leduc may not fold there, Mexican Train has 821 action ids), the others
# are played below with masked moves
@pytest.mark.parametrize("game", ["kuhn_poker", "goofspiel", "openspiel:tic_tac_toe"])
def test_rllibs_env_checker_passes(game: str) -> None:
    env = GameMultiAgentEnv({"game": game})
    for i, agent in enumerate(env.possible_agents):
        env.action_spaces[agent].seed(i)
    check_multiagent_environments(env)


def _play(env: GameMultiAgentEnv, seed: int) -> tuple[int, dict[str, float]]:
    """One whole game with random legal moves; its steps and the rewards summed per agent."""
    moves = random.Random(seed)
    obs, _ = env.reset(seed=seed)
    total: dict[str, float] = {}
    steps, done = 0, False
    while not done:
        for agent, o in obs.items():
            assert env.observation_spaces[agent].contains(o), agent
        actions = {a: moves.choice(list(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
        obs, rewards, terminated, truncated, _ = env.step(actions)
        for agent, r in rewards.items():
            total[agent] = total.get(agent, 0.0) + r
        done, steps = terminated["__all__"], steps + 1
        assert not truncated["__all__"]
    assert set(obs) == set(env.possible_agents), "every seat sees the end"
    return steps, total


@pytest.mark.parametrize(
    ("game", "params"),
    [("mexican_train", {"players": 4}), ("leduc_poker", {}), ("goofspiel", {})],
)
def test_whole_games_end_with_the_returns_as_rewards(game: str, params: dict[str, Any]) -> None:
    env = GameMultiAgentEnv({"game": game, "params": params})
    steps, total = _play(env, seed=7)
    assert steps >= 2
    assert total == {f"player_{i}": r for i, r in enumerate(env.table.returns())}
    assert _play(GameMultiAgentEnv({"game": game, "params": params}), seed=7) == (steps, total)


def test_an_illegal_action_is_refused() -> None:
    env = GameMultiAgentEnv({"game": "leduc_poker"})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    assert obs[agent]["action_mask"][0] == 0.0, "no fold before a bet"
    with pytest.raises(IllegalActionError, match="illegal action 0"):
        env.step({agent: 0})
    with pytest.raises(GameError, match="env_config needs 'game'"):
        GameMultiAgentEnv({})


def test_one_ppo_iteration_with_the_masking_module(ray_cluster: None) -> None:
    # Leduc, not Kuhn: Kuhn's two moves are always both legal, so only Leduc's first decision
    # (no fold before a bet) shows that sampling honours the mask: an unmasked draw would hand
    # the environment an illegal move, which it refuses, and the iteration would fail
    config = ppo_config("leduc_poker", train_batch_size=64, minibatch_size=32, num_epochs=1)
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 64
        assert result["env_runners"]["num_episodes"] > 0
        assert np.isfinite(result["learners"][MAIN_POLICY]["total_loss"])
        module = algo.get_module(MAIN_POLICY)
        env = GameMultiAgentEnv({"game": "leduc_poker"})
        obs, _ = env.reset(seed=1)
        (first,) = obs.values()
        batch = {
            Columns.OBS: {
                key: torch.as_tensor(np.stack([value] * 4)) for key, value in first.items()
            }
        }
        with torch.no_grad():
            logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        probs = torch.softmax(logits, dim=-1).numpy()
        assert np.all(probs[:, 0] < 1e-6), "fold is masked at the first decision"
        assert np.allclose(probs.sum(axis=1), 1.0)
    finally:
        algo.stop()
