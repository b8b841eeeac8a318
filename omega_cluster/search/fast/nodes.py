"""The compiled tree's arrays and the steps that touch only them (numba): find a node by
information set, make a node, choose a candidate (UCT / PUCT), back up, Dirichlet root noise.

``pool`` (a tuple of arrays, row ``k`` = search ``k``): 0 node player, 1 node visits, 2 node's
first edge, 3 node's edge count, 4 UCT untried count, 5 node first-play value; per edge 6 action,
7 visits, 8 running mean, 9 prior, 10 UCT's untried list; the hash 11 key, 12 player, 13 node
(-1: a free slot; linear probing on (key, player)); 14 nodes / edges used; 15 the root's summed
return vector. The rules are those of the Python tree (``_ismcts_tree.Tree.new_node``,
``_ismcts_bandit``, ``Tree.backup``, ``_ismcts_policy.dirichlet_noise``), expression for
expression, so the same random numbers give the same tree. The steps that call a game's kernels
are :mod:`.tree`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_float

__all__ = ["backup", "choose", "dirichlet", "find_slot", "gamma_variate", "new_node"]

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
    hkey, hplayer, hnode = pool[11], pool[12], pool[13]
    mask = hkey.shape[1] - 1
    h = np.int64(key) * _HASH + player
    i = (h ^ (h >> 29)) & mask
    while True:
        if hnode[k, i] == -1 or (hkey[k, i] == key and hplayer[k, i] == player):
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
    """A node for ``player`` with candidates ``legal[:n]`` (the Python ``Tree.new_node`` without
    caps or widening): means start at ``value``, priors from ``prior`` under PUCT (else uniform)."""
    nplayer, nn, nfirst, nk, nleft, nfpu = pool[0], pool[1], pool[2], pool[3], pool[4], pool[5]
    eact, evis, emean, eprior, efresh = pool[6], pool[7], pool[8], pool[9], pool[10]
    hkey, hplayer, hnode, counts = pool[11], pool[12], pool[13], pool[14]
    index, first = counts[k, 0], counts[k, 1]
    if index >= nplayer.shape[1] or first + n > eact.shape[1]:
        raise ValueError("compiled ISMCTS: tree arrays full")
    nplayer[k, index] = player
    nn[k, index] = 0
    nfirst[k, index] = first
    nk[k, index] = n
    nleft[k, index] = 0 if puct else n
    nfpu[k, index] = value
    uniform = 1.0 / n
    for j in range(n):
        eact[k, first + j] = legal[j]
        evis[k, first + j] = 0
        emean[k, first + j] = value
        eprior[k, first + j] = prior[j] if (puct and has_prior) else uniform
        efresh[k, first + j] = j
    counts[k, 0] = index + 1
    counts[k, 1] = first + n
    hkey[k, slot] = key
    hplayer[k, slot] = player
    hnode[k, slot] = index
    return index


@njit(cache=True, inline="always")
def choose(
    pool: tuple,
    k: int,
    node: int,
    puct: bool,
    explore: np.ndarray,
    bonus: np.ndarray,
    rs: np.ndarray,
) -> int:
    """The candidate index a simulation takes at ``node`` (``_ismcts_bandit``'s rules)."""
    nn, nfirst, nk, nleft, nfpu = pool[1], pool[2], pool[3], pool[4], pool[5]
    evis, emean, eprior, efresh = pool[7], pool[8], pool[9], pool[10]
    first, m, big_n = nfirst[k, node], nk[k, node], nn[k, node]
    fpu = 0.0
    if not puct:
        left = nleft[k, node]
        if left > 0:  # untried candidates first, in random order
            nleft[k, node] = left - 1
            if left == 1:
                return efresh[k, first]
            j = int(rand_float(rs) * left)
            pick = efresh[k, first + j]
            efresh[k, first + j] = efresh[k, first + left - 1]
            return pick
    else:
        total, count = nfpu[k, node], 1
        for j in range(m):
            v = evis[k, first + j]
            if v:
                total += emean[k, first + j] * v
                count += v
        fpu = total / count
    e = explore[big_n]
    best = -np.inf
    i = 0
    ties = 0
    for j in range(m):
        n = evis[k, first + j]
        if puct:
            mean = emean[k, first + j] if n else fpu
            score = mean + e * eprior[k, first + j] * bonus[n]
        else:
            score = emean[k, first + j] + e * bonus[n]
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
    nplayer, evis, emean, total = pool[0], pool[7], pool[8], pool[15]
    path_nodes, path_edges, hist = bufs[2], bufs[3], bufs[4]
    for d in range(depth):
        edge = path_edges[k, d]
        v = values[nplayer[k, path_nodes[k, d]]]
        emean[k, edge] += (v - emean[k, edge]) / evis[k, edge]
    for p in range(values.size):
        total[k, p] += values[p]
    hist[k, depth] += 1


@njit(cache=True)
def dirichlet(pool: tuple, k: int, alpha: float, frac: float, rs: np.ndarray) -> None:
    """AlphaZero root noise on the root's priors, as ``_ismcts_policy.dirichlet_noise``."""
    nfirst, nk, eprior = pool[2], pool[3], pool[9]
    first, m = nfirst[k, 0], nk[k, 0]
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
        eprior[k, first + j] = (1.0 - frac) * eprior[k, first + j] + frac * draws[j] / total
