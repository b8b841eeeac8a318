"""The compiled ISMCTS tree for K concurrent searches (numba), mirroring the Python tree.

One pool of flat arrays holds K trees, search ``k`` in row ``k`` of each array (:class:`Pool`):
per node its acting player, visits, first-play value and a contiguous run of edges (action,
visits, running mean, prior, UCT's untried list); information-set keys map to nodes through an
open-addressing hash per search (linear probing on (key, player); node -1 marks a free slot).
The search is the Python one of :mod:`omega_cluster.search.ismcts` (SO-ISMCTS with the tree
root): a fresh determinization (``sample_world``) per simulation, nodes keyed by the acting
player's information set, UCT (untried candidates first in random order, then ``mean + c·sqrt(ln
N)/sqrt(n)``) or PUCT (``mean + c·prior·sqrt(N)/(1 + n)``, an unvisited candidate valued at the
node's running mean), ties broken uniformly, Dirichlet root noise drawn as Python's
``random.gammavariate`` draws it, running means of the acting player's return and the root summing
every player's. Each random number is drawn in the Python search's order for the same purpose,
from splitmix64 (:mod:`omega_cluster.games._splitmix`): fed the same stream, both build the
same tree (tested).

The game's kernels are this module's globals (see "game kernels" below): :mod:`.specialize`
compiles a copy of the module per game. Two kernels drive all K searches: :func:`collect` advances every unfinished search to its next
leaf that needs the network (a rollout leaf is played at once, a terminal state backed up) and
writes that leaf's encoding into batch row ``b``; the caller runs one forward pass over the rows;
:func:`finish` expands each leaf with its prior and backs up its value (the blend ``w·network +
(1 - w)·rollout`` uses the rollout played at collection). A search has at most one leaf pending
(no virtual loss), so leaves of one batch belong to different searches.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_float

__all__ = [
    "R_BUDGET",
    "R_LEAVES",
    "R_PHASE",
    "R_SIMS",
    "collect",
    "finish",
    "gamma_variate",
]

# -- game kernels: the module globals the functions below call. Unbound here; the driver compiles
# a copy of this module per game in which these lines are imports of the game's kernels
# (:mod:`.specialize`), so numba calls them directly and caches the result on disk.
current: Any = None  # current(ctx, S) -> acting player, -1 over, -2 chance
legal: Any = None  # legal(ctx, S, out) -> n
apply: Any = None  # apply(ctx, S, action) -> None
returns: Any = None  # returns(ctx, S, out) -> None
info_key: Any = None  # info_key(ctx, S, player) -> int64
sample_world: Any = None  # sample_world(ctx, S, player, rs, out) -> None
chance: Any = None  # chance(ctx, S, rs) -> None
rollout: Any = None  # rollout(rctx, ctx, S, rs, out) -> bool
encode: Any = None  # encode(ectx, ctx, S, player, legal, n, obs, feats) -> None
# -- end of game kernels

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


@njit(cache=True)
def _find(pool: tuple, k: int, key: int, player: int) -> int:
    """The hash slot of (key, player) in search ``k``'s table, or the free slot it would take."""
    hkey, hplayer, hnode = pool[11], pool[12], pool[13]
    mask = hkey.shape[1] - 1
    h = np.int64(key) * _HASH + player
    i = (h ^ (h >> 29)) & mask
    while True:
        if hnode[k, i] == -1 or (hkey[k, i] == key and hplayer[k, i] == player):
            return i
        i = (i + 1) & mask


