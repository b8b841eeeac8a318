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

An action of that space that the mask forbids gets the convention of PettingZoo's classic games
(``TerminateIllegalWrapper``, which their ``env()`` applies): the game ends there, the seat that
made it loses with :func:`illegal_move_return` and every other seat gets 0, and a warning names
the move and the legal set. So a checker that steps an action drawn without the mask (RLlib's
``check_multiagent_environments``, PettingZoo's ``state_test``) sees a game that ends, not an
exception. A value that is not an action of the space at all (a float, a string, an id past
``num_actions``) is refused by the contract in one line, as before.

:meth:`GameTable.full_state` is the whole position as one vector, for centralised critics
(PettingZoo's ``state()``): seat 0's observation, followed (in a game with hidden information)
by what seat 0 cannot see (``State.hidden_state``, laid out as the encoder's ``HiddenSpec``
declares). A game with hidden information whose states give no ``hidden_state`` has no full
state (:attr:`GameTable.full_state_size` is ``None``).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from omega_cluster.games.api import Game, State, is_action
from omega_cluster.games.errors import GameError, IllegalActionError
from omega_cluster.games.registry import make_game
from omega_cluster.games.seat_view import seat_view
from omega_cluster.model.encoders import encoder_for

__all__ = [
    "GameTable",
    "NoFullStateError",
    "agent_name",
    "build_game",
    "illegal_move_return",
    "seat_of",
]

log = logging.getLogger(__name__)

PETTINGZOO_ILLEGAL_REWARD = -1.0
"""What PettingZoo's classic games give a seat for an illegal move (``illegal_reward=-1``)."""


class NoFullStateError(GameError, AttributeError):
    """The game has hidden information and its states give no ``hidden_state``: no full state.
    An ``AttributeError`` too, so ``hasattr(env, "state_space")`` is false for it."""


def agent_name(seat: int) -> str:
    """The agent id of a seat: ``player_0``, ``player_1``, ... (PettingZoo's convention)."""
    return f"player_{seat}"


def seat_of(agent: str) -> int:
    """The seat of an agent id made by :func:`agent_name`."""
    return int(agent.rpartition("_")[2])


def illegal_move_return(game: Game) -> float:
    """The reward of a seat whose move the mask forbids: PettingZoo's -1, or the game's lowest
    return where that is lower (Leduc's -13 chips), so an illegal move never loses less than
    losing the game does."""
    low = game.spec.min_return
    return PETTINGZOO_ILLEGAL_REWARD if low is None else min(PETTINGZOO_ILLEGAL_REWARD, low)


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
        self._forfeited: tuple[int, ...] = ()  # the seats whose illegal move ended this game
        self.full_state_size = self._full_state_size()
        """Length of :meth:`full_state`; ``None``: the game has no full state (module doc)."""

    def _full_state_size(self) -> int | None:
        if not self.game.spec.hidden_information:
            return self.observation_size
        hidden = self.encoder.info().hidden
        return None if hidden is None else self.observation_size + hidden.size

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
        self._forfeited = ()
        self._play_chance()

    def acting(self) -> tuple[int, ...]:
        """The seats that must act now (never chance: it is played inside); ``()`` at the end."""
        return () if self._forfeited else self.state.current_players

    def over(self) -> bool:
        """Whether the game has ended: by its rules, or by an illegal move (module docstring)."""
        return bool(self._forfeited) or self.state.is_terminal()

    def observation(self, seat: int) -> np.ndarray:
        """float32[observation_size]: the seat's view from the game's encoder."""
        return np.asarray(self.encoder.encode_observation(self.state, seat), dtype=np.float32)

    def action_mask(self, seat: int, dtype: Any = np.int8) -> np.ndarray:
        """1 at the seat's legal actions, 0 elsewhere (all 0 when the seat does not act)."""
        mask = np.zeros(self.num_actions, dtype=dtype)
        if seat in self.acting():
            mask[list(self.state.legal_actions(seat))] = 1
        return mask

    def state_size(self) -> int:
        """:attr:`full_state_size`, or :class:`NoFullStateError` naming the game."""
        if self.full_state_size is None:
            raise NoFullStateError(
                f"{self.game.spec.name} has hidden information and its states give no "
                "hidden_state: it has no full state (state() is for games that do)"
            )
        return self.full_state_size

    def full_state(self) -> np.ndarray:
        """float32[full_state_size]: the whole position (module docstring)."""
        size = self.state_size()
        seen = self.observation(0)
        if size == self.observation_size:
            return seen
        hidden = self.state.hidden_state(0)
        if hidden is None:
            raise GameError(f"{self.game.spec.name}: hidden_state(0) gave None at this state")
        return np.concatenate([seen, np.asarray(hidden, dtype=np.float32)])

    def play(self, actions: Mapping[int, Any]) -> None:
        """Apply one action per acting seat (``{seat: action}``), then play chance. An action of
        the space that the mask forbids ends the game (module docstring); any other value the
        contract refuses is refused, naming the move, the seat and the legal set."""
        if self._forfeited:
            raise GameError(
                f"{self.game.spec.name}: the game ended on an illegal move of "
                f"{', '.join(agent_name(s) for s in self._forfeited)}; call reset()"
            )
        acting = self.state.current_players
        missing = [seat for seat in acting if seat not in actions]
        if missing:
            raise GameError(
                f"{self.game.spec.name}: {', '.join(agent_name(s) for s in missing)} must act "
                f"now (acting: {', '.join(agent_name(s) for s in acting)})"
            )
        moves = {seat: _action(actions[seat]) for seat in acting}
        illegal = [seat for seat, a in moves.items() if self._forbidden(seat, a)]
        if illegal:
            self._forfeit(illegal, moves)
        elif len(acting) == 1:
            self.state.apply_action(moves[acting[0]])
        else:
            self.state.apply_joint_action(tuple(moves[seat] for seat in acting))
        self._play_chance()

    def returns(self) -> tuple[float, ...]:
        """The game's returns per seat (the rewards at the end); after an illegal move, the
        penalty for the seats that made one and 0 for the others (module docstring)."""
        if self._forfeited:
            penalty = illegal_move_return(self.game)
            return tuple(penalty if s in self._forfeited else 0.0 for s in range(self.num_players))
        return tuple(float(r) for r in self.state.returns())

    def _forbidden(self, seat: int, action: Any) -> bool:
        """Whether ``action`` is an action of the space that ``seat`` may not take now."""
        return (
            is_action(action)
            and 0 <= int(action) < self.num_actions
            and not self.state.is_legal(seat, int(action))
        )

    def _forfeit(self, seats: list[int], moves: Mapping[int, Any]) -> None:
        self._forfeited = tuple(seats)
        penalty = illegal_move_return(self.game)
        for seat in seats:
            move = int(moves[seat])
            refused = IllegalActionError(self.state, seat, move, self.state.legal_actions(seat))
            log.warning(
                "%s; the game ends with %s losing (reward %s, the convention of PettingZoo's "
                "classic games)",
                refused,
                agent_name(seat),
                penalty,
            )

    def picture(self) -> str:
        """The adapters' ``render()`` text: what the seat to act sees (the first of them at a
        simultaneous node; ``player_0`` once the game is over, with the returns), never every
        hand (:func:`~omega_cluster.games.seat_view.seat_view`)."""
        acting = self.acting()
        seat = acting[0] if acting else 0
        name, agent = self.game.spec.name, agent_name(seat)
        if self.over():
            returns = ", ".join(f"{r:g}" for r in self.returns())
            head = f"{name}: over, returns [{returns}]; what {agent} sees:"
        else:
            head = f"{name}: {agent} to act; what {agent} sees:"
        return f"{head}\n{seat_view(self.state, seat)['text']}"

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
