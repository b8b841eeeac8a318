"""The generic encoder: the network inputs of a game that brings no encoder of its own.

A game's ``State.observation(player)`` is any immutable value; when it is a fixed-length vector of
numbers (an int, a float, a bool, a numpy array, or tuples/lists of these, nested), this encoder
flattens it into the observation, after the player's seat as a one-hot (the network's values are
seat-relative, so it must know whose view it reads). Action features are the action id one-hot
over the game's fixed action space (``spec.num_actions``).

"Fixed length" is checked when the encoder is built, on every decision of a few random playouts,
and again on every position it encodes: an observation that grows with the game (a move log) or
holds text is refused with an error naming the game, because a network needs one input size. Such
a game gives its plugin an ``encoder`` hook instead (``examples/blind_war/`` shows one). The
generic encoder is a baseline that makes any such game trainable, not a good representation:
an encoder that knows the game (one-hot cards, seat-relative views) learns much faster.

Hidden state (``info().hidden``, the records' training-only column): a ``"vector"`` of the size
``State.hidden_state`` gives at every probed decision, when it gives one of a single size; else
none.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from numbers import Real
from typing import Any

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import (
    EncoderError,
    EncoderInfo,
    HiddenSpec,
    LayoutBuilder,
    Segment,
)

__all__ = ["GenericEncoder", "flatten_observation"]

PROBE_PLAYOUTS = 3  # random playouts whose every decision checks the observation's length
PROBE_STEPS = 400  # at most this many moves in all (long games are probed on their opening)


class _NotNumeric(TypeError):
    """An observation part that is not a number, a numpy array or a sequence of them."""


def flatten_observation(value: Any) -> list[float]:
    """``value`` as a flat list of floats (numbers, bools, numpy arrays and nested sequences)."""
    out: list[float] = []
    _flatten(value, out)
    return out


def _flatten(value: Any, out: list[float]) -> None:
    if isinstance(value, np.ndarray):
        if not np.issubdtype(value.dtype, np.number) and value.dtype != np.bool_:
            raise _NotNumeric(f"a numpy array of dtype {value.dtype}")
        out.extend(value.astype(np.float64).ravel().tolist())
    elif isinstance(value, (bool, np.bool_, Real, np.number)):
        out.append(float(value))
    elif isinstance(value, (tuple, list)):
        for item in value:
            _flatten(item, out)
    else:
        raise _NotNumeric(f"a {type(value).__name__} ({value!r:.40})")


class GenericEncoder:
    """Seat one-hot + the flattened observation; the action id one-hot (see the module doc)."""

    name = "generic"
    version = 1

    def __init__(self, game: Game) -> None:
        self.game_name = game.spec.name
        n = self.max_players = game.num_players
        self.num_actions = game.spec.num_actions
        self._length, hidden = _probe_length(game)
        self._hidden = None if hidden is None else HiddenSpec("vector", hidden, 0, "game-defined")
        lay = LayoutBuilder()
        self._o_seat = lay.add("seat", n, "the player's seat (absolute), one-hot")
        self._o_obs = lay.add(
            "observation", self._length, "State.observation(player), flattened to numbers"
        )
        self.observation_size = lay.size
        self._layout = tuple(lay.segments)
        self.action_feature_size = self.num_actions
        self._action_layout = (Segment("action_id", 0, self.num_actions, "the action id, one-hot"),)

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={"observation_length": self._length},
            observation_layout=self._layout,
            action_layout=self._action_layout,
            hidden=self._hidden,
        )

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        values = _observation_values(self.game_name, state, player)
        if len(values) != self._length:
            raise EncoderError(
                f"the generic encoder cannot serve game {self.game_name!r}: the observation of "
                f"player {player} has {len(values)} numbers here, {self._length} in the "
                "playouts it was built on; give the game's plugin an encoder hook"
            )
        out = np.zeros(self.observation_size, np.float32)
        out[self._o_seat + player] = 1.0
        out[self._o_obs :] = values
        return out

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        out = np.zeros((len(legal), self.num_actions), np.float32)
        out[np.arange(len(legal)), np.fromiter(legal, np.intp, len(legal))] = 1.0
        return out


def _observation_values(game_name: str, state: State, player: int) -> list[float]:
    try:
        return flatten_observation(state.observation(player))
    except _NotNumeric as err:
        raise EncoderError(
            f"the generic encoder cannot serve game {game_name!r}: its observation is not "
            f"numeric (it holds {err}); give the game's plugin an encoder hook"
        ) from None


def _probe_length(game: Game) -> tuple[int, int | None]:
    """The observation's length, the same at every decision of a few random playouts, and the
    hidden state's size where it is one size at all of them (else None)."""
    name = game.spec.name
    lengths: dict[int, tuple[int, int]] = {}  # length -> (playout, move) where first seen
    hidden: set[int | None] = set()  # sizes of State.hidden_state (None: the game gave none)
    steps = 0
    for playout in range(PROBE_PLAYOUTS):
        rng = random.Random(playout)
        state = game.new_initial_state(seed=playout)
        move = 0
        while not state.is_terminal() and steps < PROBE_STEPS:
            deciding = () if state.is_chance_node() else state.current_players
            for player in deciding:
                length = len(_observation_values(name, state, player))
                lengths.setdefault(length, (playout, move))
                vector = state.hidden_state(player)
                hidden.add(None if vector is None else int(np.size(vector)))
            _random_step(state, rng)
            move, steps = move + 1, steps + 1
    if not lengths:
        raise EncoderError(f"game {name!r}: no decision in {PROBE_PLAYOUTS} random playouts")
    if len(lengths) > 1:
        seen = ", ".join(f"{n} (playout {p}, move {m})" for n, (p, m) in sorted(lengths.items()))
        raise EncoderError(
            f"the generic encoder cannot serve game {name!r}: its observation is not "
            f"fixed-length ({seen} numbers); give the game's plugin an encoder hook"
        )
    size = next(iter(hidden)) if len(hidden) == 1 else None
    return next(iter(lengths)), size or None


def _random_step(state: State, rng: random.Random) -> None:
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        actions = [a for a, _ in outcomes]
        state.apply_action(rng.choices(actions, weights=[p for _, p in outcomes])[0])
    elif state.is_simultaneous_node():
        state.apply_joint_action(
            [rng.choice(state.legal_actions(p)) for p in state.current_players]
        )
    else:
        state.apply_action(rng.choice(state.legal_actions()))
