"""The Commander's longest-chain search for the compiled encoder, laid out for speed (numba).

:func:`best_chain` answers exactly what :func:`..officers._chain_jit.best_chain` answers (the same
recursion, tiles explored in the same order, the same expansion budget), over a cheaper layout:
the encoder runs it at every network leaf, where the officers' version spent most of its time
on memory rather than on the search. Here

* the memo is one ``int64[1 + slots, 8]`` array whose row 0 holds the control words
  (:data:`M_GEN`, :data:`M_LEFT`, :data:`M_COUNT`, :data:`M_OVERFLOW`) and each further row one
  whole entry (key, stamp and answer in one cache line), so a probe reads one line, not three;
  the encoder keeps a small memo (a few dozen kilobytes, in cache across leaves) and a large one
  for the rare decision that fills the small one three quarters full (it then searches again in
  the large one);
* a dead end (no tile of the hand matches the end) answers ``(0, 0, 0)`` at once, without a call,
  a probe or an entry: the officers' search stores it and spends no budget on it, so the answers
  are the same and the memo holds fewer entries (it overflows later than theirs, never sooner);
* the tile tables (end masks, pips, values) are one ``int64`` vector (:func:`chain_table`) and bit
  positions come from the processor's bit instructions (:mod:`.bits`), so a recursive call passes
  two arrays instead of eight.

A memo entry is found by probing from the key's hash; since entries are only added within one
decision, the store after the recursion probes on from the first free slot the lookup met.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.fast.bits import clz, ctz
from omega_cluster.games.mexican_train.officers._rules_jit import WORD

__all__ = [
    "M_COUNT",
    "M_GEN",
    "M_LEFT",
    "M_OVERFLOW",
    "best_chain",
    "chain_table",
    "new_memo",
]

_STEP = 1 << 12  # chain score = length << 12 | pips (terms._PIP_BITS)
_H1 = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 (Fibonacci hashing)
_H2 = np.int64(-4658895280553007687)  # 0xBF58476D1CE4E5B9
_H3 = np.int64(0x5BD1E995)
# memo row 0: the control words
M_GEN, M_LEFT, M_COUNT, M_OVERFLOW = 0, 1, 2, 3
# an entry's fields (rows 1..)
_LO, _HI, _END, _STAMP, _SCORE, _CLO, _CHI = 0, 1, 2, 3, 4, 5, 6
# the tile table: [offset of pips, offset of values, em (2 per value)..., pips..., values...]
_T_PIPS, _T_VALUES, _T_EM = 0, 1, 2


def chain_table(em: np.ndarray, pips: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The tile tables :func:`best_chain` reads, as one vector (see the module doc)."""
    o_pips = _T_EM + em.size
    o_values = o_pips + pips.size
    head = np.array([o_pips, o_values], np.int64)
    return np.concatenate([head, em.astype(np.int64).ravel(), pips, values]).astype(np.int64)


def new_memo(slots: int) -> np.ndarray:
    """An empty memo of ``slots`` entries (a power of two), generation 0."""
    memo = np.zeros((1 + slots, 8), np.int64)
    memo[1:, _STAMP] = -1
    return memo


@njit(cache=True, inline="always")
def _slot(lo: int, hi: int, end: int, cap: int) -> int:
    h = (lo * _H1) ^ (hi * _H2) ^ (end * _H3)
    return int((h >> 40) & cap)


@njit(cache=True)
def best_chain(
    end: int, lo: int, hi: int, tab: np.ndarray, memo: np.ndarray
) -> tuple[int, int, int]:
    """terms.chain_search's ``best(end, mask)``: ``(score, chain_lo, chain_hi)``, same order."""
    olo = lo & tab[_T_EM + 2 * end]
    ohi = hi & tab[_T_EM + 2 * end + 1]
    if not (olo | ohi):  # a dead end: no tile to lay, nothing to remember
        return 0, 0, 0
    cap = memo.shape[0] - 2
    gen = memo[0, M_GEN]
    i = _slot(lo, hi, end, cap)
    while memo[1 + i, _STAMP] == gen:
        r = 1 + i
        if memo[r, _LO] == lo and memo[r, _HI] == hi and memo[r, _END] == end:
            return memo[r, _SCORE], memo[r, _CLO], memo[r, _CHI]
        i = (i + 1) & cap
    memo[0, M_LEFT] -= 1
    if memo[0, M_LEFT] < 0:  # out of budget: follow the heaviest tile only
        if ohi:
            ohi = np.int64(1) << (63 - clz(ohi))
            olo = 0
        else:
            olo = np.int64(1) << (63 - clz(olo))
    best_score, best_lo, best_hi = -1, 0, 0
    o_pips, o_values = tab[_T_PIPS], tab[_T_VALUES]
    while olo:
        t = ctz(olo)
        bit = olo & -olo
        olo ^= bit
        e, rest = tab[o_pips + t] - end, lo ^ bit
        score, clo, chi = 0, 0, 0
        if (rest & tab[_T_EM + 2 * e]) | (hi & tab[_T_EM + 2 * e + 1]):  # else a dead end
            score, clo, chi = best_chain(e, rest, hi, tab, memo)
        score += _STEP + tab[o_values + t]
        if score > best_score:
            best_score, best_lo, best_hi = score, clo | bit, chi
    while ohi:
        t = ctz(ohi)
        bit = ohi & -ohi
        ohi ^= bit
        e, rest = tab[o_pips + WORD + t] - end, hi ^ bit
        score, clo, chi = 0, 0, 0
        if (lo & tab[_T_EM + 2 * e]) | (rest & tab[_T_EM + 2 * e + 1]):
            score, clo, chi = best_chain(e, lo, rest, tab, memo)
        score += _STEP + tab[o_values + WORD + t]
        if score > best_score:
            best_score, best_lo, best_hi = score, clo, chi | bit
    # store (the recursion never adds this key: every call below holds fewer tiles)
    memo[0, M_COUNT] += 1
    if memo[0, M_COUNT] * 4 > cap * 3:
        memo[0, M_OVERFLOW] = 1
    else:
        while memo[1 + i, _STAMP] == gen:
            i = (i + 1) & cap
        r = 1 + i
        memo[r, _LO], memo[r, _HI], memo[r, _END], memo[r, _STAMP] = lo, hi, end, gen
        memo[r, _SCORE], memo[r, _CLO], memo[r, _CHI] = best_score, best_lo, best_hi
    return best_score, best_lo, best_hi
