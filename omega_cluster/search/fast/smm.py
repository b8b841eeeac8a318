"""Compiled simultaneous-move MCTS (numba) for K searches at once, over flat arrays.

The tree of :class:`~omega_cluster.search.smmcts.SMMCTS` as arrays: a node is an index of its
search's tree (kind: every seat bids / chance / the end, visits, summed value vector); a bidding
node owns a block of one bandit per seat, and a bandit one slot per action of the game's fixed
action space (times picked, summed reward, and for regret matching / Exp3 the regrets and the
summed strategy, with hidden information the availability counts). Children are found through one
open-addressing hash table per search keyed by (parent, the joint bid or the chance card) — or,
with hidden information, by (parent, the searcher's information-set key after the step), so
worlds the searcher cannot tell apart share nodes, as in the Python search.

One simulation mirrors ``SMMCTS._run``: a world (a determinization with hidden information, else
a copy of the root), a descent where every seat picks from its own bandit (decoupled UCB1, regret
matching or Exp3 with the same formulas as :mod:`omega_cluster.search._bandits`), the chance cards
drawn uniformly, a new node at the first unvisited bidding node, its value from a rollout, the
returns of a terminal, or the network; then the backup of the value vector, each bandit getting its
seat's value rescaled to [0, 1]. :func:`advance` runs every search until it needs the network (its
leaf encoded into one row of a shared batch) or its budget is spent, so the Python driver
(:mod:`.smm_driver`) calls the network once per batch of leaves gathered across the K searches.

The game enters as numba kernels passed as arguments (``G``, a tuple in the order of
:data:`KERNELS`, with ``ctx``): every decision node is one where every seat bids at once
(Goofspiel's). Random numbers are splitmix64, one stream per search: a search depends only on its
seed, not on the other searches of the batch.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import mix64
from omega_cluster.games.fast import CHANCE_NODE, OVER
from omega_cluster.search._ismcts_jit import rand_below, rand_float

__all__ = ["KERNELS", "advance", "init_roots"]

KERNELS = ("status", "legal", "apply_joint", "apply_chance", "returns", "info_key",
           "sample_world", "rollout", "encode")  # fmt: skip
BIDDING, CHANCE = 0, CHANCE_NODE  # the kernels' status codes (and OVER: the end)
UCB, EXP3, RM = 0, 1, 2  # selection rules (the ids of _bandits)
# node int columns, bandit int columns, per-search columns, config entries
KIND, VISITS, BLOCK = range(3)
TOTAL, LAST, CAND, KNOWN = range(4)
NODES, BLOCKS, SIMS, PENDING, DEPTH, PLAYER, BUDGET, LEAVES, ROW = range(9)
F_RULE, F_C, F_GAMMA, F_LO, F_INV_SPAN, F_LEAF, F_WNET, F_HIDDEN = range(8)
LEAF_ROLLOUT, LEAF_NETWORK, LEAF_BLEND = 0, 1, 2
_GOLD = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _mix(h: int, x: int) -> int:
    """A hash >= 0 of the pair (h >= 0, x): ``h`` scattered first, so pairs do not alias."""
    z = mix64(np.uint64(h) * _GOLD + np.uint64(1))
    z ^= np.uint64(x & 0x7FFFFFFFFFFFFFFF) | (np.uint64(x < 0) << np.uint64(63))
    return np.int64(mix64(z) >> np.uint64(1))  # type: ignore[return-value]


@njit(cache=True)
def _child(T: tuple, k: int, parent: int, key: int) -> tuple[int, int]:
    """(slot, node) of the child ``key`` of ``parent`` in search k's table; node -1 when new."""
    hkey, hval = T[9], T[10]
    full = _mix(parent + 1, key)
    mask = hkey.shape[1] - 1
    i = full & mask
    while True:
        if hval[k, i] == 0:
            hkey[k, i] = full
            return i, -1
        if hkey[k, i] == full:
            return i, hval[k, i] - 1
        i = (i + 1) & mask


@njit(cache=True)
def _new_node(T: tuple, G: tuple, ctx: np.ndarray, k: int, S: np.ndarray, buf: np.ndarray) -> int:
    ni, bi, sk = T[0], T[2], T[11]
    node = sk[k, NODES]
    if node >= ni.shape[1]:
        raise ValueError("compiled SM-MCTS: tree arrays full")
    sk[k, NODES] = node + 1
    kind = G[0](ctx, S)
    ni[k, node, KIND] = kind
    ni[k, node, BLOCK] = -1
    if kind == BIDDING:
        block = sk[k, BLOCKS]
        sk[k, BLOCKS] = block + 1
        ni[k, node, BLOCK] = block
        for p in range(bi.shape[2]):
            n, m = G[1](ctx, S, p, buf), 0
            for j in range(n):
                m |= 1 << buf[j]
            bi[k, block, p, KNOWN] = m
    return node


@njit(cache=True)
def _pick(probs: np.ndarray, cand: int, r: float) -> int:
    last, a = -1, 0
    while cand >> a:
        if cand >> a & 1:
            r -= probs[a]
            last = a
            if r < 0.0:
                return a
        a += 1
    return last  # rounding residue


