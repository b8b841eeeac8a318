"""The Commander's move terms of the compiled encoder (numba): ``terms.move_features`` of every
legal action, what :func:`.encode.encode` writes into the ``commander_terms`` columns.

:func:`terms` mirrors ``terms.move_features``: what the decision's moves share
(``terms._Decision``: opponents' urgency, unseen tiles, open trains and the tiles reaching them,
the longest own chain), then each move's twenty terms, the longest-chain search (:mod:`.chain`)
called in the same order as Python calls it. It reads ``ectx`` (:func:`.encode.
make_encoder_ctx`): the rule tables, the chain's tile table and its two memos, and scratch arrays
(nothing allocates per leaf). Bits are counted with the processor's instructions (:mod:`.bits`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.fast.bits import ctz, popcount
from omega_cluster.games.mexican_train.fast.chain import (
    M_COUNT,
    M_GEN,
    M_LEFT,
    M_OVERFLOW,
    best_chain,
)
from omega_cluster.games.mexican_train.officers import _rules_jit as R
from omega_cluster.games.mexican_train.officers._commander_jit import _unseen
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS

__all__ = ["mask_pips", "matching", "terms"]


@njit(cache=True)
def mask_pips(lo: int, hi: int, values: np.ndarray) -> int:
    """Pips a two-word mask counts in hand (``_rules_jit.mask_pips``)."""
    total = 0
    while lo:
        total += values[ctz(lo)]
        lo &= lo - 1
    while hi:
        total += values[R.WORD + ctz(hi)]
        hi &= hi - 1
    return total


@njit(cache=True)
def _urgency(S, G, danger: int, player: int, urgency: np.ndarray) -> float:
    """Each opponent's danger of going out into ``urgency`` (``_commander_jit._urgency``); the
    top."""
    top = 0.0
    for q in range(G[R.G_N]):
        if q != player:
            size = popcount(S[R.S_HANDS + 2 * q]) + popcount(S[R.S_HANDS + 2 * q + 1])
            u = min(1.0, max(0.0, (danger + 1 - size) / danger))
            urgency[q] = u
            if u > top:
                top = u
    return top


@njit(cache=True)
def matching(lo: int, hi: int, em: np.ndarray, value: int) -> int:
    """How many tiles of the two-word mask ``(lo, hi)`` show ``value``."""
    return popcount(lo & em[value, 0]) + popcount(hi & em[value, 1])


@njit(cache=True)
def _reach(S, em, open_slots: int, without_lo: np.ndarray, without_hi: np.ndarray) -> tuple:
    """Tiles matching the end of any open train (returned), and per open train slot those
    matching the other open trains' ends (into ``without_*``): ``_commander_jit._reach`` over
    the open slots' bits only."""
    reach_lo, reach_hi = 0, 0
    m = open_slots
    while m:
        e = S[R.S_ENDS + ctz(m)]
        m &= m - 1
        reach_lo |= em[e, 0]
        reach_hi |= em[e, 1]
    m = open_slots
    while m:
        s = ctz(m)
        m &= m - 1
        others = open_slots & ~(1 << s)
        while others:
            e = S[R.S_ENDS + ctz(others)]
            others &= others - 1
            without_lo[s] |= em[e, 0]
            without_hi[s] |= em[e, 1]
    return reach_lo, reach_hi


@njit(cache=True)
def terms(ectx, S, player, legal, n_legal, feats, danger, col) -> None:
    """``terms.move_features`` of every legal action, scaled, into the commander_terms columns;
    searched again with the large memo when the small one ran three quarters full."""
    _terms_with(ectx, ectx[12], S, player, legal, n_legal, feats, danger, col)
    if ectx[12][0, M_OVERFLOW]:
        _terms_with(ectx, ectx[13], S, player, legal, n_legal, feats, danger, col)


