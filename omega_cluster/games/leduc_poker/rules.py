"""Leduc poker's fixed rules: action ids, raise sizes, the legal-action lists, the observation
type and the hand ranking — what the game (:mod:`.game`), its states (:mod:`.state`) and its
rule-based player (:mod:`.players`) share.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "ACTION_NAMES",
    "CALL",
    "DIGIT_BITS",
    "FOLD",
    "LEGAL",
    "MAX_RAISES",
    "RAISE",
    "RAISE_AMOUNT",
    "STARTING_MONEY",
    "SUITS",
    "LeducObservation",
    "rank_hand",
]

FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("fold", "call", "raise")
SUITS = "♠♥"
RAISE_AMOUNT = (0, 2, 4)  # by round (1, 2)
STARTING_MONEY = 100
MAX_RAISES = 2
# legal action lists indexed by (facing a bet) * 2 + (raise allowed)
LEGAL = ([CALL], [CALL, RAISE], [FOLD, CALL], [FOLD, CALL, RAISE])
# The public code appends one base-32 digit per public event: CALL/FOLD/RAISE as action + 1,
# the board card as 4 + card (card ids < 22 for ten players).
DIGIT_BITS = 5


class LeducObservation(NamedTuple):
    """Everything one player knows: the perfect-recall information state."""

    player: int  # the observing seat
    card: int  # own private card (rank under suit isomorphism), -1 before the deal
    board: int  # public card, -1 before it is turned
    round1: tuple[int, ...]  # betting actions of round 1 (as played, after action mapping)
    round2: tuple[int, ...]
    dealing: bool  # chance is dealing (players cannot tell how far the private deal has gone)
    winners: tuple[int, ...]  # seats that took the pot, once the game is over


def rank_hand(board: int, card: int, size: int, isomorphic: bool) -> int:
    """OpenSpiel's ``RankHand``: a pair beats every high-card hand, then high card, then low card
    (``size`` = number of distinct card values; card ids ``2r`` and ``2r + 1`` share rank ``r``)."""
    lo, hi = sorted((board, card))
    if isomorphic:
        return size * size + lo if lo == hi else hi * size + lo
    if lo % 2 == 0 and hi == lo + 1:
        return size * size + lo
    return (hi // 2) * size + lo // 2