@njit(cache=True)
def _new_node(
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


@njit(cache=True)
def _choose(
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


@njit(cache=True)
def _backup(pool: tuple, bufs: tuple, k: int, depth: int, values: np.ndarray) -> None:
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
def _dirichlet(pool: tuple, k: int, alpha: float, frac: float, rs: np.ndarray) -> None:
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


# bufs: 0 world, 1 leaf legal, 2 path nodes, 3 path edges, 4 depth histogram, 5 rollout values,
# 6 leaf values, 7 rollout scratch state, 8 pushed world, 9 leaf key, 10 clean root prior, 11 roots


@njit(cache=True)
def _play_rollout(
    rctx: Any,
    ctx: Any,
    bufs: tuple,
    k: int,
    world: np.ndarray,
    rs: np.ndarray,
    out: np.ndarray,
) -> None:
    """The rollout leaf from a scratch copy of ``world``: per-player returns into ``out``."""
    scratch = bufs[7][k]
    scratch[:] = world
    if not rollout(rctx, ctx, scratch, rs, out):
        raise ValueError("compiled ISMCTS: the rollout kernel could not play a position")


@njit(cache=True)
def _write_row(
    ectx: Any,
    ctx: Any,
    bufs: tuple,
    run: np.ndarray,
    k: int,
    world: np.ndarray,
    player: int,
    n: int,
    obs: np.ndarray,
    feats: np.ndarray,
    mask: np.ndarray,
    b: int,
) -> None:
    """The leaf's encoding into batch row ``b`` (zeroed first), its legal actions unmasked."""
    obs[b, :] = 0.0
    feats[b, :, :] = 0.0
    mask[b, :] = False
    encode(ectx, ctx, world, player, bufs[1][k], n, obs[b], feats[b])
    mask[b, :n] = True
    run[k, R_ROW] = b


@njit(cache=True)
def _make_root(
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    cfg: np.ndarray,
    k: int,
    slot: int,
    key: int,
    player: int,
    n: int,
    prior: np.ndarray,
    has_prior: bool,
    value: float,
    rs: np.ndarray,
) -> None:
    """The root node (node 0), its clean prior kept, Dirichlet noise on, the search running."""
    _new_node(pool, k, slot, key, player, bufs[1][k], n, prior, has_prior, value, cfg[C_PUCT] > 0)
    first = pool[2][k, 0]
    for j in range(n):
        bufs[10][k, j] = pool[9][k, first + j]
    if cfg[C_DIR_FRAC] > 0.0:
        _dirichlet(pool, k, cfg[C_DIR_ALPHA], cfg[C_DIR_FRAC], rs)
    run[k, R_PHASE] = RUNNING


@njit(cache=True)
def _pend(
    run: np.ndarray,
    bufs: tuple,
    k: int,
    kind: int,
    player: int,
    n: int,
    slot: int,
    key: int,
    depth: int,
) -> None:
    run[k, R_PENDING] = kind
    run[k, R_LEAF_P] = player
    run[k, R_LEAF_N] = n
    run[k, R_SLOT] = slot
    run[k, R_DEPTH] = depth
    bufs[9][k] = key


@njit(cache=True)
def _init_root(
    ctx: Any,
    rctx: Any,
    ectx: Any,
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    cfg: np.ndarray,
    k: int,
    rs: np.ndarray,
    obs: np.ndarray,
    feats: np.ndarray,
    mask: np.ndarray,
    b: int,
) -> bool:
    """Draw the first world and make the root (PUCT evaluates it first, as the Python search
    does); True when the root's evaluation waits in batch row ``b``."""
    player, root, pushed = run[k, R_PLAYER], bufs[11][k], bufs[8][k]
    n = legal(ctx, root, bufs[1][k])
    sample_world(ctx, root, player, rs, pushed)
    run[k, R_PUSHED] = 1
    key = info_key(ctx, root, player)
    slot = _find(pool, k, key, player)
    vals = bufs[6][k]
    if cfg[C_PUCT] > 0:
        run[k, R_LEAVES] += 1
        if cfg[C_NETWORK] > 0:
            _write_row(ectx, ctx, bufs, run, k, pushed, player, n, obs, feats, mask, b)
            if cfg[C_ROLLOUT] > 0:
                _play_rollout(rctx, ctx, bufs, k, pushed, rs, bufs[5][k])
            _pend(run, bufs, k, ROOT_LEAF, player, n, slot, key, 0)
            return True
        _play_rollout(rctx, ctx, bufs, k, pushed, rs, vals)
        _make_root(pool, bufs, run, cfg, k, slot, key, player, n, vals, False, vals[player], rs)
    else:
        _make_root(pool, bufs, run, cfg, k, slot, key, player, n, vals, False, 0.0, rs)
    return False


@njit(cache=True)
def _simulate(
    ctx: Any,
    rctx: Any,
    ectx: Any,
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    cfg: np.ndarray,
    explore: np.ndarray,
    bonus: np.ndarray,
    k: int,
    rs: np.ndarray,
    obs: np.ndarray,
    feats: np.ndarray,
    mask: np.ndarray,
    b: int,
) -> bool:
    """One simulation of search ``k``: determinize, select to a new leaf or the end, evaluate
    (rollout) and back up; True when the leaf waits for the network in batch row ``b``."""
    world, vals, path_nodes, path_edges = bufs[0][k], bufs[6][k], bufs[2], bufs[3]
    nn, nfirst, eact, evis, hnode = pool[1], pool[2], pool[6], pool[7], pool[13]
    if run[k, R_PUSHED]:
        world[:] = bufs[8][k]
        run[k, R_PUSHED] = 0
    else:
        sample_world(ctx, bufs[11][k], run[k, R_PLAYER], rs, world)
    run[k, R_SIMS] += 1
    puct = cfg[C_PUCT] > 0
    depth = 0
    while True:
        p = current(ctx, world)
        if p == -1:  # over: back up the returns, no evaluation
            returns(ctx, world, vals)
            _backup(pool, bufs, k, depth, vals)
            return False
        if p == -2:
            chance(ctx, world, rs)
            continue
        key = info_key(ctx, world, p)
        slot = _find(pool, k, key, p)
        node = hnode[k, slot]
        if node == -1:  # a new information set: the leaf
            n = legal(ctx, world, bufs[1][k])
            run[k, R_LEAVES] += 1
            if cfg[C_NETWORK] > 0:
                _write_row(ectx, ctx, bufs, run, k, world, p, n, obs, feats, mask, b)
                if cfg[C_ROLLOUT] > 0:
                    _play_rollout(rctx, ctx, bufs, k, world, rs, bufs[5][k])
                _pend(run, bufs, k, TREE_LEAF, p, n, slot, key, depth)
                return True
            _play_rollout(rctx, ctx, bufs, k, world, rs, vals)
            _new_node(pool, k, slot, key, p, bufs[1][k], n, vals, False, vals[p], puct)
            _backup(pool, bufs, k, depth, vals)
            return False
        if depth >= path_nodes.shape[1]:
            raise ValueError("compiled ISMCTS: selection path longer than the tree")
        i = _choose(pool, k, node, puct, explore, bonus, rs)
        nn[k, node] += 1
        edge = nfirst[k, node] + i
        evis[k, edge] += 1
        path_nodes[k, depth] = node
        path_edges[k, depth] = edge
        depth += 1
        apply(ctx, world, eact[k, edge])


@njit(cache=True)
def collect(
    ctx: Any,
    rctx: Any,
    ectx: Any,
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    cfg: np.ndarray,
    explore: np.ndarray,
    bonus: np.ndarray,
    rs_all: np.ndarray,
    obs: np.ndarray,
    feats: np.ndarray,
    mask: np.ndarray,
) -> int:
    """Advance every unfinished search to its next network leaf (written into the next batch
    row) or to the end of its budget; returns the number of rows written."""
    b = 0
    for k in range(run.shape[0]):
        if run[k, R_PHASE] == DONE or run[k, R_PENDING] != 0:
            continue
        rs = rs_all[k : k + 1]
        if run[k, R_PHASE] == INIT and _init_root(
            ctx, rctx, ectx, pool, bufs, run, cfg, k, rs, obs, feats, mask, b
        ):
            b += 1
            continue
        while run[k, R_SIMS] < run[k, R_BUDGET]:
            if _simulate(
                ctx, rctx, ectx, pool, bufs, run, cfg, explore, bonus, k, rs, obs, feats, mask, b
            ):
                b += 1
                break
        if run[k, R_PENDING] == 0 and run[k, R_SIMS] >= run[k, R_BUDGET]:
            run[k, R_PHASE] = DONE
    return b


@njit(cache=True)
def finish(
    pool: tuple,
    bufs: tuple,
    run: np.ndarray,
    cfg: np.ndarray,
    rs_all: np.ndarray,
    priors: np.ndarray,
    values: np.ndarray,
) -> None:
    """Expand every pending leaf with its row's prior and back up its value (seat-relative
    ``values[b, r]`` is seat ``(player + r) % N``'s; the blend mixes in the rollout's)."""
    num = values.shape[1]
    w_net, w_roll = cfg[C_W_NET], cfg[C_W_ROLL]
    for k in range(run.shape[0]):
        pend = run[k, R_PENDING]
        if pend == 0:
            continue
        b, p, n = run[k, R_ROW], run[k, R_LEAF_P], run[k, R_LEAF_N]
        vals = bufs[6][k]
        for r in range(num):
            vals[(p + r) % num] = values[b, r]
        if cfg[C_ROLLOUT] > 0:
            roll = bufs[5][k]
            for j in range(num):
                vals[j] = w_net * vals[j] + w_roll * roll[j]
        slot, key = run[k, R_SLOT], bufs[9][k]
        if pend == ROOT_LEAF:
            _make_root(pool, bufs, run, cfg, k, slot, key, p, n, priors[b], True, vals[p],
                       rs_all[k : k + 1])  # fmt: skip
        else:
            _new_node(pool, k, slot, key, p, bufs[1][k], n, priors[b], True, vals[p],
                      cfg[C_PUCT] > 0)  # fmt: skip
            _backup(pool, bufs, k, run[k, R_DEPTH], vals)
        run[k, R_PENDING] = 0
