"""The compiled ISMCTS tree for K concurrent searches (numba), mirroring the Python tree.

One pool of flat arrays holds K trees, search ``k`` in row ``k`` of each array (:mod:`.nodes`):
per node its acting player, visits, first-play value and a contiguous run of edges (action,
visits, running mean, prior, UCT's untried list); information-set keys map to nodes through an
open-addressing hash per search.
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
compiles a copy of the module per game. Two kernels drive all K searches: :func:`collect`
advances every unfinished search to its next leaf that needs the network (a rollout leaf is
played at once, a terminal state backed up) and writes that leaf's encoding into batch row ``b``
(the critic leaf: the world's hidden codes too, beside it); the caller runs one forward pass;
:func:`finish` expands each leaf with its prior and backs up its value (the blend ``w·network +
(1 - w)·rollout`` uses the rollout played at collection). A search has at most one leaf pending
(no virtual loss), so leaves of one batch belong to different searches.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.search.fast.nodes import (
    C_DIR_ALPHA,
    C_DIR_FRAC,
    C_NETWORK,
    C_PUCT,
    C_ROLLOUT,
    C_W_NET,
    C_W_ROLL,
    DONE,
    E_ACTION,
    E_VISITS,
    F_PRIOR,
    H_NODE,
    INIT,
    N_FIRST,
    N_VISITS,
    R_BUDGET,
    R_DEPTH,
    R_LEAF_N,
    R_LEAF_P,
    R_LEAVES,
    R_PENDING,
    R_PHASE,
    R_PLAYER,
    R_PUSHED,
    R_ROW,
    R_SIMS,
    R_SLOT,
    ROOT_LEAF,
    RUNNING,
    TREE_LEAF,
    backup,
    choose,
    dirichlet,
    find_slot,
    new_node,
)

__all__ = ["collect", "finish"]

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
hidden: Any = None  # hidden(ctx, S, player, out) -> None: the critic leaf's hidden codes
# -- end of game kernels

# bufs: 0 world, 1 leaf legal, 2 path nodes, 3 path edges, 4 depth histogram, 5 rollout values,
# 6 leaf values, 7 rollout scratch state, 8 pushed world, 9 leaf key, 10 clean root prior, 11 roots,
# 12 the batch rows' hidden codes (float32[rows, H]; no columns but for the critic leaf)
# (row k: search k's, except the world and the scratch state: one row that every search uses in
# turn, since neither outlives a simulation, so the states a simulation steps stay in cache)


@njit(cache=True, inline="always")
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
    scratch = bufs[7][0]  # one scratch state for every search: it stays in cache
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
    """The leaf's encoding into batch row ``b`` (zeroed first), its legal actions unmasked;
    the critic leaf's (``bufs[12]`` has columns): also the world's hidden codes into its row.

    Only the action rows the row's last leaf used are zeroed: the kernel writes ``feats[b, :n]``
    alone and unmasks exactly those ``n`` columns, so the row's leading unmasked run says how
    far its last leaf wrote (a whole row is ``max_legal`` actions, mostly never touched, and
    zeroing it all would stream megabytes a batch through the cache)."""
    row_mask, row_feats = mask[b], feats[b]
    used = 0
    while used < row_mask.shape[0] and row_mask[used]:
        used += 1
    row_feats[:used, :] = 0.0
    row_mask[:used] = False
    obs[b, :] = 0.0
    encode(ectx, ctx, world, player, bufs[1][k], n, obs[b], row_feats)
    row_mask[:n] = True
    if bufs[12].shape[1] > 0:
        hidden(ctx, world, player, bufs[12][b])
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
    new_node(pool, k, slot, key, player, bufs[1][k], n, prior, has_prior, value, cfg[C_PUCT] > 0)
    first = pool[0][k, 0, N_FIRST]
    for j in range(n):
        bufs[10][k, j] = pool[3][k, first + j, F_PRIOR]
    if cfg[C_DIR_FRAC] > 0.0:
        dirichlet(pool, k, cfg[C_DIR_ALPHA], cfg[C_DIR_FRAC], rs)
    run[k, R_PHASE] = RUNNING


@njit(cache=True, inline="always")
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
    slot = find_slot(pool, k, key, player)
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


@njit(cache=True, inline="always")
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
    world, vals, path_nodes, path_edges = bufs[0][0], bufs[6][k], bufs[2], bufs[3]
    node_rows, edge_rows, table = pool[0][k], pool[2][k], pool[4][k]
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
            backup(pool, bufs, k, depth, vals)
            return False
        if p == -2:
            chance(ctx, world, rs)
            continue
        key = info_key(ctx, world, p)
        slot = find_slot(pool, k, key, p)
        node = table[slot, H_NODE]
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
            new_node(pool, k, slot, key, p, bufs[1][k], n, vals, False, vals[p], puct)
            backup(pool, bufs, k, depth, vals)
            return False
        if depth >= path_nodes.shape[1]:
            raise ValueError("compiled ISMCTS: selection path longer than the tree")
        i = choose(pool, k, node, puct, explore, bonus, rs)
        node_rows[node, N_VISITS] += 1
        edge = node_rows[node, N_FIRST] + i
        edge_rows[edge, E_VISITS] += 1
        path_nodes[k, depth] = node
        path_edges[k, depth] = edge
        depth += 1
        apply(ctx, world, edge_rows[edge, E_ACTION])


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
    room: np.ndarray,
) -> int:
    """Advance every unfinished search to its next network leaf (written into the next batch
    row) or to the end of its budget; returns the number of rows written. A search whose edge
    pool may not hold one more node waits (``room[0] = 1``: the caller grows the pool)."""
    b = 0
    width, edges = bufs[1].shape[1], pool[2].shape[1]
    for k in range(run.shape[0]):
        if run[k, R_PHASE] == DONE or run[k, R_PENDING] != 0:
            continue
        if pool[5][k, 1] + width > edges:  # a simulation adds at most one node
            room[0] = 1
            continue
        rs = rs_all[k : k + 1]
        if run[k, R_PHASE] == INIT and _init_root(
            ctx, rctx, ectx, pool, bufs, run, cfg, k, rs, obs, feats, mask, b
        ):
            b += 1
            continue
        while run[k, R_SIMS] < run[k, R_BUDGET]:
            if pool[5][k, 1] + width > edges:
                room[0] = 1
                break
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
            new_node(pool, k, slot, key, p, bufs[1][k], n, priors[b], True, vals[p],
                      cfg[C_PUCT] > 0)  # fmt: skip
            backup(pool, bufs, k, run[k, R_DEPTH], vals)
        run[k, R_PENDING] = 0
