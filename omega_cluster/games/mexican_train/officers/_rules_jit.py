"""The Mexican Train rules compiled (numba), for the compiled Commander playouts of
:mod:`._commander_jit`.

Each kernel mirrors a method of :class:`~omega_cluster.games.mexican_train.state.MexicanTrainState`
line for line: :func:`legal_actions` (``legal_actions``), :func:`apply_action`
(``_apply_action``), :func:`stuck` (``stuck``) and :func:`round_returns` (the scoring of the
campaign's last round). A state is packed into one int64 vector (offsets ``S_*``) and the game's
rule settings into another (``G_*``). Tile masks are two int64 words of 62 bits (tiles 0..61,
62..123): every word stays positive, so ``x & -x`` and ``>>`` behave as on Python ints.
Population counts use a 16-bit table ``P``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS

__all__ = [
    "G_BLANK",
    "G_BUDGET",
    "G_CAMPAIGN",
    "G_CHAIN_RULE",
    "G_DRAW",
    "G_GO_OUT",
    "G_MUST",
    "G_N",
    "G_PASS",
    "G_SET",
    "G_SIZE",
    "G_STRICT",
    "G_UNSEEN_HI",
    "G_UNSEEN_LO",
    "G_UNTIL",
    "LOW_MASK",
    "S_BOARD_HI",
    "S_BOARD_LO",
    "S_BONE",
    "S_BONE_N",
    "S_BONUS",
    "S_CHAIN",
    "S_CUR",
    "S_DRAWN",
    "S_ENDS",
    "S_ENGINE_TILE",
    "S_FIRST",
    "S_HANDS",
    "S_MARKED",
    "S_OD",
    "S_OD_N",
    "S_OUTS0",
    "S_PIPS0",
    "S_SIZE",
    "S_TOTAL",
    "WORD",
    "add_plays",
    "apply_action",
    "end_turn",
    "high_bit",
    "legal_actions",
    "mask_pips",
    "open_mask",
    "popcount",
    "round_returns",
    "split_mask",
    "stuck",
]

WORD = 62
LOW_MASK = (1 << WORD) - 1

# -- the packed state: one int64 vector (offsets) -----------------------------------------------
S_CUR, S_MARKED, S_BOARD_LO, S_BOARD_HI, S_BONUS, S_DRAWN, S_CHAIN = 0, 1, 2, 3, 4, 5, 6
S_FIRST, S_OD_N, S_OD, S_ENDS, S_HANDS, S_BONE_N = 7, 8, 9, 18, 27, 43
S_PIPS0, S_OUTS0, S_BONE = 44, 52, 60
S_SIZE = S_BONE + 128
S_ENGINE_TILE = S_SIZE  # the round's engine double (never in a hand, never unseen)
S_TOTAL = S_SIZE + 1
# -- the game: one int64 vector ------------------------------------------------------------------
G_N, G_STRICT, G_MUST, G_UNTIL, G_CHAIN_RULE, G_GO_OUT, G_BLANK, G_CAMPAIGN = 0, 1, 2, 3, 4, 5, 6, 7
G_DRAW, G_PASS, G_BUDGET, G_UNSEEN_LO, G_UNSEEN_HI, G_SET = 8, 9, 10, 11, 12, 13
G_SIZE = 14


@njit(cache=True)
def popcount(x: int, P: np.ndarray) -> int:
    return P[x & 0xFFFF] + P[(x >> 16) & 0xFFFF] + P[(x >> 32) & 0xFFFF] + P[x >> 48]


@njit(cache=True)
def high_bit(x: int) -> int:
    """The highest set bit of ``x`` > 0, as a mask (``1 << (x.bit_length() - 1)``)."""
    r = 0
    if x >> 32:
        x >>= 32
        r += 32
    if x >> 16:
        x >>= 16
        r += 16
    if x >> 8:
        x >>= 8
        r += 8
    if x >> 4:
        x >>= 4
        r += 4
    if x >> 2:
        x >>= 2
        r += 2
    if x >> 1:
        r += 1
    return 1 << r


@njit(cache=True)
def mask_pips(lo: int, hi: int, values: np.ndarray, P: np.ndarray) -> int:
    """Pips a two-word mask counts in hand (``Tiles.mask_pips``; 0|0 counts its value)."""
    total = 0
    while lo:
        bit = lo & -lo
        lo ^= bit
        total += values[popcount(bit - 1, P)]
    while hi:
        bit = hi & -hi
        hi ^= bit
        total += values[WORD + popcount(bit - 1, P)]
    return total


@njit(cache=True)
def open_mask(S: np.ndarray, G: np.ndarray, player: int) -> int:
    m = (1 << player) | (1 << MEXICAN_SLOT) | S[S_MARKED]
    if not G[G_STRICT]:
        for k in range(S[S_OD_N]):
            m |= 1 << S[S_OD + k]
    return m


@njit(cache=True)
def add_plays(lo: int, hi: int, slot: int, P: np.ndarray, out: np.ndarray, k: int) -> int:
    while lo:
        bit = lo & -lo
        lo ^= bit
        out[k] = popcount(bit - 1, P) * NUM_SLOTS + slot
        k += 1
    while hi:
        bit = hi & -hi
        hi ^= bit
        out[k] = (WORD + popcount(bit - 1, P)) * NUM_SLOTS + slot
        k += 1
    return k


@njit(cache=True)
def legal_actions(S: np.ndarray, G: np.ndarray, em: np.ndarray, dm: np.ndarray, P: np.ndarray, out):
    """MexicanTrainState.legal_actions of the acting player into ``out``; returns the count."""
    cur = S[S_CUR]
    lo, hi = S[S_HANDS + 2 * cur], S[S_HANDS + 2 * cur + 1]
    k = 0
    sorted_ = True
    if S[S_CHAIN]:
        slots = 1 << cur
    elif S[S_OD_N] > 0 and G[G_STRICT]:
        d = S[S_OD]
        e = S[S_ENDS + d]
        k = add_plays(lo & em[e, 0], hi & em[e, 1], d, P, out, 0)
        if not S[S_BONUS]:
            slots = 0
        else:
            lo &= dm[0]
            hi &= dm[1]
            slots = open_mask(S, G, cur)
            sorted_ = False
    else:
        slots = open_mask(S, G, cur)
    for s in range(NUM_SLOTS):
        if slots >> s & 1:
            e = S[S_ENDS + s]
            k = add_plays(lo & em[e, 0], hi & em[e, 1], s, P, out, k)
            sorted_ = False
    if not sorted_:  # insertion sort (a few dozen entries at most)
        for i in range(1, k):
            x = out[i]
            j = i - 1
            while j >= 0 and out[j] > x:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = x
    if S[S_CHAIN]:
        out[k] = G[G_PASS]
        k += 1
    elif k > 0:
        if not G[G_MUST]:
            if S[S_DRAWN]:
                out[k] = G[G_PASS]
                k += 1
            elif S[S_BONE_N] > 0:
                out[k] = G[G_DRAW]
                k += 1
    elif S[S_BONE_N] > 0 and (not S[S_DRAWN] or G[G_UNTIL]):
        out[k] = G[G_DRAW]
        k += 1
    else:
        out[k] = G[G_PASS]
        k += 1
    return k


@njit(cache=True)
def stuck(S, G, em, dm) -> bool:
    n = G[G_N]
    held_lo, held_hi = 0, 0
    for q in range(n):
        held_lo |= S[S_HANDS + 2 * q]
        held_hi |= S[S_HANDS + 2 * q + 1]
    if S[S_OD_N] > 0 and G[G_STRICT]:
        e = S[S_ENDS + S[S_OD]]
        if (held_lo & em[e, 0]) or (held_hi & em[e, 1]):
            return False
        if S[S_BONUS]:
            cur = S[S_CUR]
            dlo = S[S_HANDS + 2 * cur] & dm[0]
            dhi = S[S_HANDS + 2 * cur + 1] & dm[1]
            slots = open_mask(S, G, cur)
            for s in range(NUM_SLOTS):
                if slots >> s & 1:
                    e = S[S_ENDS + s]
                    if (dlo & em[e, 0]) or (dhi & em[e, 1]):
                        return False
        return True
    e = S[S_ENDS + MEXICAN_SLOT]
    rlo, rhi = em[e, 0], em[e, 1]
    for s in range(n):
        e = S[S_ENDS + s]
        rlo |= em[e, 0]
        rhi |= em[e, 1]
    return not ((held_lo & rlo) or (held_hi & rhi))


@njit(cache=True)
def end_turn(S, G) -> None:
    cur = S[S_CUR]
    S[S_FIRST] &= ~(1 << cur)
    S[S_DRAWN] = 0
    S[S_BONUS] = 0
    S[S_CHAIN] = 0
    S[S_CUR] = (cur + 1) % G[G_N]


@njit(cache=True)
def apply_action(S, G, em, dm, pips, high, low, a: int) -> int:
    """MexicanTrainState._apply_action: -2 while the round goes on, else who went out (-1: the
    round blocked)."""
    cur = S[S_CUR]
    if a == G[G_DRAW]:
        S[S_BONE_N] -= 1
        t = S[S_BONE + S[S_BONE_N]]
        if t < WORD:
            S[S_HANDS + 2 * cur] |= 1 << t
        else:
            S[S_HANDS + 2 * cur + 1] |= 1 << (t - WORD)
        S[S_DRAWN] = 1
    elif a == G[G_PASS]:
        if not S[S_CHAIN]:
            S[S_MARKED] |= 1 << cur
        end_turn(S, G)
    else:
        t = a // NUM_SLOTS
        s = a - t * NUM_SLOTS
        if t < WORD:
            S[S_HANDS + 2 * cur] ^= 1 << t
            S[S_BOARD_LO] |= 1 << t
        else:
            S[S_HANDS + 2 * cur + 1] ^= 1 << (t - WORD)
            S[S_BOARD_HI] |= 1 << (t - WORD)
        S[S_ENDS + s] = pips[t] - S[S_ENDS + s]
        if s == cur:
            S[S_MARKED] &= ~(1 << s)
        k = S[S_OD_N]
        j = 0
        for i in range(k):  # a tile on an open double covers it
            x = S[S_OD + i]
            if x != s:
                S[S_OD + j] = x
                j += 1
        S[S_OD_N] = j
        if S[S_HANDS + 2 * cur] == 0 and S[S_HANDS + 2 * cur + 1] == 0:
            return cur  # a double laid last need not be covered
        in_chain = S[S_CHAIN] != 0 or (
            s == cur and G[G_CHAIN_RULE] != 0 and (S[S_FIRST] >> cur & 1) != 0
        )
        if high[t] == low[t]:
            S[S_OD + S[S_OD_N]] = s
            S[S_OD_N] += 1
            S[S_BONUS], S[S_DRAWN], S[S_CHAIN] = 1, 0, 1 if in_chain else 0
        elif in_chain:
            S[S_BONUS], S[S_CHAIN] = 0, 1
        else:
            end_turn(S, G)
    if S[S_BONE_N] == 0 and stuck(S, G, em, dm):
        return -1
    return -2


@njit(cache=True)
def round_returns(S, G, values, P, went_out: int, out: np.ndarray) -> None:
    """The last round's end: win shares by total pips (points) or rounds gone out (go_out)."""
    n = G[G_N]
    score = np.zeros(n, np.int64)
    for q in range(n):
        pips = mask_pips(S[S_HANDS + 2 * q], S[S_HANDS + 2 * q + 1], values, P)
        if G[G_GO_OUT]:
            score[q] = -(S[S_OUTS0 + q] + (1 if q == went_out else 0))
        else:
            score[q] = S[S_PIPS0 + q] + pips
    best = score.min()
    winners = 0
    for q in range(n):
        if score[q] == best:
            winners += 1
    for q in range(n):
        out[q] = 1.0 / winners if score[q] == best else 0.0


def split_mask(mask: int) -> tuple[int, int]:
    return mask & LOW_MASK, mask >> WORD
