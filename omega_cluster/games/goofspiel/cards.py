"""Goofspiel's card tables: hands and the point-card deck are bit masks, and these tables turn a
mask into its sorted cards (``legal_actions``) or its chance outcomes without a scan.
"""

from __future__ import annotations

__all__ = ["HIGH_CARDS", "LOW_CARDS", "LOW_MASK", "OUTCOMES", "SPLIT", "cards_of"]

# Hands and the deck are bit masks. Legal moves and chance outcomes of up to 14 cards are the
# concatenation of two lists looked up by the mask's low and high 7 bits: the tables stay a few
# kB, so they live in the CPU caches (one list per 14-bit mask takes MBs and was ~20 % slower in
# bench/bench_small_games.py), and the concatenation is the fresh list handed to the caller.
SPLIT = 7
LOW_MASK = (1 << SPLIT) - 1
LOW_CARDS = [[c for c in range(SPLIT) if m >> c & 1] for m in range(1 << SPLIT)]
HIGH_CARDS = [[c + SPLIT for c in low] for low in LOW_CARDS]
# deck size k -> (low, high) tables of (card, 1/k); the tuples are shared, one per (k, card)
OUTCOMES = [
    (
        [[pairs[c] for c in low] for low in LOW_CARDS],
        [[pairs[c] for c in high] for high in HIGH_CARDS],
    )
    for pairs in ([(c, 1.0 / max(k, 1)) for c in range(2 * SPLIT)] for k in range(2 * SPLIT + 1))
]


def cards_of(mask: int) -> list[int]:
    """Sorted set bits of ``mask``, a fresh list."""
    try:
        return LOW_CARDS[mask & LOW_MASK] + HIGH_CARDS[mask >> SPLIT]
    except IndexError:  # more than 14 cards
        return [c for c in range(mask.bit_length()) if mask >> c & 1]
