"""PettingZoo environments for any game of the contract.

* :class:`GameAECEnv` (``env(name, render_mode=None, **params)``) — turn-based games as an AEC
  environment: one agent acts at a time, chance is played inside with the seeded rng
  (:mod:`.table`);
* :class:`GameParallelEnv` (``parallel_env(name, render_mode=None, **params)``) — simultaneous
  games (Goofspiel): every live agent hands an action each step; those of seats that do not act
  at that node (all zero mask) are ignored.

Agents are ``player_0 .. player_{n-1}`` (seat order). Each observation is
``{"observation": float32 Box, "action_mask": int8 Box of 0/1}`` over the game's fixed action
space, as in PettingZoo's classic games, so ``action_space(agent).sample(mask)`` draws a legal
move (the RLlib environment uses the same two keys). Rewards are 0 until the end, then the game's
returns. An action the mask forbids ends the game with that agent losing, as PettingZoo's classic
games do (:mod:`.table`); a value that is not an action of the space is refused in one line.
``reset(seed=s)`` makes the games that follow repeat exactly.

Rendering follows PettingZoo's convention: ``metadata["render_modes"]`` is ``["ansi", "human"]``;
``render_mode=None`` (the default) renders nothing, ``"ansi"`` returns the text, ``"human"``
prints it (after every step too, as the classic games do). The text is what the agent to act
sees (:meth:`.table.GameTable.picture`), never every hand. ``state()`` and ``state_space`` give
the whole position for centralised critics where the game has one (:meth:`.table.GameTable.
full_state`: every game with perfect information, and those whose states give ``hidden_state``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from omega_cluster.games.api import Game
from omega_cluster.games.errors import GameError
from omega_cluster.interop.table import GameTable, agent_name, build_game, seat_of

__all__ = ["RENDER_MODES", "GameAECEnv", "GameParallelEnv", "env", "parallel_env"]

Observation = dict[str, np.ndarray]

RENDER_MODES = ("ansi", "human")
"""``metadata["render_modes"]``; ``render_mode=None`` renders nothing (PettingZoo's default)."""


def env(game: Game | str, render_mode: str | None = None, **params: Any) -> GameAECEnv:
    """The AEC environment of a turn-based game, built by name (``make_game(name, **params)``)."""
    return GameAECEnv(build_game(game, params), render_mode=render_mode)


def parallel_env(
    game: Game | str, render_mode: str | None = None, **params: Any
) -> GameParallelEnv:
    """The parallel environment of a game (made for simultaneous ones), built by name."""
    return GameParallelEnv(build_game(game, params), render_mode=render_mode)


def _spaces(
    table: GameTable, agents: list[str]
) -> tuple[dict[str, gymnasium.spaces.Dict], dict[str, gymnasium.spaces.Discrete]]:
    """One observation space and one action space object per agent (the tests ask for the very
    same object on every call, so seeding a space sticks)."""
    obs = {
        agent: gymnasium.spaces.Dict(
            {
                # encoders do not declare bounds: their features are counts and fractions
                "observation": gymnasium.spaces.Box(
                    -np.inf, np.inf, (table.observation_size,), np.float32
                ),
                "action_mask": gymnasium.spaces.Box(0, 1, (table.num_actions,), np.int8),
            }
        )
        for agent in agents
    }
    act: dict[str, gymnasium.spaces.Discrete] = {
        agent: gymnasium.spaces.Discrete(table.num_actions) for agent in agents
    }
    return obs, act


class _Spaces:
    """What both environments share: the table, the agents, their spaces, rendering, state."""

    metadata: dict[str, Any]
    render_mode: str | None

    def _setup(self, game: Game, render_mode: str | None) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            modes = ", ".join(repr(m) for m in (None, *RENDER_MODES))
            raise GameError(f"render_mode={render_mode!r} is not one of: {modes}")
        self.render_mode = render_mode
        self.game = game
        self.table = GameTable(game)
        self.possible_agents = [agent_name(s) for s in range(game.num_players)]
        self.agents = list(self.possible_agents)
        self.observation_spaces, self.action_spaces = _spaces(self.table, self.possible_agents)
        self.metadata = {"name": game.spec.name, "render_modes": list(RENDER_MODES)}
        self._state_space: gymnasium.spaces.Box | None = None

    @property
    def state_space(self) -> gymnasium.spaces.Box:
        """The space of :meth:`state` (the game's full state; module docstring); the same
        object on every call. A game without one raises ``NoFullStateError`` (an
        ``AttributeError`` too: ``hasattr(env, "state_space")`` is false)."""
        if self._state_space is None:
            size = self.table.state_size()
            self._state_space = gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32)
        return self._state_space

    def state(self) -> np.ndarray:
        """The whole position as one vector, for a centralised critic (module docstring)."""
        return self.table.full_state()

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]

    def _observe(self, agent: str) -> Observation:
        seat = seat_of(agent)
        return {
            "observation": self.table.observation(seat),
            "action_mask": self.table.action_mask(seat),
        }

    def render(self) -> str | None:
        """The text of what the agent to act sees: returned (``"ansi"``), printed
        (``"human"``), or nothing with a warning (``None``), as PettingZoo's classic games."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        text = self.table.picture()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _after_step(self) -> None:
        if self.render_mode == "human":
            self.render()

    def close(self) -> None:
        """Nothing to release (no window, no process)."""

    def __str__(self) -> str:
        return self.game.spec.name


class GameAECEnv(_Spaces, AECEnv[str, Observation, int]):
    """A turn-based game as a PettingZoo AEC environment (module docstring)."""

    def __init__(self, game: Game, render_mode: str | None = None) -> None:
        super().__init__()
        if game.spec.simultaneous:
            raise GameError(
                f"{game.spec.name} has simultaneous moves: use "
                "omega_cluster.interop.pettingzoo.parallel_env for it"
            )
        self._setup(game, render_mode)
        self.metadata["is_parallelizable"] = False

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.table.reset(seed)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._select()

    def observe(self, agent: str) -> Observation:
        return self._observe(agent)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self.table.play({seat_of(agent): action})
        self._cumulative_rewards[agent] = 0.0
        if self.table.over():
            returns = self.table.returns()
            for a in self.agents:
                self.rewards[a] = returns[seat_of(a)]
                self.terminations[a] = True
        else:
            self._clear_rewards()
        self._select()
        self._accumulate_rewards()
        self._after_step()

    def _select(self) -> None:
        """The agent to act: the acting seat, or at the end the agents in seat order (each
        steps once with ``None`` to leave)."""
        acting = self.table.acting()
        if acting:
            self.agent_selection = agent_name(acting[0])
        else:
            self.agent_selection = self.agents[0]


class GameParallelEnv(_Spaces, ParallelEnv[str, Observation, int]):
    """A game, simultaneous or not, as a PettingZoo parallel environment (module docstring)."""

    def __init__(self, game: Game, render_mode: str | None = None) -> None:
        self._setup(game, render_mode)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        self.table.reset(seed)
        self.agents = list(self.possible_agents)
        return {a: self._observe(a) for a in self.agents}, {a: {} for a in self.agents}

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, Observation],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        acting = self.table.acting()
        self.table.play(
            {seat: actions[agent_name(seat)] for seat in acting if agent_name(seat) in actions}
        )
        live = list(self.agents)
        over = self.table.over()
        returns = self.table.returns() if over else (0.0,) * self.table.num_players
        observations = {a: self._observe(a) for a in live}
        rewards = {a: returns[seat_of(a)] for a in live}
        terminations = dict.fromkeys(live, over)
        truncations = dict.fromkeys(live, False)
        infos: dict[str, dict[str, Any]] = {a: {} for a in live}
        if over:
            self.agents = []
        self._after_step()
        return observations, rewards, terminations, truncations, infos
