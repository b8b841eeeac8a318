"""The compiled tree's arrays and the steps that touch only them (numba): find a node by
information set, make a node, choose a candidate (UCT / PUCT), back up, Dirichlet root noise.

``pool`` (a tuple of arrays, row ``k`` = search ``k``; the fields of one node, edge or slot side
by side, so a step touches few cache lines when hundreds of trees share the cache): 0 nodes
``int64[K, M, N_*]`` (the records' fields and the arrays' shapes: :mod:`.._layout`) (player, visits, first edge, edge count, UCT untried count), 1 node
first-play values ``float64[K, M]``, 2 edges ``int64[K, E, E_*]`` (action, visits, UCT's untried
list), 3 edge statistics ``float64[K, E, F_*]`` (running mean, prior), 4 the hash
``int64[K, H, H_*]`` (key, player, node; node -1: a free slot; linear probing on (key, player)),
5 nodes / edges used ``int64[K, 2]``, 6 the root's summed return vector ``float64[K, N]``. The rules are those of the Python tree (``_ismcts_tree.Tree.new_node``,
``_ismcts_bandit``, ``Tree.backup``, ``_ismcts_policy.dirichlet_noise``), expression for
expression, so the same random numbers give the same tree. The steps that call a game's kernels
are :mod:`.tree`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_float
from omega_cluster.search._layout import (  # the fields of the pool's records
    E_ACTION,
    E_FRESH,
    E_VISITS,
    F_MEAN,
    F_PRIOR,
    H_KEY,
    H_NODE,
    H_PLAYER,
    N_COUNT,
    N_FIRST,
    N_LEFT,
    N_PLAYER,
    N_VISITS,
)

__all__ = ["backup", "choose", "dirichlet", "find_slot", "gamma_variate", "harvest", "new_node"]

_HASH = np.int64(-7046029254386353131)  # Fibonacci hashing constant
_LOG4 = math.log(4.0)
_SG_MAGIC = 1.0 + math.log(4.5)
_E = math.e

# per-search integer state: columns of ``run``
R_PHASE, R_SIMS, R_BUDGET, R_LEAVES, R_PENDING, R_LEAF_P, R_LEAF_N = 0, 1, 2, 3, 4, 5, 6
R_SLOT, R_DEPTH, R_PUSHED, R_PLAYER, R_ROW = 7, 8, 9, 10, 11
RUN_COLUMNS = 12
INIT, RUNNING, DONE = 0, 1, 2  # R_PHASE
ROOT_LEAF, TREE_LEAF = 1, 2  # R_PENDING
# the configuration vector ``cfg`` (float64)
C_PUCT, C_NETWORK, C_ROLLOUT, C_W_NET, C_W_ROLL, C_DIR_ALPHA, C_DIR_FRAC = 0, 1, 2, 3, 4, 5, 6
CFG_SIZE = 7


@njit(cache=True)
def gamma_variate(alpha: float, rs: np.ndarray) -> float:
    """A Gamma(alpha, 1) draw exactly as CPython's ``random.gammavariate`` makes it from its
    ``random()`` stream (Cheng 1977 above 1, an exponential at 1, Kennedy & Gentle's GS below)."""
    if alpha > 1.0:
        ainv = math.sqrt(2.0 * alpha - 1.0)
        bbb = alpha - _LOG4
        ccc = alpha + ainv
        while True:
            u1 = rand_float(rs)
            if not (1e-7 < u1 < 0.9999999):
                continue
            u2 = 1.0 - rand_float(rs)
            v = math.log(u1 / (1.0 - u1)) / ainv
            x = alpha * math.exp(v)
            z = u1 * u1 * u2
            r = bbb + ccc * v - x
            if r + _SG_MAGIC - 4.5 * z >= 0.0 or r >= math.log(z):
                return x
    if alpha == 1.0:
        return -math.log(1.0 - rand_float(rs))
    while True:
        u = rand_float(rs)
        b = (_E + alpha) / _E
        p = b * u
        if p <= 1.0:
            x = p ** (1.0 / alpha)
        else:
            x = -math.log((b - p) / alpha)
        u1 = rand_float(rs)
        if p > 1.0:
            if u1 <= x ** (alpha - 1.0):
                return x
        elif u1 <= math.exp(-x):
            return x


@njit(cache=True, inline="always")
def find_slot(pool: tuple, k: int, key: int, player: int) -> int:
    """The hash slot of (key, player) in search ``k``'s table, or the free slot it would take."""
    table = pool[4]
    mask = table.shape[1] - 1
    h = np.int64(key) * _HASH + player
    i = (h ^ (h >> 29)) & mask
    while True:
        if table[k, i, H_NODE] == -1 or (
            table[k, i, H_KEY] == key and table[k, i, H_PLAYER] == player
        ):
            return i
        i = (i + 1) & mask


@njit(cache=True, inline="always")
def new_node(
    pool: tuple,
    k: int,
    slot: int,
    key: int,
    player: int,
    legal: np.ndarray,
    n: int,
    prior: np.ndarray,
    has_prior: bool,
    value: float,
    puct: bool,
) -> int:
    """A node for ``player`` with candidates ``legal[:n]`` (the Python ``Tree.new_node``): means
    start at ``value``, priors from ``prior`` under PUCT (else uniform)."""
    node, fpu, edge, stat, table, counts = pool[0], pool[1], pool[2], pool[3], pool[4], pool[5]
    index, first = counts[k, 0], counts[k, 1]
    if index >= node.shape[1] or first + n > edge.shape[1]:
        raise ValueError("compiled ISMCTS: tree arrays full")
    row = node[k, index]
    row[N_PLAYER], row[N_VISITS], row[N_FIRST], row[N_COUNT] = player, 0, first, n
    row[N_LEFT] = 0 if puct else n
    fpu[k, index] = value
    uniform = 1.0 / n
    for j in range(n):
        e, f = edge[k, first + j], stat[k, first + j]
        e[E_ACTION], e[E_VISITS], e[E_FRESH] = legal[j], 0, j
        f[F_MEAN] = value
        f[F_PRIOR] = prior[j] if (puct and has_prior) else uniform
    counts[k, 0] = index + 1
    counts[k, 1] = first + n
    table[k, slot, H_KEY], table[k, slot, H_PLAYER], table[k, slot, H_NODE] = key, player, index
    return index


@njit(cache=True, inline="always")
def choose(
    pool: tuple,
    k: int,
    index: int,
    puct: bool,
    explore: np.ndarray,
    bonus: np.ndarray,
    rs: np.ndarray,
) -> int:
    """The candidate index a simulation takes at node ``index`` (``_ismcts_bandit``'s rules)."""
    row, edge, stat = pool[0][k, index], pool[2][k], pool[3][k]
    first, m, big_n = row[N_FIRST], row[N_COUNT], row[N_VISITS]
    fpu = 0.0
    if not puct:
        left = row[N_LEFT]
        if left > 0:  # untried candidates first, in random order
            row[N_LEFT] = left - 1
            if left == 1:
                return edge[first, E_FRESH]
            j = int(rand_float(rs) * left)
            pick = edge[first + j, E_FRESH]
            edge[first + j, E_FRESH] = edge[first + left - 1, E_FRESH]
            return pick
    else:
        total, count = pool[1][k, index], 1
        for j in range(m):
            v = edge[first + j, E_VISITS]
            if v:
                total += stat[first + j, F_MEAN] * v
                count += v
        fpu = total / count
    e = explore[big_n]
    best = -np.inf
    i = 0
    ties = 0
    for j in range(m):
        n = edge[first + j, E_VISITS]
        if puct:
            mean = stat[first + j, F_MEAN] if n else fpu
            score = mean + e * stat[first + j, F_PRIOR] * bonus[n]
        else:
            score = stat[first + j, F_MEAN] + e * bonus[n]
        if score > best:
            best, i, ties = score, j, 1
        elif score == best:
            ties += 1
            if rand_float(rs) * ties < 1.0:
                i = j
    return i


@njit(cache=True, inline="always")
def backup(pool: tuple, bufs: tuple, k: int, depth: int, values: np.ndarray) -> None:
    """Running means of the acting player's value along the path; the root sums every value."""
    node, edge, stat, total = pool[0][k], pool[2][k], pool[3][k], pool[6]
    path_nodes, path_edges, hist = bufs[2], bufs[3], bufs[4]
    for d in range(depth):
        e = path_edges[k, d]
        v = values[node[path_nodes[k, d], N_PLAYER]]
        stat[e, F_MEAN] += (v - stat[e, F_MEAN]) / edge[e, E_VISITS]
    for p in range(values.size):
        total[k, p] += values[p]
    hist[k, depth] += 1


@njit(cache=True)
def dirichlet(pool: tuple, k: int, alpha: float, frac: float, rs: np.ndarray) -> None:
    """AlphaZero root noise on the root's priors, as ``_ismcts_policy.dirichlet_noise``."""
    first, m, stat = pool[0][k, 0, N_FIRST], pool[0][k, 0, N_COUNT], pool[3][k]
    draws = np.empty(m)
    total = 0.0
    for j in range(m):
        draws[j] = gamma_variate(alpha, rs)
    for j in range(m):
        total += draws[j]
    if total <= 0.0:
        draws[:] = 0.0
        draws[int(rand_float(rs) * m)] = 1.0
        total = 1.0
    for j in range(m):
        stat[first + j, F_PRIOR] = (1.0 - frac) * stat[first + j, F_PRIOR] + frac * draws[j] / total


@njit(cache=True)
def harvest(
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    legal: np.ndarray,
    visits: np.ndarray,
    means: np.ndarray,
    prior: np.ndarray,
    value: np.ndarray,
    counts: np.ndarray,
) -> None:
    """What each search found, row ``k`` for search ``k``: the root's legal actions (-1 past
    them), their visits (0), mean returns (nan past them and unvisited), clean priors (0), the
    mean return of every player over the simulations (0 with none), and ``counts[k]`` = (legal
    actions, simulations, leaves, tree nodes, the depth histogram's used length)."""
    node, edge, stat, used, total, hist = pool[0], pool[2], pool[3], pool[5], pool[6], bufs[4]
    for k in range(run.shape[0]):
        n = node[k, 0, N_COUNT] if used[k, 0] > 0 else 0
        first = node[k, 0, N_FIRST]
        for j in range(legal.shape[1]):
            if j < n:
                e = first + j
                legal[k, j], visits[k, j] = edge[k, e, E_ACTION], edge[k, e, E_VISITS]
                means[k, j] = stat[k, e, F_MEAN] if visits[k, j] > 0 else np.nan
                prior[k, j] = bufs[10][k, j]
            else:
                legal[k, j], visits[k, j], means[k, j], prior[k, j] = -1, 0, np.nan, 0.0
        sims = run[k, R_SIMS]
        for p in range(value.shape[1]):
            value[k, p] = total[k, p] / sims if sims > 0 else 0.0
        depth = hist.shape[1]
        while depth > 0 and hist[k, depth - 1] == 0:
            depth -= 1
        counts[k, 0], counts[k, 1], counts[k, 2] = n, sims, run[k, R_LEAVES]
        counts[k, 3], counts[k, 4] = used[k, 0], depth
