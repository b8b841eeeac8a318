"""Blind War's encoder: what a player knows, as the network reads it.

Observation (``player``'s view; seats relative to ``player``, so one network plays every seat):

* ``hand`` — the player's own cards, one slot per card of the deck;
* ``gone`` — every card played in an earlier trick (public);
* ``table`` — the cards on the table in the current trick, and ``best`` the highest of them;
* ``position`` — how many players have played to this trick before ``player``, one-hot;
* ``tricks`` — tricks won so far by each seat (relative), as a share of the tricks in a game.

Action features: the card one-hot, and whether it beats every card on the table now (the one
fact a follower's choice turns on). The game's own ``observation`` is a growing move log, which
the generic encoder refuses (it needs a fixed-length vector): this is the encoder hook that the
plugin gives instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import EncoderError, EncoderInfo, LayoutBuilder, Segment

from .game import BlindWarState

__all__ = ["BlindWarEncoder"]


class BlindWarEncoder:
    """Encoder for ``blind_war`` games (one player count and deck per encoder)."""

    name = "blind_war"
    game_name = "blind_war"
    version = 1

    def __init__(self, game: Game) -> None:
        if game.spec.name != self.game_name:
            raise EncoderError(f"BlindWarEncoder serves blind_war, not {game.spec.name}")
        n = self.max_players = game.num_players
        deck = self.deck = int(game.params["deck"])
        self.tricks_per_game = int(game.params["hand"])
        lay = LayoutBuilder()
        self._hand = lay.add("hand", deck, "own cards (card c at c - 1)")
        self._gone = lay.add("gone", deck, "cards played in earlier tricks")
        self._table = lay.add("table", deck, "cards on the table in this trick")
        self._best = lay.add("best", deck, "the highest card on the table, one-hot")
        self._position = lay.add("position", n, "players who played to this trick before me")
        self._tricks = lay.add("tricks", n, "tricks won by relative seat k / tricks per game")
        self.observation_size = lay.size
        self._layout = tuple(lay.segments)
        self.action_feature_size = deck + 1
        self._action_layout = (
            Segment("card", 0, deck, "the card played, one-hot"),
            Segment("beats_table", deck, 1, "1 if it beats every card on the table"),
        )

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={"deck": self.deck},
            observation_layout=self._layout,
            action_layout=self._action_layout,
        )

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        s = _state(state)
        n = self.max_players
        out = np.zeros(self.observation_size, np.float32)
        for card in s.hands[player]:
            out[self._hand + card - 1] = 1.0
        for card in s.table:
            out[self._table + card - 1] = 1.0
        played = len(s.history) - len(s.table)
        for action in s.history[:played]:
            out[self._gone + action] = 1.0
        if s.table:
            out[self._best + max(s.table) - 1] = 1.0
        out[self._position + len(s.table)] = 1.0
        for k in range(n):
            out[self._tricks + k] = s.tricks[(player + k) % n] / self.tricks_per_game
        return out

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        best = max(_state(state).table, default=0)
        out = np.zeros((len(legal), self.action_feature_size), np.float32)
        for row, action in enumerate(legal):
            out[row, action] = 1.0
            out[row, self.deck] = float(action + 1 > best)
        return out


def _state(state: State) -> BlindWarState:
    if not isinstance(state, BlindWarState):
        raise EncoderError(f"BlindWarEncoder needs a BlindWarState, got {type(state).__name__}")
    return state
