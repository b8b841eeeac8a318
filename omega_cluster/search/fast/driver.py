"""The batched driver of the compiled tree: K searches, one forward pass per batch of leaves.

:func:`run_batched` allocates the K trees (:mod:`.tree`), then alternates "collect leaves
(compiled) -> ``forward`` (Python, once per batch) -> expand and back up (compiled)" until every
search has spent its budget; with a rollout leaf alone the first collection runs every search to
the end. :class:`FastResults` holds what the searches found as arrays; :func:`search_result`
turns one row into the :class:`~omega_cluster.search.result.SearchResult` the Python search
returns (final policy, chosen move and diagnostics computed by the same functions);
:class:`omega_cluster.search.batched.CompiledSearches` runs ``ISMCTS`` searches through them.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from omega_cluster.fields import check_allocation
from omega_cluster.games.fast import FastGame
from omega_cluster.search import _layout as L
from omega_cluster.search._ismcts_config import ISMCTSConfig
from omega_cluster.search._ismcts_policy import choose_action, final_policy
from omega_cluster.search.fast import nodes as T
from omega_cluster.search.fast._stubs import STUBS as _STUBS
from omega_cluster.search.fast.game import FastLeaf
from omega_cluster.search.fast.specialize import tree_for
from omega_cluster.search.result import SearchDiagnostics, SearchResult

__all__ = ["FastResults", "Forward", "run_batched", "search_result"]

Forward = Callable[..., tuple[np.ndarray, np.ndarray]]
"""``forward(obs float32[B, O], feats float32[B, A, F], mask bool[B, A]) -> (priors float64[B, A]
summing to 1 over the mask, values float64[B, N] seat-relative: values[b, r] is the value of seat
(player_b + r) % N)``; A is the game's ``max_legal`` (column j: the j-th legal action). The
critic leaf's takes a fourth argument, ``hidden float32[B, H]``: each row's world as its player
cannot see it (the game's ``hidden`` kernel), and its values are the critic's."""


@dataclass(frozen=True)
class FastResults:
    """What K searches found (row k: search k; columns j < ``n_legal[k]``: the root's legal
    actions in the game's order)."""

    legal: np.ndarray  # int64[K, L]: root legal actions
    n_legal: np.ndarray  # int64[K]
    visits: np.ndarray  # int64[K, L]: root visits per legal action
    means: np.ndarray  # float64[K, L]: the searcher's mean return per action (nan: unvisited)
    root_value: np.ndarray  # float64[K, N]: mean return of every player over the simulations
    prior: np.ndarray  # float64[K, L]: the root prior before Dirichlet noise (uniform: none)
    simulations: np.ndarray  # int64[K]
    leaves: np.ndarray  # int64[K]: leaves evaluated (rollouts or network rows)
    tree_nodes: np.ndarray  # int64[K]
    histogram: np.ndarray  # int64[K, D]: simulations per selection depth
    rng_states: np.ndarray  # uint64[K]: each search's splitmix64 state at the end
    forward_calls: int  # forward passes made (one per batch)
    rows: int  # leaf rows sent to forward, all batches together


def _tables(config: ISMCTSConfig, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The exploration tables of the Python tree (``Tree.ensure_tables``): UCT ``c·sqrt(ln n)``
    and ``1/sqrt(n)``, PUCT ``c·sqrt(n)`` and ``1/(1 + n)``, by the same expressions (shared
    between searches: the kernels only read them)."""
    puct = config.selection == "puct"
    size = L.ismcts_table_size(size - 3)  # a few sizes serve every budget
    return _table_pair(puct, config.c_puct if puct else config.c_uct, size)


@functools.lru_cache(maxsize=32)
def _table_pair(puct: bool, c: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    if puct:
        explore = [c * math.sqrt(n) for n in range(size)]
        bonus = [1.0 / (1.0 + n) for n in range(size)]
    else:
        explore = [c * math.sqrt(math.log(n)) if n > 0 else 0.0 for n in range(size)]
        bonus = [1.0 / math.sqrt(n) if n else 0.0 for n in range(size)]
    return np.array(explore), np.array(bonus)


def _kernels(fast: FastGame, leaf: FastLeaf) -> tuple[ModuleType, tuple[object, ...]]:
    """The compiled tree for the game's kernels and this leaf, and the contexts it reads."""
    rctx: object = (0,)
    rollout, encode, chance, hidden = _STUBS
    if leaf.rollout is not None:
        rctx, rollout = fast.rollouts[leaf.rollout]
    if leaf.network:
        encode = fast.encode
    if fast.chance is not None:
        chance = fast.chance
    if leaf.critic:
        hidden = fast.hidden
    ectx = fast.ectx if leaf.network and fast.ectx is not None else (0,)
    kernels = {
        "current": fast.current, "legal": fast.legal, "apply": fast.apply,
        "returns": fast.returns, "info_key": fast.info_key, "sample_world": fast.sample_world,
        "chance": chance, "rollout": rollout, "encode": encode, "hidden": hidden,
    }  # fmt: skip
    return tree_for(kernels), (fast.ctx, rctx, ectx)


def _config_vector(config: ISMCTSConfig, leaf: FastLeaf) -> np.ndarray:
    cfg = np.zeros(T.CFG_SIZE)
    w = float(leaf.network_value_weight) if leaf.rollout is not None else 1.0
    cfg[T.C_PUCT] = config.selection == "puct"
    cfg[T.C_NETWORK] = leaf.network
    cfg[T.C_ROLLOUT] = leaf.network and leaf.rollout is not None  # the blend's rollout
    cfg[T.C_W_NET], cfg[T.C_W_ROLL] = w, 1.0 - w
    cfg[T.C_DIR_ALPHA], cfg[T.C_DIR_FRAC] = config.dirichlet_alpha, config.dirichlet_fraction
    return cfg


def _allocate(fast: FastGame, roots: np.ndarray, budgets: np.ndarray) -> tuple[tuple, tuple]:
    """The K trees and the per-search buffers, sized for the largest budget (shapes:
    :func:`~omega_cluster.search._layout.ismcts_arrays`); refused on one line
    (:class:`~omega_cluster.fields.MemoryBoundError`) when they would not fit in memory."""
    k, budget = roots.shape[0], int(budgets.max(initial=0))
    pool_shapes, buf_shapes = L.ismcts_arrays(
        k, budget, num_players=fast.num_players, max_legal=fast.max_legal,
        state_size=fast.state_size, edges_per_node=_EDGES_PER_NODE,
    )  # fmt: skip
    tables = 2 * 8 * L.ismcts_table_size(budget)  # _tables' explore and bonus (float64)
    check_allocation(
        f"compiled ISMCTS: {k} search tree(s) of {budget} simulations ({fast.name})",
        L.nbytes(pool_shapes) + L.nbytes(buf_shapes) + tables,
    )
    pool: tuple[np.ndarray, ...] = tuple(np.zeros(shape, dtype) for shape, dtype in pool_shapes)
    pool[4].fill(-1)  # the hash: every slot free
    bufs: tuple[np.ndarray, ...] = tuple(np.zeros(shape, dtype) for shape, dtype in buf_shapes[:-1])
    return pool, (*bufs, np.ascontiguousarray(roots, np.int64))


_EDGES_PER_NODE = L.EDGES_PER_NODE


def _grow(pool: tuple) -> tuple:
    """The pool with twice the edge room (edges and their statistics copied)."""
    edge, stat = pool[2], pool[3]
    k, e = edge.shape[0], edge.shape[1]
    check_allocation(f"compiled ISMCTS: {k} search tree(s) growing to {2 * e} edges",
                     2 * (edge.nbytes + stat.nbytes))  # fmt: skip
    bigger_edge = np.zeros((k, 2 * e, edge.shape[2]), edge.dtype)
    bigger_stat = np.zeros((k, 2 * e, stat.shape[2]), stat.dtype)
    bigger_edge[:, :e], bigger_stat[:, :e] = edge, stat
    return (pool[0], pool[1], bigger_edge, bigger_stat, *pool[4:])


def _check_inputs(fast: FastGame, roots: np.ndarray, players: np.ndarray, budgets: np.ndarray,
                  seeds: np.ndarray, leaf: FastLeaf, forward: Forward | None) -> None:  # fmt: skip
    k = roots.shape[0] if roots.ndim == 2 else -1
    if roots.ndim != 2 or roots.shape[1] != fast.state_size:
        raise ValueError(
            f"run_batched: roots must be int64[K, {fast.state_size}] packed {fast.name} states, "
            f"got shape {roots.shape}"
        )
    for name, arr in (("players", players), ("budgets", budgets), ("seeds", seeds)):
        if arr.shape != (k,):
            raise ValueError(f"run_batched: {name} must have shape ({k},), got {arr.shape}")
    if k and (budgets.min() < 0 or players.min() < 0 or players.max() >= fast.num_players):
        raise ValueError("run_batched: budgets must be >= 0 and players seats of the game")
    if leaf.network and forward is None:
        raise ValueError(f"run_batched: leaf {leaf.name!r} needs a forward function, got None")


def run_batched(fast: FastGame, roots: np.ndarray, players: np.ndarray, budgets: np.ndarray,
                seeds: np.ndarray, config: ISMCTSConfig, leaf: FastLeaf,
                forward: Forward | None = None) -> FastResults:  # fmt: skip
    """Run K searches (row k: packed root ``roots[k]``, searcher ``players[k]``, ``budgets[k]``
    simulations, splitmix64 seed ``seeds[k]``), calling ``forward`` once per batch of network
    leaves (see :data:`Forward`). The configuration must be one :func:`.game.fast_path` accepts."""
    roots, players = np.asarray(roots, np.int64), np.asarray(players, np.int64)
    budgets, seeds = np.asarray(budgets, np.int64), np.asarray(seeds, np.uint64).copy()
    _check_inputs(fast, roots, players, budgets, seeds, leaf, forward)
    k = roots.shape[0]
    tree, ctxs = _kernels(fast, leaf)
    pool, bufs = _allocate(fast, roots, budgets)
    run = np.zeros((k, T.RUN_COLUMNS), np.int64)
    run[:, T.R_BUDGET], run[:, T.R_PLAYER] = budgets, players
    cfg = _config_vector(config, leaf)
    explore, bonus = _tables(config, int(budgets.max(initial=0)) + 3)
    rows_cap = k if leaf.network else 1
    a = fast.max_legal
    obs = np.zeros((rows_cap, max(fast.obs_size, 1)), np.float32)
    feats = np.zeros((rows_cap, a, max(fast.feat_size, 1)), np.float32)
    mask = np.zeros((rows_cap, a), np.bool_)
    hid = np.zeros((rows_cap, fast.hidden_size if leaf.critic else 0), np.float32)
    bufs = (*bufs, hid)  # bufs[12]: the rows' hidden codes (the critic leaf's)
    calls = rows = 0
    room = np.zeros(1, np.int64)
    while True:
        room[0] = 0
        b = tree.collect(*ctxs, pool, bufs, run, cfg, explore, bonus, seeds, obs, feats, mask, room)
        if b:
            assert forward is not None
            extra = (hid[:b],) if leaf.critic else ()
            priors, values = _forward(forward, obs[:b], feats[:b], mask[:b], extra,
                                      fast.num_players)  # fmt: skip
            calls += 1
            rows += b
            tree.finish(pool, bufs, run, cfg, seeds, priors, values)
        if room[0]:
            pool = _grow(pool)
        elif b == 0:
            break
    return _results(fast, pool, bufs, run, seeds, calls, rows)


def _forward(forward: Forward, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray,
             extra: tuple[np.ndarray, ...], num_players: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """One forward pass (``extra``: the critic leaf's hidden codes), its answer checked (shapes,
    finite values)."""
    priors, values = forward(obs, feats, mask, *extra)
    priors = np.ascontiguousarray(priors, np.float64)
    # a network may have a value per seat of its largest table: the first N are this table's
    values = np.ascontiguousarray(values[:, :num_players], np.float64)
    b, a = mask.shape
    if priors.shape != (b, a) or values.shape != (b, num_players):
        raise ValueError(
            f"run_batched: forward returned priors {priors.shape} and values {values.shape}; "
            f"expected ({b}, {a}) and ({b}, {num_players})"
        )
    if not (np.isfinite(priors).all() and np.isfinite(values).all()):
        raise ValueError("run_batched: forward returned a NaN or infinite prior or value")
    return priors, values


def _results(fast: FastGame, pool: tuple, bufs: tuple, run: np.ndarray, seeds: np.ndarray,
             calls: int, rows: int) -> FastResults:  # fmt: skip
    a = fast.max_legal
    n_legal = pool[0][:, 0, T.N_COUNT].copy()
    cols = np.arange(a)
    edges = np.minimum(pool[0][:, :1, T.N_FIRST] + cols, pool[2].shape[1] - 1)
    live = cols[None, :] < n_legal[:, None]
    take = np.take_along_axis
    legal = np.where(live, take(pool[2][:, :, T.E_ACTION], edges, 1), -1)
    visits = np.where(live, take(pool[2][:, :, T.E_VISITS], edges, 1), 0)
    means = np.where(live & (visits > 0), take(pool[3][:, :, T.F_MEAN], edges, 1), np.nan)
    sims = run[:, T.R_SIMS].copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(sims[:, None] > 0, pool[6] / np.maximum(sims, 1)[:, None], 0.0)
    prior = np.where(live, bufs[10], 0.0)
    return FastResults(
        legal=legal, n_legal=n_legal, visits=visits, means=means, root_value=value, prior=prior,
        simulations=sims, leaves=run[:, T.R_LEAVES].copy(), tree_nodes=pool[5][:, 0].copy(),
        histogram=bufs[4].copy(), rng_states=seeds, forward_calls=calls, rows=rows,
    )  # fmt: skip


def search_result(results: FastResults, k: int, player: int, config: ISMCTSConfig,
                  rng: random.Random, seconds: float, hidden: bool) -> SearchResult:  # fmt: skip
    """Row ``k`` as the Python search's :class:`SearchResult` (``hidden``: the game has hidden
    information, so every simulation drew a world)."""
    n = int(results.n_legal[k])
    legal = [int(x) for x in results.legal[k, :n]]
    visits = [int(x) for x in results.visits[k, :n]]
    values = [float(x) for x in results.means[k, :n]]
    policy = final_policy(visits)
    index = choose_action(policy, visits, config.temperature, rng)
    hist = [int(x) for x in results.histogram[k]]
    while hist and hist[-1] == 0:
        hist.pop()
    sims = int(results.simulations[k])
    diagnostics = SearchDiagnostics(
        simulations=sims, determinizations=sims if hidden else 0, seconds=seconds,
        leaf_evaluations=int(results.leaves[k]), tree_nodes=int(results.tree_nodes[k]),
        max_depth=len(hist) - 1, depth_histogram=tuple(hist),
    )  # fmt: skip
    return SearchResult(
        player=player, action=legal[index], legal=tuple(legal), policy=tuple(policy),
        visits=tuple(visits), action_values=tuple(values),
        root_value=tuple(float(x) for x in results.root_value[k]), diagnostics=diagnostics,
    )  # fmt: skip
