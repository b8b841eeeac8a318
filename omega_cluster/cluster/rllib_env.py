"""RLlib's side of the ecosystem adapters: any game of the contract as a ``MultiAgentEnv`` of
RLlib's new API stack, and the PPO configuration that trains on it with masked actions.

The environment is the same :class:`~omega_cluster.interop.table.GameTable` the PettingZoo
environments use (seeded, chance played inside, the encoder's observations). Agents are
``player_0 ..``; each step returns observations only for the seats that must act next (one in a
turn-based game, every seat at a simultaneous node), and at the end an observation and the
game's return for every seat. An observation is ``{"observation": float32 Box, "action_mask":
float32 Box of 0/1}``: the keys of PettingZoo's classic games and of this project's PettingZoo
environments (:mod:`omega_cluster.interop.pettingzoo`). :class:`MaskingModule` (RLlib's
``ActionMaskingTorchRLModule``, which reads the features under ``"observations"``, made to read
them under ``"observation"``) adds ``log(mask)`` to the logits, so an illegal move is never
sampled. Code written for the earlier key ``"observations"`` reads ``"observation"`` now.

An action the mask forbids ends the game with that agent losing, the convention of PettingZoo's
classic games (:mod:`omega_cluster.interop.table`): RLlib's ``check_multiagent_environments``,
which steps an action drawn without the mask, passes on every game (the tests run it). It is off
when PPO builds: on Mexican Train its unmasked action is illegal, and the warning that ends that
game would open every baseline run as if something were wrong. A value that is not an action of
the space is refused by the contract in one line.
``render()`` returns what the agent to act sees, never every hand.

:func:`ppo_config` is the self-play setting: every seat maps to one shared policy, ``main``,
whose module is :func:`masking_module_spec`.

Only this package imports ray; ``ray[rllib]`` and ``gymnasium`` come with the ``interop`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
    ActionMaskingTorchRLModule,
)
from ray.rllib.utils.typing import MultiAgentDict

from omega_cluster.games.errors import GameError
from omega_cluster.interop.table import GameTable, agent_name, build_game, seat_of

__all__ = ["MAIN_POLICY", "GameMultiAgentEnv", "MaskingModule", "masking_module_spec", "ppo_config"]

MAIN_POLICY = "main"
"""The one policy every seat plays in self-play."""


class GameMultiAgentEnv(MultiAgentEnv):
    """A game as an RLlib multi-agent environment (module docstring).

    ``config``: ``{"game": <registry name>, "params": {<make_game parameters>}}`` — RLlib builds
    the environment from it in each env runner.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config = dict(config or {})
        if "game" not in config:
            raise GameError("GameMultiAgentEnv: env_config needs 'game' (a registry name)")
        self.table = GameTable(build_game(config["game"], config.get("params")))
        self.agents = self.possible_agents = [agent_name(s) for s in range(self.table.num_players)]
        size, actions = self.table.observation_size, self.table.num_actions
        space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0.0, 1.0, (actions,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, gymnasium.spaces.Discrete(actions))

    def reset(  # type: ignore[override]  # multi-agent dicts, not gymnasium's one-agent types
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[MultiAgentDict, MultiAgentDict]:
        self.table.reset(seed)
        return self._observe(self.table.acting()), {}

    def step(  # type: ignore[override]  # gymnasium's one-agent step, as in MultiAgentEnv
        self, action_dict: MultiAgentDict
    ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        acted = [agent_name(s) for s in self.table.acting()]
        self.table.play({seat_of(str(agent)): action for agent, action in action_dict.items()})
        over = self.table.over()
        rewards: MultiAgentDict
        if over:
            seats = tuple(range(self.table.num_players))
            returns = self.table.returns()
            rewards = {agent_name(s): returns[s] for s in seats}
        else:  # RLlib wants a reward for every agent that acted, even a zero one
            seats = self.table.acting()
            rewards = dict.fromkeys(acted, 0.0)
        done: MultiAgentDict = {"__all__": over}
        return self._observe(seats), rewards, done, {"__all__": False}, {}

    def render(self) -> str:  # type: ignore[override]  # the text, as PettingZoo's "ansi"
        return self.table.picture()

    def _observe(self, seats: tuple[int, ...]) -> MultiAgentDict:
        return {
            agent_name(s): {
                "observation": self.table.observation(s),
                "action_mask": self.table.action_mask(s, np.float32),
            }
            for s in seats
        }


_RLLIB_KEY = "observations"  # where ActionMaskingTorchRLModule reads the features


class MaskingModule(ActionMaskingTorchRLModule):
    """RLlib's action-masking PPO module reading the features under ``"observation"``.

    The parent builds its networks from ``observation_space["observations"]`` and pops that key
    from each batch; this module hands it a space and batches with the key renamed, and keeps
    the environment's own space as its ``observation_space`` (what a checkpoint records).
    """

    def __init__(self, *, observation_space: gymnasium.Space | None = None, **kwargs: Any):
        space = observation_space
        if isinstance(space, gymnasium.spaces.Dict) and "observation" in space.spaces:
            renamed = {_RLLIB_KEY if k == "observation" else k: v for k, v in space.items()}
            super().__init__(observation_space=gymnasium.spaces.Dict(renamed), **kwargs)
            self.observation_space = self.observation_space_with_mask = space
        else:
            super().__init__(observation_space=space, **kwargs)

    def _preprocess_batch(self, batch: dict[str, Any], **kwargs: Any) -> Any:
        features = batch[Columns.OBS]
        if isinstance(features, dict) and "observation" in features:
            batch[Columns.OBS] = {
                _RLLIB_KEY if k == "observation" else k: v for k, v in features.items()
            }
        return super()._preprocess_batch(batch, **kwargs)


def masking_module_spec(hidden: tuple[int, ...] = (64, 64)) -> RLModuleSpec:
    """The PPO module that masks illegal actions (:class:`MaskingModule`)."""
    return RLModuleSpec(
        module_class=MaskingModule,
        model_config={"head_fcnet_hiddens": list(hidden), "fcnet_hiddens": list(hidden)},
    )


def _to_main(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    return MAIN_POLICY


def ppo_config(
    game: str,
    params: Mapping[str, Any] | None = None,
    *,
    train_batch_size: int = 4000,
    minibatch_size: int = 128,
    num_epochs: int = 5,
    env_runners: int = 0,
    seed: int = 0,
) -> PPOConfig:
    """PPO self-play on ``game`` (new API stack): every seat plays the shared ``main`` policy
    with the masking module; ``env_runners=0`` samples in the driver's own process."""
    return (
        PPOConfig()
        # RLlib's env check passes (module docstring); off here for its illegal-move warning
        .environment(
            GameMultiAgentEnv,
            env_config={"game": game, "params": dict(params or {})},
            disable_env_checking=True,
        )
        .multi_agent(policies={MAIN_POLICY}, policy_mapping_fn=_to_main)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN_POLICY: masking_module_spec()})
        )
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1)
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
        )
        .debugging(seed=seed)
    )
