"""Goofspiel windows for n-tuple value tables: :class:`GoofspielPatterns` (a small example).

What a seat reads is public in every variant or its own: its hand, the prize card now turned,
the prize cards still to come and every seat's points (turn winners are public even with
``imp_info``, which hides only the bids). Families:

* ``card`` — one window per card value (shared table): whether the seat still holds that card,
  the card, the prize on the table (0 while none is turned) and the score-difference bucket
  (own points − the best opponent's);
* ``race`` — the score-difference bucket, the share of the prize points still to come
  (in ninths) and the turns left (capped at 15).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games.patterns import PatternFamily, PatternSet

if TYPE_CHECKING:
    from omega_cluster.games.goofspiel.game import GoofspielGame
    from omega_cluster.games.goofspiel.state import GoofspielState

__all__ = ["GoofspielPatterns"]

_DIFF = (-16, -8, -3, -1, 0, 2, 7, 15)  # own − best opponent points: 9 buckets
DIFF_BUCKETS = len(_DIFF) + 1
SHARE_BUCKETS = 9
TURN_CAP = 15


def diff_bucket(value: int) -> int:
    """The bucket ``0 .. DIFF_BUCKETS - 1`` of a score difference (0 is bucket 4)."""
    k = 0
    for edge in _DIFF:
        if value <= edge:
            return k
        k += 1
    return k


class GoofspielPatterns(PatternSet):
    """``card`` windows (one per card value) and one ``race`` window: ``num_cards + 1`` indices."""

    name = "goofspiel"
    version = 1

    def __init__(self, game: GoofspielGame) -> None:
        nc = game.num_cards
        self.game = game
        self.total = nc * (nc + 1) // 2  # the prize points of the whole game
        super().__init__(
            [
                PatternFamily("card", 2 * nc * (nc + 1) * DIFF_BUCKETS),
                PatternFamily("race", DIFF_BUCKETS * SHARE_BUCKETS * (TURN_CAP + 1)),
            ]
        )

    def extract(self, state: GoofspielState, seat: int) -> np.ndarray:  # type: ignore[override]
        game = self.game
        nc = game.num_cards
        points = state._points
        best = max(x for q, x in enumerate(points) if q != seat)
        diff = diff_bucket(points[seat] - best)
        bidding = bool(state._acting) and state._acting[0] >= 0  # a prize is on the table
        prize = state._point if bidding else 0
        hand = state._hands[seat]
        out = [
            ((((hand >> c & 1) * nc + c) * (nc + 1) + prize) * DIFF_BUCKETS + diff)
            for c in range(nc)
        ]
        remaining, to_come = state._remaining, 0
        while remaining:
            low = remaining & -remaining
            to_come += low.bit_length()  # card index + 1 = its value
            remaining ^= low
        share = to_come * (SHARE_BUCKETS - 1) // self.total
        left = min(game.num_turns - state._turn, TURN_CAP)
        race = (diff * SHARE_BUCKETS + share) * (TURN_CAP + 1) + left
        out.append(self.offsets[1] + race)
        return np.array(out, dtype=np.int64)
