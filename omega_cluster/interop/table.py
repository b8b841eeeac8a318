"""One game at a time for the environment adapters: seeded, chance played inside, each seat's
observation vector and action mask.

The reinforcement-learning libraries see a game as agents that observe, act and are rewarded;
the contract sees states, acting seats and chance. :class:`GameTable` is the part every adapter
shares (the PettingZoo environments here, the RLlib one in ``cluster/``): it owns the state, a
``random.Random`` that ``reset(seed)`` reseeds (it draws the game seed, which fixes the implicit
chance of a game like Mexican Train, and every explicit chance outcome), and it plays chance
nodes itself, so an agent only ever sees a seat that must decide. An observation is the seat's
vector from the game's encoder (the one a network of this project is trained on); the action
mask marks the seat's legal actions in the game's fixed action space (``spec.num_actions``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.errors import GameError
from omega_cluster.games.registry import make_game
from omega_cluster.model.encoders import encoder_for

__all__ = ["GameTable", "agent_name", "build_game", "seat_of"]


def agent_name(seat: int) -> str:
    """The agent id of a seat: ``player_0``, ``player_1``, ... (PettingZoo's convention)."""
    return f"player_{seat}"


def seat_of(agent: str) -> int:
    """The seat of an agent id made by :func:`agent_name`."""
    return int(agent.rpartition("_")[2])


def build_game(game: Game | str, params: Mapping[str, Any] | None = None) -> Game:
    """``game`` itself, or the game the registry builds from its name and ``params``."""
    if isinstance(game, Game):
        if params:
            raise GameError(f"{game.spec.name}: parameters go to make_game, not with a built game")
        return game
    return make_game(game, **dict(params or {}))


class GameTable:
    """The state of one game between resets, and what each seat sees of it."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.encoder = encoder_for(game)
        self.num_players = game.num_players
        self.num_actions = game.spec.num_actions
        self.observation_size = self.encoder.observation_size
        self.rng = random.Random()
        self._state: State | None = None

    @property
    def state(self) -> State:
        if self._state is None:
            raise GameError(f"{self.game.spec.name}: call reset() before using the environment")
        return self._state

    def reset(self, seed: int | None = None) -> None:
        """A new game: ``seed`` reseeds the table's rng (``None`` keeps its stream going, so
        successive games differ); chance at the start is played out."""
        if seed is not None:
            self.rng.seed(int(seed))
        self._state = self.game.new_initial_state(self.rng.randrange(2**31))
        self._play_chance()

    def acting(self) -> tuple[int, ...]:
        """The seats that must act now (never chance: it is played inside); ``()`` at the end."""
        return self.state.current_players

    def over(self) -> bool:
        return self.state.is_terminal()

    def observation(self, seat: int) -> np.ndarray:
        """float32[observation_size]: the seat's view from the game's encoder."""
        return np.asarray(self.encoder.encode_observation(self.state, seat), dtype=np.float32)

    def action_mask(self, seat: int, dtype: Any = np.int8) -> np.ndarray:
        """1 at the seat's legal actions, 0 elsewhere (all 0 when the seat does not act)."""
        mask = np.zeros(self.num_actions, dtype=dtype)
        if seat in self.state.current_players:
            mask[list(self.state.legal_actions(seat))] = 1
        return mask

    def play(self, actions: Mapping[int, Any]) -> None:
        """Apply one action per acting seat (``{seat: action}``) through the contract, which
        refuses an illegal one naming the move, the seat and the legal set; then play chance."""
        acting = self.state.current_players
        missing = [seat for seat in acting if seat not in actions]
        if missing:
            raise GameError(
                f"{self.game.spec.name}: {', '.join(agent_name(s) for s in missing)} must act "
                f"now (acting: {', '.join(agent_name(s) for s in acting)})"
            )
        if len(acting) == 1:
            self.state.apply_action(_action(actions[acting[0]]))
        else:
            self.state.apply_joint_action(tuple(_action(actions[seat]) for seat in acting))
        self._play_chance()

    def returns(self) -> tuple[float, ...]:
        """The game's returns per seat (the rewards at the end)."""
        return tuple(float(r) for r in self.state.returns())

    def render(self) -> str:
        return self.state.render()

    def _play_chance(self) -> None:
        state = self.state
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            actions = [a for a, _ in outcomes]
            weights = [p for _, p in outcomes]
            state.apply_action(self.rng.choices(actions, weights)[0])


def _action(value: Any) -> Any:
    """A 0-d numpy array (what some libraries hand back) as its scalar; anything else as is,
    for the contract to accept (an int or numpy integer) or refuse in one line."""
    if isinstance(value, np.ndarray) and value.shape == ():
        return value[()]
    return value
