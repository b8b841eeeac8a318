"""Leduc poker windows for n-tuple value tables: :class:`LeducPatterns` (a small example).

A seat reads its own card, the public card, the betting of this hand (public) and nothing of
the other private cards. Ranks are card ids // 2 (or the card itself under
``suit_isomorphism``). Families:

* ``hand`` — own rank × board rank (none before it is turned; a pair shows as equal ranks) ×
  raises this round × chips the seat must add to call (in steps of 2, capped);
* ``pot`` — own rank × round × pot size (in steps of 2, capped) × seats still in × whether the
  seat has folded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games.patterns import PatternFamily, PatternSet

if TYPE_CHECKING:
    from omega_cluster.games.leduc_poker.game import LeducPokerGame
    from omega_cluster.games.leduc_poker.state import LeducPokerState

__all__ = ["LeducPatterns"]

RAISES = 3  # 0..2 raises a round
CALL_BUCKETS = 5  # chips to call // 2, capped at 4
POT_BUCKETS = 16  # pot // 2, capped at 15


class LeducPatterns(PatternSet):
    """One ``hand`` and one ``pot`` window per position."""

    name = "leduc_poker"
    version = 1

    def __init__(self, game: LeducPokerGame) -> None:
        n = game.num_players
        self.game = game
        self.ranks = n + 2  # ranks 0..n, then "no card yet"
        self.seats = n
        r = self.ranks
        super().__init__(
            [
                PatternFamily("hand", r * r * RAISES * CALL_BUCKETS),
                PatternFamily("pot", r * 2 * POT_BUCKETS * n * 2),
            ]
        )

    def _rank(self, card: int) -> int:
        if card < 0:
            return self.ranks - 1
        return card if self.game.suit_isomorphism else card // 2

    def extract(self, state: LeducPokerState, seat: int) -> np.ndarray:  # type: ignore[override]
        r = self.ranks
        own = self._rank(state._private[seat])
        board = self._rank(state._board)
        ante = state._ante
        to_call = min(max(state._stakes - ante[seat], 0) // 2, CALL_BUCKETS - 1)
        raises = min(state._raises, RAISES - 1)
        hand = ((own * r + board) * RAISES + raises) * CALL_BUCKETS + to_call
        folded = state._folded
        still_in = self.seats - folded.bit_count()  # 1 .. n
        pot = min(sum(ante) // 2, POT_BUCKETS - 1)
        round_ = int(state._board >= 0)
        pot_i = (((own * 2 + round_) * POT_BUCKETS + pot) * self.seats + still_in - 1) * 2
        pot_i += folded >> seat & 1
        return np.array([hand, self.offsets[1] + pot_i], dtype=np.int64)
