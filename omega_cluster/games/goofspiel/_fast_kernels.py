"""Goofspiel's numba kernels over the packed state of :mod:`.fast` (the layout is documented there).

Each kernel mirrors one method of :class:`~omega_cluster.games.goofspiel.state.GoofspielState`:
the joint bid and OpenSpiel's automatic last turn (``apply_joint`` / ``_play_turn`` and
``_next_turn``), the chance deal, ``returns``, ``information_set_key`` (as a 64-bit hash of the same
fields), ``sample_world`` (the two-player bid redraw of :mod:`.sampling`: a randomized depth-first
search, most constrained turn first, the truth when its node budget runs out) and the encoder.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import mix64, rand_below, rand_float
from omega_cluster.games.goofspiel.fast import (
    BIDDING,
    C_BIDS,
    C_HANDS,
    C_IMP,
    C_N,
    C_NC,
    C_ORDER,
    C_PCARDS,
    C_POINTS,
    C_RET,
    C_T,
    C_WINS,
    CHANCE_NODE,
    OVER,
    POINT,
    REMAINING,
    STATUS,
    TURN,
    TURNED,
)

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_SAMPLE_NODES = 20_000  # sample_world's node budget, as the Python search's max_nodes


@njit(cache=True)
def mix(h: np.uint64, x: int) -> np.uint64:
    """One step of the key hash: splitmix64's finaliser over ``h`` and ``x``."""
    return mix64((h ^ np.uint64(x & 0xFFFFFFFFFFFF)) * _GOLD + np.uint64(x >> 48 & 0xFFFF))


@njit(cache=True)
def status(ctx: np.ndarray, S: np.ndarray) -> int:
    return S[STATUS]


@njit(cache=True)
def legal(ctx: np.ndarray, S: np.ndarray, player: int, out: np.ndarray) -> int:
    if S[STATUS] != BIDDING:
        return 0
    mask, k, c = S[ctx[C_HANDS] + player], 0, 0
    while mask:
        if mask & 1:
            out[k] = c
            k += 1
        mask >>= 1
        c += 1
    return k


@njit(cache=True)
def _top(mask: int) -> int:
    c = -1
    while mask:
        mask >>= 1
        c += 1
    return c


@njit(cache=True)
def _deal(S: np.ndarray, ctx: np.ndarray, card: int) -> None:
    S[POINT] = card + 1
    S[REMAINING] &= ~(1 << card)
    S[ctx[C_PCARDS] + S[TURNED]] = card
    S[TURNED] += 1
    S[STATUS] = BIDDING


@njit(cache=True)
def apply_chance(ctx: np.ndarray, S: np.ndarray, rs: np.ndarray) -> int:
    """Turn a point card drawn uniformly from the remaining ones (``chance_outcomes``)."""
    mask = S[REMAINING]
    k, c = 0, 0
    m = mask
    while m:
        k += m & 1
        m >>= 1
    j = rand_below(rs, k)
    while True:
        if mask >> c & 1:
            if j == 0:
                break
            j -= 1
        c += 1
    _deal(S, ctx, c)
    return c


@njit(cache=True)
def _score(ctx: np.ndarray, S: np.ndarray, bids: np.ndarray) -> None:
    """Spend the bids, give the point card to a unique top bidder, record the turn."""
    n, turn = ctx[C_N], S[TURN]
    hands, top, count, winner = ctx[C_HANDS], -1, 0, -1
    for p in range(n):
        b = bids[p]
        S[hands + p] &= ~(1 << b)
        S[ctx[C_BIDS] + turn * n + p] = b
        if b > top:
            top, count, winner = b, 1, p
        elif b == top:
            count += 1
    if count > 1:
        winner = -1
    else:
        S[ctx[C_POINTS] + winner] += S[POINT]
    S[ctx[C_WINS] + turn] = winner
    S[TURN] = turn + 1