@njit(cache=True)
def _terms_with(ectx, memo, S, player, legal, n_legal, feats, danger, col) -> None:
    """:func:`terms` with the chain search's ``memo``: what the decision's moves share
    (``terms._Decision``), then each move's twenty terms."""
    (_, G, em, dm, _, _, _, values, _, _, scales, tab, _, _, scratch_f, scratch_i) = ectx
    memo[0, M_GEN] += 1  # a fresh memo and budget: one chain search per decision, as in Python
    memo[0, M_LEFT] = G[R.G_BUDGET]
    memo[0, M_COUNT] = 0
    memo[0, M_OVERFLOW] = 0  # set if the memo ran full
    hlo, hhi = S[R.S_HANDS + 2 * player], S[R.S_HANDS + 2 * player + 1]
    scratch_f[:] = 0.0
    scratch_i[:] = 0
    urgency, f = scratch_f[:NUM_SLOTS], scratch_f[NUM_SLOTS:]
    without_lo, without_hi = scratch_i[:NUM_SLOTS], scratch_i[NUM_SLOTS:]
    top_urgency = _urgency(S, G, danger, player, urgency)
    unseen = _unseen(S, G, hlo, hhi)
    open_slots = R.open_mask(S, G, player)
    reach_lo, reach_hi = _reach(S, em, open_slots, without_lo, without_hi)
    base = best_chain(S[R.S_ENDS + player], hlo, hhi, tab, memo)
    hand_pips = mask_pips(hlo, hhi, values)
    draw = G[R.G_DRAW]
    for i in range(n_legal):
        a = legal[i]
        f[:] = 0.0
        if a >= draw:  # DRAW or PASS: the hand stays as it is
            f[4] = float(base[0] >> 12)
            f[5] = float(hand_pips - (base[0] & 4095))
            f[6] = float(popcount(hlo & reach_lo) + popcount(hhi & reach_hi))
            f[16] = float(popcount(hlo & dm[0]) + popcount(hhi & dm[1]))
            f[18] = 1.0 if a == draw else 0.0
            f[19] = 0.0 if a == draw else 1.0
        else:
            t = a // NUM_SLOTS
            s = a - t * NUM_SLOTS
            if open_slots >> s & 1:  # the new end joins the other open ends
                reach, add_end = (without_lo[s], without_hi[s]), True
            else:
                reach, add_end = (reach_lo, reach_hi), False
            _play_terms(ectx, memo, S, player, t, s, base, hand_pips, reach, add_end,
                        top_urgency, f)  # fmt: skip
            _place_terms(ectx, S, player, t, s, unseen, urgency, f)
        for j in range(f.shape[0]):  # as np.asarray(terms, np.float32) * _TERM_SCALES rounds
            feats[i, col + j] = np.float32(f[j]) * scales[j]


@njit(cache=True)
def _play_terms(
    ectx, memo, S, player, t, s, base, hand_pips, reach, add_end, top_urgency, f
) -> None:
    """Terms 0..6 of laying tile ``t`` on slot ``s``: pips laid, the longest own chain after
    it (searched again only when the move can change it, as ``move_features`` does), playable
    tiles (``reach``: those matching the open ends, plus the new end's with ``add_end``)."""
    (_, G, em, _, pips, _, _, values, _, _, _, tab, _, _, _, _) = ectx
    hlo, hhi = S[R.S_HANDS + 2 * player], S[R.S_HANDS + 2 * player + 1]
    blo, bhi = (1 << t, 0) if t < R.WORD else (0, 1 << (t - R.WORD))
    rlo, rhi = hlo ^ blo, hhi ^ bhi
    new_end = pips[t] - S[R.S_ENDS + s]
    if s == player:
        score = best_chain(new_end, rlo, rhi, tab, memo)[0]
    elif (base[1] & blo) or (base[2] & bhi):
        own_end = S[R.S_ENDS + player]
        score = best_chain(own_end, rlo, rhi, tab, memo)[0]
    else:  # the best chain does not use this tile, so it is still the best one
        score = base[0]
    if add_end:
        rch_lo, rch_hi = reach[0] | em[new_end, 0], reach[1] | em[new_end, 1]
    else:
        rch_lo, rch_hi = reach
    v = values[t]
    f[0], f[1] = float(v), v * float(G[R.G_CAMPAIGN])
    f[2] = v * (1.0 if S[R.S_BONE_N] == 0 else 0.0)
    f[3] = v * top_urgency
    f[4] = float(score >> 12)
    f[5] = float(hand_pips - v - (score & 4095))
    f[6] = float(popcount(rlo & rch_lo) + popcount(rhi & rch_hi))


@njit(cache=True)
def _place_terms(ectx, S, player, t, s, unseen, urgency, f) -> None:
    """Terms 7..17 of laying tile ``t`` on slot ``s``: whose train, blocking and feeding shares
    (of the unseen tiles matching the new end), open doubles, doubles kept, going out."""
    (_, G, em, dm, pips, high, low, _, _, _, _, _, _, _, _, _) = ectx
    hlo, hhi = S[R.S_HANDS + 2 * player], S[R.S_HANDS + 2 * player + 1]
    rlo, rhi = (hlo ^ (1 << t), hhi) if t < R.WORD else (hlo, hhi ^ (1 << (t - R.WORD)))
    new_end = pips[t] - S[R.S_ENDS + s]
    share = matching(unseen[0], unseen[1], em, new_end) * (1.0 / (G[R.G_SET] + 1))
    opponent = s != player and s != MEXICAN_SLOT
    if s == player:
        f[7] = 1.0
        f[8] = float(S[R.S_MARKED] >> player & 1)
    f[9] = 1.0 if s == MEXICAN_SLOT else 0.0
    f[10] = 1.0 if opponent else 0.0
    if opponent:
        f[11] = urgency[s] * (1.0 - share)
    if s == MEXICAN_SLOT or (opponent and S[R.S_MARKED] >> s & 1):
        f[12] = share
    for j in range(S[R.S_OD_N]):
        if S[R.S_OD + j] == s:
            f[13] = 1.0
    empty = rlo == 0 and rhi == 0
    if high[t] == low[t] and not empty:
        if (rlo & em[new_end, 0]) or (rhi & em[new_end, 1]):
            f[14] = 1.0
        else:
            f[15] = 1.0
    f[16] = float(popcount(rlo & dm[0]) + popcount(rhi & dm[1]))
    f[17] = 1.0 if empty else 0.0
