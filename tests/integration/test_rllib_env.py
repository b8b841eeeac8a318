"""The RLlib environment (omega_cluster/cluster/rllib_env.py) on a real local Ray: RLlib's own
multi-agent env checker as it is on every game, whole games with masked moves, an action the mask
forbids ending the game as in PettingZoo's classic games, one PPO iteration (new API stack) with
the action-masking module, whose masked moves keep no probability."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from cluster_helpers import fresh_ray
from ecosystem_games import ECOSYSTEM_GAMES, ecosystem_ids, load_example
from ray.rllib.core.columns import Columns
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from omega_cluster.cluster.rllib_env import MAIN_POLICY, GameMultiAgentEnv, ppo_config
from omega_cluster.games.errors import GameError, IllegalActionError

pytestmark = pytest.mark.xdist_group("ray")

load_example("race_to_n")  # examples/ on the path, as a user puts it: PYTHONPATH=examples
load_example("blind_war")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    with fresh_ray():
        yield


@pytest.mark.parametrize(("game", "params"), ECOSYSTEM_GAMES, ids=ecosystem_ids(ECOSYSTEM_GAMES))
def test_rllibs_env_checker_passes(game: str, params: dict[str, Any]) -> None:
    # the checker steps an action drawn without the mask: on Mexican Train (821 action ids) it
    # is illegal, and the game ends with that agent losing (PettingZoo's convention)
    env = GameMultiAgentEnv({"game": game, "params": params})
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


def test_an_action_the_mask_forbids_ends_the_game_with_that_agent_losing() -> None:
    env = GameMultiAgentEnv({"game": "leduc_poker"})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    assert set(obs[agent]) == {"observation", "action_mask"}, "PettingZoo's two keys"
    assert obs[agent]["action_mask"][0] == 0.0, "no fold before a bet"
    obs, rewards, terminated, truncated, _ = env.step({agent: 0})
    assert terminated == {"__all__": True} and truncated == {"__all__": False}
    assert set(obs) == set(env.possible_agents), "every seat sees the end"
    other = next(a for a in env.possible_agents if a != agent)
    assert rewards == {agent: -13.0, other: 0.0}, "the worst loss Leduc has"
    with pytest.raises(IllegalActionError, match="a float"):
        env.reset(seed=0)
        env.step({agent: 1.0})  # not an action of the space: refused in one line
    with pytest.raises(GameError, match="env_config needs 'game'"):
        GameMultiAgentEnv({})


def test_render_shows_the_seat_to_act_not_every_hand() -> None:
    env = GameMultiAgentEnv({"game": "leduc_poker"})
    obs, _ = env.reset(seed=3)
    (agent,) = obs
    text = env.render()
    assert text.startswith(f"leduc_poker: {agent} to act; what {agent} sees:")
    assert text != env.table.state.render()


def test_one_ppo_iteration_with_the_masking_module(ray_cluster: None) -> None:
    # Leduc, not Kuhn: Kuhn's two moves are always both legal, so only Leduc's first decision
    # (no fold before a bet) shows that sampling honours the mask: an unmasked draw would end
    # some games on an illegal move, with its -13 reward (counted below)
    config = ppo_config("leduc_poker", train_batch_size=64, minibatch_size=32, num_epochs=1)
    algo = config.build_algo()
    try:
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 64
        assert result["env_runners"]["num_episodes"] > 0
        # Leduc is zero-sum: every episode's returns add to 0, unless one ended on a move the
        # mask forbids (-13 for the mover, 0 for the other)
        runners = result["env_runners"]
        assert runners["episode_return_min"] == runners["episode_return_max"] == 0.0
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