@njit(cache=True)
def apply_joint(ctx: np.ndarray, S: np.ndarray, bids: np.ndarray) -> None:
    """The joint bid, then the next turn: a chance deal or the next card in order, OpenSpiel's
    automatic last turn, or the end (``GoofspielState._play_turn`` / ``_next_turn``)."""
    _score(ctx, S, bids)
    turn, nc = S[TURN], ctx[C_NC]
    if turn < ctx[C_T]:
        order = ctx[C_ORDER]
        if order == 0:
            S[STATUS] = CHANCE_NODE
        elif order == 1:
            if S[POINT] > 1:
                _deal(S, ctx, S[POINT] - 2)
        elif S[POINT] < nc:
            _deal(S, ctx, S[POINT])
    if turn == nc - 1:
        if S[STATUS] == CHANCE_NODE:
            _deal(S, ctx, _top(S[REMAINING]))
        n = ctx[C_N]
        last = np.empty(n, np.int64)
        for p in range(n):
            last[p] = _top(S[ctx[C_HANDS] + p])
        _score(ctx, S, last)
        S[STATUS] = OVER  # turn nc == num_turns: the end
    elif turn == ctx[C_T]:
        S[STATUS] = OVER


@njit(cache=True)
def returns(ctx: np.ndarray, S: np.ndarray, out: np.ndarray) -> None:
    n, pts, kind = ctx[C_N], ctx[C_POINTS], ctx[C_RET]
    if S[STATUS] != OVER:
        out[:n] = 0.0
        return
    if kind == 0:  # win_loss
        best, winners = S[pts], 0
        for p in range(n):
            best = max(best, S[pts + p])
        for p in range(n):
            winners += S[pts + p] == best
        for p in range(n):
            if winners == n:
                out[p] = 0.0
            else:
                out[p] = 1.0 / winners if S[pts + p] == best else -1.0 / (n - winners)
    elif kind == 1:  # point_difference
        total = 0
        for p in range(n):
            total += S[pts + p]
        mean = total / n
        for p in range(n):
            out[p] = S[pts + p] - mean
    else:
        for p in range(n):
            out[p] = float(S[pts + p])


@njit(cache=True)
def info_key(ctx: np.ndarray, S: np.ndarray, player: int) -> int:
    """The hash of what ``information_set_key`` encodes: the point cards turned, every finished
    turn's winner and, without imp_info, every hand; with it, the player's own bids."""
    n, turned, turn = ctx[C_N], S[TURNED], S[TURN]
    h = mix(np.uint64(0), turned)
    for i in range(turned):
        h = mix(h, S[ctx[C_PCARDS] + i])
    h = mix(h, turn)
    for t in range(turn):
        h = mix(h, S[ctx[C_WINS] + t])
    if ctx[C_IMP]:
        for t in range(turn):
            h = mix(h, S[ctx[C_BIDS] + t * n + player])
    else:
        for p in range(n):
            h = mix(h, S[ctx[C_HANDS] + p])
    return np.int64(h)  # type: ignore[return-value]


@njit(cache=True)
def _candidates(ctx: np.ndarray, S: np.ndarray, player: int, t: int, used: int) -> int:
    """The opponent's possible bids in turn ``t`` (mask) given the player's bid and the result."""
    b, w = S[ctx[C_BIDS] + t * 2 + player], S[ctx[C_WINS] + t]
    free = ((1 << ctx[C_NC]) - 1) & ~used
    if w == player:
        return free & ((1 << b) - 1)
    if w == -1:
        return free & (1 << b)
    return free & ~((1 << (b + 1)) - 1)


@njit(cache=True)
def _popcount(m: int) -> int:
    k = 0
    while m:
        k += m & 1
        m >>= 1
    return k


@njit(cache=True)
def _redraw(ctx: np.ndarray, S: np.ndarray, player: int, rs: np.ndarray, v: np.ndarray) -> bool:
    """The opponent's bids ``v[t]`` of every finished turn, distinct and each turn's result kept:
    depth-first over the turns (fewest candidates first, random tie-breaks), candidates in random
    order. False when the node budget runs out."""
    turns, nc = S[TURN], ctx[C_NC]
    order = np.empty(turns, np.int64)
    keys = np.empty(turns, np.float64)
    for t in range(turns):
        keys[t] = _popcount(_candidates(ctx, S, player, t, 0)) + rand_float(rs)
    order[:] = np.argsort(keys)
    cand = np.empty((turns + 1, nc), np.int64)
    count = np.zeros(turns + 1, np.int64)
    ptr = np.zeros(turns + 1, np.int64)
    used, i, budget = 0, 0, _SAMPLE_NODES
    while True:
        if i == turns:
            return True
        if ptr[i] == 0 and count[i] == 0:  # entering depth i: its shuffled candidates
            m, k = _candidates(ctx, S, player, order[i], used), 0
            c = 0
            while m:
                if m & 1:
                    j = rand_below(rs, k + 1)  # inside-out Fisher-Yates
                    cand[i, k] = cand[i, j]
                    cand[i, j] = c
                    k += 1
                m >>= 1
                c += 1
            count[i] = k
        budget -= 1
        if budget < 0:
            return False
        if ptr[i] < count[i]:
            c = cand[i, ptr[i]]
            ptr[i] += 1
            if used >> c & 1:
                continue
            v[order[i]] = c
            used |= 1 << c
            i += 1
            ptr[i], count[i] = 0, 0
            continue
        if i == 0:
            return False
        ptr[i], count[i] = 0, 0
        i -= 1
        used &= ~(1 << v[order[i]])


