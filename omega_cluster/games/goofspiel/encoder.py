"""Goofspiel encoder: the bidding player's view, seat-relative, as compact bit vectors.

Observation: the point card being bid for (one-hot), the point cards not yet turned, own hand,
the other seats' hands in relative order (zeros with ``imp_info``, where they are hidden), points
per relative seat (× 1/total points), and per finished turn who won it (relative seat, or a tie)
and, with ``imp_info``, the player's own bid (× 1/num_cards) — OpenSpiel's information state as
fields. Action features: the bid card one-hot and its value × 1/num_cards. Goofspiel is
simultaneous: each bidder is encoded on its own (``player`` is one of ``current_players``).
Hidden state (``info().hidden``, training only, ``imp_info`` alone): the other seats' hands.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from omega_cluster.games.goofspiel import GoofspielState

__all__ = ["GoofspielEncoder"]


class GoofspielEncoder:
    """Encoder for native ``goofspiel`` games (one player count and card count per encoder)."""

    name = "goofspiel"
    game_name = "goofspiel"
    version = 1

    def __init__(self, game: Game) -> None:
        if game.spec.name != self.game_name:
            raise EncoderError(f"GoofspielEncoder serves goofspiel, not {game.spec.name}")
        n = self.max_players = self.num_players = game.num_players
        nc = self.num_cards = game.params["num_cards"]
        self.imp_info: bool = game.params["imp_info"]
        self.num_turns: int = game.num_turns  # type: ignore[attr-defined]
        self._total = nc * (nc + 1) / 2
        lay = LayoutBuilder()
        self._o_point = lay.add("point_card", nc, "point card being bid for, one-hot")
        self._o_remaining = lay.add("remaining", nc, "point cards not yet turned")
        self._o_hands = lay.add(
            "hands", n * nc, "hands by relative seat (own first; others zero with imp_info)"
        )
        self._o_points = lay.add("points", n, "points per relative seat × 1/total points")
        self._turn_width = n + 2
        self._o_turns = lay.add(
            "turns",
            self.num_turns * self._turn_width,
            "per finished turn: winner relative seat one-hot, tie, own bid × 1/num_cards "
            "(imp_info only)",
        )
        self.observation_size = lay.size
        self._layout = tuple(lay.segments)
        self.action_feature_size = nc + 1
        eye = np.zeros((nc, nc + 1), np.float32)
        eye[:, :nc] = np.eye(nc, dtype=np.float32)
        eye[:, nc] = (np.arange(nc) + 1) / nc
        self._rows = eye

    def info(self) -> EncoderInfo:
        nc = self.num_cards
        return EncoderInfo.of(
            self,
            options={
                "players": self.num_players,
                "num_cards": nc,
                "num_turns": self.num_turns,
                "imp_info": self.imp_info,
            },
            observation_layout=self._layout,
            action_layout=(
                Segment("bid", 0, nc, "the bid card, one-hot"),
                Segment("bid_value", nc, 1, "bid value × 1/num_cards"),
            ),
            hidden=HiddenSpec(
                "vector",
                (self.num_players - 1) * nc,
                0,
                "the other seats' hands, relative seat 1 first: 1 per card held",
            )
            if self.imp_info
            else None,
        )

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        if not isinstance(state, GoofspielState):
            raise EncoderError(f"GoofspielEncoder needs a GoofspielState, got {type(state)}")
        obs = state.observation(player)
        n, nc = self.num_players, self.num_cards
        out = np.zeros(self.observation_size, np.float32)
        o: Any = out.data  # scalar writes: a fifth of numpy's cost
        cards = obs.point_cards
        if len(cards) > len(obs.wins):  # a turn is in progress: its point card is showing
            o[self._o_point + cards[-1]] = 1.0
        remaining = self._o_remaining
        out[remaining : remaining + nc] = 1.0
        for card in cards:
            o[remaining + card] = 0.0
        # hands: own first; without imp_info ``obs.hands`` lists every seat in absolute order
        seats = (
            [(0, obs.hands[0])]
            if self.imp_info
            else [((seat - player) % n, hand) for seat, hand in enumerate(obs.hands)]
        )
        for rel, hand in seats:
            base = self._o_hands + rel * nc
            for card in hand:
                o[base + card] = 1.0
        for seat, points in enumerate(obs.points):
            o[self._o_points + (seat - player) % n] = points / self._total
        width = self._turn_width
        for turn, winner in enumerate(obs.wins):
            row = self._o_turns + turn * width
            o[row + (n if winner < 0 else (winner - player) % n)] = 1.0
            if self.imp_info and turn < len(obs.own_bids):
                o[row + n + 1] = (obs.own_bids[turn] + 1) / nc
        return out

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        return self._rows[np.fromiter(legal, np.intp, len(legal))]