@njit(cache=True)
def _ucb(T: tuple, cfg: np.ndarray, k: int, block: int, p: int, cand: int, rs: np.ndarray) -> int:
    """Decoupled UCB1: an untried action at random, else the best mean + exploration (with
    hidden information the availability count stands for the bandit's total)."""
    bi, cnt, w, av = T[2], T[4], T[5], T[8]
    untried, a = 0, 0
    while cand >> a:
        untried += (cand >> a & 1) and cnt[k, block, p, a] == 0
        a += 1
    best, best_score, a = -1, -1.0, 0
    if untried:
        j = rand_below(rs, untried) if untried > 1 else 0
        while True:
            if cand >> a & 1 and cnt[k, block, p, a] == 0:
                if j == 0:
                    return a
                j -= 1
            a += 1
    c, total, hidden = cfg[F_C], bi[k, block, p, TOTAL], cfg[F_HIDDEN] != 0.0
    cl = c * np.sqrt(np.log(total)) if total > 1 else 0.0
    while cand >> a:
        if cand >> a & 1:
            ni = cnt[k, block, p, a]
            if hidden:
                score = w[k, block, p, a] / ni + c * np.sqrt(np.log(av[k, block, p, a]) / ni)
            else:
                score = w[k, block, p, a] / ni + cl / np.sqrt(ni)
            if score > best_score:
                best, best_score = a, score
        a += 1
    return best


@njit(cache=True)
def _select(
    T: tuple, cfg: np.ndarray, k: int, block: int, p: int, cand: int, rs: np.ndarray
) -> int:
    """One bandit's pick among the actions of mask ``cand`` (``_bandits.select``); records what
    :func:`_update` needs."""
    bi, bf, reg, strat = T[2], T[3], T[6], T[7]
    rule = int(cfg[F_RULE])
    bi[k, block, p, CAND] = cand
    if rule == UCB:
        a = _ucb(T, cfg, k, block, p, cand, rs)
        bi[k, block, p, LAST] = a
        bf[k, block, p] = 1.0
        return a
    gamma, kk, a = cfg[F_GAMMA], 0, 0
    probs = np.zeros(64)
    while cand >> a:
        kk += cand >> a & 1
        a += 1
    floor = gamma / kk
    if rule == EXP3:
        eta, top, a = gamma / kk, -np.inf, 0
        while cand >> a:
            if cand >> a & 1:
                top = max(top, reg[k, block, p, a])
            a += 1
        total, a = 0.0, 0
        while cand >> a:
            if cand >> a & 1:
                probs[a] = np.exp(eta * (reg[k, block, p, a] - top))
                total += probs[a]
            a += 1
        scale, uniform = (1.0 - gamma) / total, 0.0
    else:
        total, a = 0.0, 0
        while cand >> a:
            if cand >> a & 1:
                probs[a] = max(reg[k, block, p, a], 0.0)
                total += probs[a]
            a += 1
        scale = (1.0 - gamma) / total if total > 0.0 else 0.0
        uniform = 0.0 if total > 0.0 else (1.0 - gamma) / kk
    a = 0
    while cand >> a:
        if cand >> a & 1:
            v = probs[a] * scale + uniform
            strat[k, block, p, a] += v  # the exploitation part only (average_strategy)
            probs[a] = floor + v
        a += 1
    a = _pick(probs, cand, rand_float(rs))
    bi[k, block, p, LAST] = a
    bf[k, block, p] = probs[a]
    return a


@njit(cache=True)
def _update(T: tuple, rule: int, k: int, block: int, p: int, reward: float) -> None:
    bi, bf, cnt, w, reg = T[2], T[3], T[4], T[5], T[6]
    a = bi[k, block, p, LAST]
    cnt[k, block, p, a] += 1
    w[k, block, p, a] += reward
    bi[k, block, p, TOTAL] += 1
    prob = bf[k, block, p]
    if rule == UCB or prob <= 0.0:
        return
    estimate = reward / prob
    if rule == RM:  # every candidate's regret: its estimate (0) minus the reward received
        cand, j = bi[k, block, p, CAND], 0
        while cand >> j:
            if cand >> j & 1:
                reg[k, block, p, j] -= reward
            j += 1
    reg[k, block, p, a] += estimate


@njit(cache=True)
def _backup(T: tuple, cfg: np.ndarray, k: int, values: np.ndarray) -> None:
    """Every node on the path counts the visit and sums the values; every bandit that picked
    (all but the last node's) gets its seat's value rescaled to [0, 1]."""
    ni, nv, sk, path = T[0], T[1], T[11], T[12]
    lo, inv, rule = cfg[F_LO], cfg[F_INV_SPAN], int(cfg[F_RULE])
    depth = sk[k, DEPTH]
    for d in range(depth):
        node = path[k, d]
        ni[k, node, VISITS] += 1
        for p in range(values.size):
            nv[k, node, p] += values[p]
        block = ni[k, node, BLOCK]
        if d < depth - 1 and block >= 0:
            for p in range(values.size):
                _update(T, rule, k, block, p, (values[p] - lo) * inv)
    sk[k, SIMS] += 1