@njit(cache=True)
def sample_world(
    ctx: np.ndarray, S: np.ndarray, player: int, rs: np.ndarray, out: np.ndarray
) -> None:
    """A copy of ``S``; with imp_info (two players) the opponent's past bids redrawn (its hand
    follows), the truth when the redraw's budget runs out, as ``GoofspielState.sample_world``."""
    out[:] = S
    if not ctx[C_IMP] or S[TURN] == 0:
        return
    q, turns = 1 - player, S[TURN]
    v = np.empty(turns, np.int64)
    if not _redraw(ctx, S, player, rs, v):
        return
    spent = 0
    for t in range(turns):
        out[ctx[C_BIDS] + t * 2 + q] = v[t]
        spent |= 1 << v[t]
    out[ctx[C_HANDS] + q] = ((1 << ctx[C_NC]) - 1) & ~spent


@njit(cache=True)
def random_rollout(ctx: np.ndarray, S: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    """Uniform random bids (and chance) from ``S`` (modified) to the end; the returns."""
    n = ctx[C_N]
    bids = np.empty(n, np.int64)
    while S[STATUS] != OVER:
        if S[STATUS] == CHANCE_NODE:
            apply_chance(ctx, S, rs)
            continue
        for p in range(n):
            mask = S[ctx[C_HANDS] + p]
            j, c = rand_below(rs, _popcount(mask)), 0
            while True:
                if mask >> c & 1:
                    if j == 0:
                        break
                    j -= 1
                c += 1
            bids[p] = c
        apply_joint(ctx, S, bids)
    returns(ctx, S, out)
    return True


@njit(cache=True)
def encode(
    ctx: np.ndarray,
    S: np.ndarray,
    player: int,
    legal: np.ndarray,
    k: int,
    obs: np.ndarray,
    feats: np.ndarray,
) -> None:
    """``GoofspielEncoder.encode_observation`` into ``obs`` and ``encode_actions`` of
    ``legal[:k]`` into ``feats[:k]`` (both zeroed by the caller)."""
    n, nc, imp = ctx[C_N], ctx[C_NC], ctx[C_IMP]
    turned, turn = S[TURNED], S[TURN]
    o_rem, o_hands = nc, 2 * nc
    o_points = o_hands + n * nc
    o_turns = o_points + n
    if turned > turn:  # a turn in progress: its point card is showing
        obs[S[ctx[C_PCARDS] + turned - 1]] = 1.0
    for c in range(nc):
        obs[o_rem + c] = 1.0
    for i in range(turned):
        obs[o_rem + S[ctx[C_PCARDS] + i]] = 0.0
    for seat in range(n):
        if imp and seat != player:
            continue
        base = o_hands + ((seat - player) % n) * nc
        mask = S[ctx[C_HANDS] + seat]
        for c in range(nc):
            if mask >> c & 1:
                obs[base + c] = 1.0
    total = nc * (nc + 1) / 2
    for seat in range(n):
        obs[o_points + (seat - player) % n] = np.float32(S[ctx[C_POINTS] + seat] / total)
    for t in range(turn):
        row = o_turns + t * (n + 2)
        w = S[ctx[C_WINS] + t]
        obs[row + (n if w < 0 else (w - player) % n)] = 1.0
        if imp:
            obs[row + n + 1] = np.float32((S[ctx[C_BIDS] + t * n + player] + 1) / nc)
    for j in range(k):
        a = legal[j]
        feats[j, a] = 1.0
        feats[j, nc] = np.float32((a + 1) / nc)
