"""Leduc poker encoder: compact one-hots of the acting player's information state.

Observation: own seat (absolute: acting order matters), own card rank, board rank (one-hots, zero
before the board is turned), whether they pair, both rounds' betting sequences (fold/call/raise
per slot, at most ``3N - 2`` slots a round) and, per relative seat, the chips put in and whether
the seat folded — replayed from the public betting, as every player can. Ranks, not suits: under
OpenSpiel's rules suits never matter for hand strength. Action features: the action id one-hot
(fold, call, raise). Values are chips won, seat-relative. Hidden state (``info().hidden``,
training only): where each card id is, relative to the player.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import (
    EncoderError,
    EncoderInfo,
    HiddenSpec,
    LayoutBuilder,
    OneHotActions,
)
from omega_cluster.games.leduc_poker import CALL, FOLD, RAISE, LeducPokerState

__all__ = ["LeducPokerEncoder"]

_RAISE_SIZES = (2, 4)  # OpenSpiel: raise by 2 in round 1, by 4 in round 2
_CHIP_SCALE = 1.0 / 13.0  # 1 ante + 2 raises of 2 + 2 raises of 4: the most a seat can put in


class LeducPokerEncoder:
    """Encoder for native ``leduc_poker`` games (one player count per encoder)."""

    name = "leduc_poker"
    game_name = "leduc_poker"
    version = 1

    def __init__(self, game: Game) -> None:
        if game.spec.name != self.game_name:
            raise EncoderError(f"LeducPokerEncoder serves leduc_poker, not {game.spec.name}")
        n = self.max_players = self.num_players = game.num_players
        self._iso: bool = game.params["suit_isomorphism"]
        self._start: int = game.params["starting_player"]
        self._slots = 3 * n - 2
        lay = LayoutBuilder()
        self._o_seat = lay.add("seat", n, "own seat (absolute), one-hot")
        self._o_card = lay.add("card", n + 1, "own card rank, one-hot")
        self._o_board = lay.add("board", n + 1, "board card rank, one-hot (zeros before)")
        self._o_pair = lay.add("pair", 1, "own card pairs the board")
        self._o_round1 = lay.add("round1", 3 * self._slots, "round 1 slot k: fold, call, raise")
        self._o_round2 = lay.add("round2", 3 * self._slots, "round 2 slot k: fold, call, raise")
        self._o_chips = lay.add("chips", n, "chips put in per relative seat × 1/13")
        self._o_folded = lay.add("folded", n, "relative seat has folded")
        self.observation_size = lay.size
        self._layout = tuple(lay.segments)
        self._actions = OneHotActions(3)
        self.action_feature_size = 3

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={
                "players": self.num_players,
                "suit_isomorphism": self._iso,
                "starting_player": self._start,
            },
            observation_layout=self._layout,
            action_layout=self._actions.layout,
            hidden=HiddenSpec(
                "locations",
                2 * (self.num_players + 1),
                1 + self.max_players,
                "per card id (rank = id // 2): 0 own or board, 1 undealt, 1 + k the card of "
                "relative seat k",
            ),
        )

    def _rank(self, card: int) -> int:
        return card if self._iso else card // 2

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        if not isinstance(state, LeducPokerState):
            raise EncoderError(f"LeducPokerEncoder needs a LeducPokerState, got {type(state)}")
        obs = state.observation(player)
        n = self.num_players
        out = np.zeros(self.observation_size, np.float32)
        out[self._o_seat + player] = 1.0
        if obs.card >= 0:
            out[self._o_card + self._rank(obs.card)] = 1.0
        if obs.board >= 0:
            out[self._o_board + self._rank(obs.board)] = 1.0
            out[self._o_pair] = obs.card >= 0 and self._rank(obs.card) == self._rank(obs.board)
        for base, seq in ((self._o_round1, obs.round1), (self._o_round2, obs.round2)):
            for k, action in enumerate(seq):
                out[base + 3 * k + action] = 1.0
        ante, folded = self._replay_betting(obs.round1, obs.round2)
        for rel in range(n):
            seat = (player + rel) % n
            out[self._o_chips + rel] = ante[seat] * _CHIP_SCALE
            out[self._o_folded + rel] = folded >> seat & 1
        return out

    def _replay_betting(
        self, round1: Sequence[int], round2: Sequence[int]
    ) -> tuple[list[int], int]:
        """Chips in per seat and the folded mask, from the public betting (OpenSpiel's order:
        each round opens at ``starting_player``, then the next seat still in)."""
        n = self.num_players
        ante, folded, stakes = [1] * n, 0, 1
        for raise_by, seq in zip(_RAISE_SIZES, (round1, round2), strict=True):
            cur = self._start
            while folded >> cur & 1:
                cur = (cur + 1) % n
            for action in seq:
                if action == CALL:
                    ante[cur] = stakes
                elif action == RAISE:
                    stakes += raise_by
                    ante[cur] = stakes
                elif action == FOLD:
                    folded |= 1 << cur
                if folded.bit_count() == n - 1:
                    break
                cur = (cur + 1) % n
                while folded >> cur & 1:
                    cur = (cur + 1) % n
        return ante, folded

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        return self._actions(legal)