@njit(cache=True)
def _joint_key(bids: np.ndarray) -> int:
    h = 0
    for b in bids:
        h = _mix(h, b)
    return h


@njit(cache=True)
def _descend(T: tuple, G: tuple, ctx: np.ndarray, cfg: np.ndarray, k: int, buf: np.ndarray) -> int:
    """Selection and expansion of one simulation of search k in its world (``_select``): the
    path is left in ``T``; returns the last node (an end, or a new bidding node)."""
    ni, bi, av, hval, sk, path, rs, world = T[0], T[2], T[8], T[10], T[11], T[12], T[13], T[15]
    hidden, player = cfg[F_HIDDEN] != 0.0, sk[k, PLAYER]
    S, r = world[k], rs[k]
    n = bi.shape[2]
    bids = np.empty(n, np.int64)
    if hidden:  # a determinization per simulation, as in ISMCTS
        G[6](ctx, T[14][k], player, r, S)
    else:
        S[:] = T[14][k]
    node, depth = 0, 1
    path[k, 0] = 0
    while True:
        kind = ni[k, node, KIND]
        if kind == OVER or (ni[k, node, VISITS] == 0 and node != 0 and kind != CHANCE):
            sk[k, DEPTH] = depth
            return node
        if kind == CHANCE:
            key = G[3](ctx, S, r)
        else:
            block = ni[k, node, BLOCK]
            for p in range(n):
                if hidden:  # the actions legal in this world; UCB counts their availability
                    m = 0
                    for j in range(G[1](ctx, S, p, buf)):
                        m |= 1 << buf[j]
                        av[k, block, p, buf[j]] += 1
                else:
                    m = bi[k, block, p, KNOWN]
                bids[p] = _select(T, cfg, k, block, p, m, r)
            G[2](ctx, S, bids)
            key = _joint_key(bids)
        if hidden:  # what the searcher can tell apart
            key = G[5](ctx, S, player)
        slot, child = _child(T, k, node, key)
        if child < 0:
            child = _new_node(T, G, ctx, k, S, buf)
            hval[k, slot] = child + 1
        node = child
        path[k, depth] = node
        depth += 1


@njit(cache=True)
def init_roots(T: tuple, G: tuple, ctx: np.ndarray, cfg: np.ndarray, buf: np.ndarray) -> None:
    """Node 0 of every search: its root (with hidden information, a sampled world's bandits,
    never the truth's)."""
    sk, rs = T[11], T[13]
    for k in range(sk.shape[0]):
        S = T[15][k]
        if cfg[F_HIDDEN] != 0.0:
            G[6](ctx, T[14][k], sk[k, PLAYER], rs[k], S)
        else:
            S[:] = T[14][k]
        _new_node(T, G, ctx, k, S, buf)


@njit(cache=True)
def advance(
    T: tuple,
    G: tuple,
    ctx: np.ndarray,
    cfg: np.ndarray,
    buf: np.ndarray,
    obs: np.ndarray,
    feats: np.ndarray,
    mask: np.ndarray,
    rowk: np.ndarray,
    netv: np.ndarray,
) -> int:
    """Back up the network's answers of the last batch (``netv``: seat-relative values per row),
    then run every search until it needs the network (its leaf encoded into the next row of
    ``obs``/``feats``/``mask``, ``rowk`` naming the search) or its budget is spent. Returns the
    rows filled (0: every search is done)."""
    ni, sk, rs, roll, scratch = T[0], T[11], T[13], T[16], T[17]
    n = roll.shape[1]
    mode, wnet = int(cfg[F_LEAF]), cfg[F_WNET]
    values = np.empty(n)
    rows = 0
    for k in range(sk.shape[0]):
        who = sk[k, PLAYER]
        if sk[k, PENDING]:
            row = sk[k, ROW]
            for p in range(n):
                values[p] = netv[row, (p - who) % n]
                if mode == LEAF_BLEND:
                    values[p] = wnet * values[p] + (1.0 - wnet) * roll[k, p]
            _backup(T, cfg, k, values)
            sk[k, PENDING] = 0
        while sk[k, SIMS] < sk[k, BUDGET]:
            node = _descend(T, G, ctx, cfg, k, buf)
            S = T[15][k]
            if ni[k, node, KIND] == OVER:  # the game's own returns, no evaluator
                G[4](ctx, S, values)
                _backup(T, cfg, k, values)
                continue
            sk[k, LEAVES] += 1
            if mode != LEAF_NETWORK:
                scratch[k, :] = S
                G[7](ctx, scratch[k], rs[k], roll[k])
                if mode == LEAF_ROLLOUT:
                    _backup(T, cfg, k, roll[k])
                    continue
            obs[rows, :] = 0.0
            feats[rows, :, :] = 0.0
            mask[rows, :] = False
            count = G[1](ctx, S, who, buf)
            G[8](ctx, S, who, buf, count, obs[rows], feats[rows])
            mask[rows, :count] = True
            rowk[rows] = k
            sk[k, PENDING], sk[k, ROW] = 1, rows
            rows += 1
            break
    return rows
