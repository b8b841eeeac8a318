"""The Commander's longest-chain search compiled (numba): :func:`best_chain` mirrors
``terms.chain_search``'s ``best(end, mask)`` — the same memo, the same expansion budget, the
tiles explored in the same order — on the two-word tile masks of :mod:`._rules_jit`.

The memo is open addressing over ``keys``/``vals``, valid for one decision (``stamp`` holds the
generation ``ctl[C_GEN]``); ``ctl`` also holds the budget left, the entry count and an overflow
flag (a memo three quarters full: the caller then plays in Python). The recursion is kept in one
kernel: helpers called from it are not inlined, and their calls would dominate a playout.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.officers._rules_jit import WORD, high_bit, popcount

__all__ = ["C_COUNT", "C_GEN", "C_LEFT", "C_OVERFLOW", "MEMO_BITS", "best_chain"]

_STEP = 1 << 12  # chain score = length << 12 | pips (terms._PIP_BITS)
MEMO_BITS = 16  # chain-search memo slots per decision: far above any hand's need
_H1 = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 (Fibonacci hashing)
_H2 = np.int64(-4658895280553007687)  # 0xBF58476D1CE4E5B9
# -- control words: memo generation, chain budget left, memo entries, overflow --------------------
C_GEN, C_LEFT, C_COUNT, C_OVERFLOW = 0, 1, 2, 3


@njit(cache=True)
def _slot_of_key(lo: int, hi: int, end: int, bits: int) -> int:
    h = (lo * _H1) ^ (hi * _H2) ^ (end * 0x5BD1E995)
    return int((h >> (64 - bits)) & ((1 << bits) - 1))


@njit(cache=True)
def best_chain(
    end: int,
    lo: int,
    hi: int,
    em: np.ndarray,
    pips: np.ndarray,
    values: np.ndarray,
    P: np.ndarray,
    keys: np.ndarray,
    vals: np.ndarray,
    stamp: np.ndarray,
    ctl: np.ndarray,
) -> tuple[int, int, int]:
    """terms.chain_search's ``best(end, mask)``: ``(score, chain_lo, chain_hi)``, same order."""
    cap = stamp.shape[0] - 1
    gen = ctl[C_GEN]
    i = _slot_of_key(lo, hi, end, MEMO_BITS)
    while stamp[i] == gen:
        if keys[i, 0] == lo and keys[i, 1] == hi and keys[i, 2] == end:
            return vals[i, 0], vals[i, 1], vals[i, 2]
        i = (i + 1) & cap
    olo = lo & em[end, 0]
    ohi = hi & em[end, 1]
    best_score, best_lo, best_hi = 0, 0, 0
    if olo or ohi:
        ctl[C_LEFT] -= 1
        if ctl[C_LEFT] < 0:  # out of budget: follow the heaviest tile only
            if ohi:
                ohi = high_bit(ohi)
                olo = 0
            else:
                olo = high_bit(olo)
        best_score = -1
        while olo:
            bit = olo & -olo
            olo ^= bit
            t = popcount(bit - 1, P)
            score, clo, chi = best_chain(
                pips[t] - end, lo ^ bit, hi, em, pips, values, P, keys, vals, stamp, ctl
            )
            score += _STEP + values[t]
            if score > best_score:
                best_score, best_lo, best_hi = score, clo | bit, chi
        while ohi:
            bit = ohi & -ohi
            ohi ^= bit
            t = WORD + popcount(bit - 1, P)
            score, clo, chi = best_chain(
                pips[t] - end, lo, hi ^ bit, em, pips, values, P, keys, vals, stamp, ctl
            )
            score += _STEP + values[t]
            if score > best_score:
                best_score, best_lo, best_hi = score, clo, chi | bit
    # store (the recursion never adds this key: every call below holds fewer tiles)
    ctl[C_COUNT] += 1
    if ctl[C_COUNT] * 4 > cap * 3:
        ctl[C_OVERFLOW] = 1
    else:
        i = _slot_of_key(lo, hi, end, MEMO_BITS)
        while stamp[i] == gen:
            i = (i + 1) & cap
        stamp[i] = gen
        keys[i, 0], keys[i, 1], keys[i, 2] = lo, hi, end
        vals[i, 0], vals[i, 1], vals[i, 2] = best_score, best_lo, best_hi
    return best_score, best_lo, best_hi
