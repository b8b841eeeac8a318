"""The batched driver of the compiled tree: K searches, one forward pass per batch of leaves.

:class:`CompiledTree` holds one game's compiled tree for one leaf and the arrays of K trees; its
:meth:`~CompiledTree.run` alternates "collect leaves (compiled) -> ``forward`` (Python, once per
batch) -> expand and back up (compiled)" until every search has spent its budget; with a
rollout leaf alone the first collection runs every search to the end. The kernels, contexts,
configuration vector and arrays are set up once per search object and reused from move to move
(a run resets only what the tree reads before it writes), so a small game's move pays for its
simulations, not for Python around them; :func:`run_batched` is one run of a fresh one.
:class:`FastResults` holds what the searches found as arrays (read out of the trees by a
compiled kernel); :func:`search_result` turns one row into the
:class:`~omega_cluster.search.result.SearchResult` the Python search returns (final policy,
chosen move and diagnostics computed by the same functions);
:class:`omega_cluster.search.batched.CompiledSearches` runs ``ISMCTS`` searches through them.
"""

from __future__ import annotations

import functools
import math
import random
import threading
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

__all__ = ["CompiledTree", "FastResults", "Forward", "run_batched", "search_result"]

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
    depths: np.ndarray  # int64[K]: the histogram's used length (the deepest depth + 1; 0: none)
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
    seats = players.tolist()  # K Python ints: cheaper to scan than numpy reductions
    if k and (min(budgets.tolist()) < 0 or min(seats) < 0 or max(seats) >= fast.num_players):
        raise ValueError("run_batched: budgets must be >= 0 and players seats of the game")
    if leaf.network and forward is None:
        raise ValueError(f"run_batched: leaf {leaf.name!r} needs a forward function, got None")


@dataclass
class _Trees:
    """The arrays of K trees of one largest budget (:func:`_allocate`) and the batch rows the
    forward pass reads, kept between runs of that shape."""

    k: int
    budget: int
    pool: tuple
    bufs: tuple  # _allocate's buffers and, last, the rows' hidden codes (the critic leaf's)
    run: np.ndarray
    obs: np.ndarray
    feats: np.ndarray
    mask: np.ndarray
    hid: np.ndarray
    room: np.ndarray  # int64[1]: collect asks for a bigger edge pool


class CompiledTree:
    """One game's compiled tree for one leaf (:func:`_kernels`), set up once, and the arrays of
    the K trees of its last run, which the next run of the same K and largest budget resets
    instead of allocating (the edge pool keeps what it grew to). A run that starts while
    another is in progress (another thread, a forward pass that searches) gets arrays of its
    own."""

    def __init__(self, fast: FastGame, leaf: FastLeaf) -> None:
        self.fast, self.leaf = fast, leaf
        self.tree, self.ctxs = _kernels(fast, leaf)
        self._cfg: dict[tuple[str, float, float], np.ndarray] = {}
        self._trees: _Trees | None = None
        self._busy = threading.Lock()  # held by the run that uses self._trees

    def _config_vector(self, config: ISMCTSConfig) -> np.ndarray:
        key = (config.selection, config.dirichlet_alpha, config.dirichlet_fraction)
        cfg = self._cfg.get(key)
        if cfg is None:
            cfg = self._cfg[key] = _config_vector(config, self.leaf)
        return cfg

    def _arrays(self, roots: np.ndarray, budgets: np.ndarray, owned: bool) -> _Trees:
        """The arrays for these searches: the last run's, reset, when K and the largest budget
        are the same; else new ones (:func:`_allocate`), kept for the next run when ``owned``."""
        fast, k, budget = self.fast, roots.shape[0], max(budgets.tolist(), default=0)
        t = self._trees if owned else None
        if t is not None and t.k == k and t.budget == budget:
            t.pool[4].fill(-1)  # the hash: every slot free
            t.pool[5].fill(0)  # nodes and edges used
            t.pool[6].fill(0.0)  # the roots' summed returns
            t.bufs[4].fill(0)  # the depth histograms
            t.bufs[11][:] = roots
            t.run.fill(0)
            return t
        pool, bufs = _allocate(fast, roots, budgets)
        rows, a = (k if self.leaf.network else 1), fast.max_legal
        hid = np.zeros((rows, fast.hidden_size if self.leaf.critic else 0), np.float32)
        t = _Trees(
            k, budget, pool, (*bufs, hid), np.zeros((k, T.RUN_COLUMNS), np.int64),
            np.zeros((rows, max(fast.obs_size, 1)), np.float32),
            np.zeros((rows, a, max(fast.feat_size, 1)), np.float32), np.zeros((rows, a), np.bool_),
            hid, np.zeros(1, np.int64),
        )  # fmt: skip
        if owned:
            self._trees = t
        return t

    def run(self, roots: np.ndarray, players: np.ndarray, budgets: np.ndarray, seeds: np.ndarray,
            config: ISMCTSConfig, forward: Forward | None = None) -> FastResults:  # fmt: skip
        """Run K searches (row k: packed root ``roots[k]``, searcher ``players[k]``,
        ``budgets[k]`` simulations, splitmix64 seed ``seeds[k]``), calling ``forward`` once per
        batch of network leaves (see :data:`Forward`). The configuration must be one
        :func:`.game.fast_path` accepts."""
        fast, leaf = self.fast, self.leaf
        roots, players = np.asarray(roots, np.int64), np.asarray(players, np.int64)
        budgets, seeds = np.asarray(budgets, np.int64), np.asarray(seeds, np.uint64).copy()
        _check_inputs(fast, roots, players, budgets, seeds, leaf, forward)
        owned = self._busy.acquire(blocking=False)
        try:
            return self._run(self._arrays(roots, budgets, owned), budgets, players, seeds, config,
                             forward)  # fmt: skip
        finally:
            if owned:
                self._busy.release()

    def _run(self, t: _Trees, budgets: np.ndarray, players: np.ndarray, seeds: np.ndarray,
             config: ISMCTSConfig, forward: Forward | None) -> FastResults:  # fmt: skip
        fast, leaf = self.fast, self.leaf
        run, hid, room = t.run, t.hid, t.room
        run[:, T.R_BUDGET], run[:, T.R_PLAYER] = budgets, players
        cfg = self._config_vector(config)
        explore, bonus = _tables(config, t.budget + 3)
        calls = rows = 0
        while True:
            room[0] = 0
            b = self.tree.collect(*self.ctxs, t.pool, t.bufs, run, cfg, explore, bonus, seeds,
                                  t.obs, t.feats, t.mask, room)  # fmt: skip
            if b:
                assert forward is not None
                extra = (hid[:b],) if leaf.critic else ()
                priors, values = _forward(forward, t.obs[:b], t.feats[:b], t.mask[:b], extra,
                                          fast.num_players)  # fmt: skip
                calls += 1
                rows += b
                self.tree.finish(t.pool, t.bufs, run, cfg, seeds, priors, values)
            if room[0]:
                t.pool = _grow(t.pool)
            elif b == 0:
                break
        return _results(fast, t.pool, t.bufs, run, seeds, calls, rows)


def run_batched(fast: FastGame, roots: np.ndarray, players: np.ndarray, budgets: np.ndarray,
                seeds: np.ndarray, config: ISMCTSConfig, leaf: FastLeaf,
                forward: Forward | None = None) -> FastResults:  # fmt: skip
    """One :meth:`CompiledTree.run` of a fresh :class:`CompiledTree` (its arguments there)."""
    return CompiledTree(fast, leaf).run(roots, players, budgets, seeds, config, forward)


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
    """What the trees found, read out by the compiled :func:`.nodes.harvest` into new arrays
    (the trees' own are reused by the next run)."""
    k, a = run.shape[0], fast.max_legal
    legal, visits = np.empty((k, a), np.int64), np.empty((k, a), np.int64)
    means, prior = np.empty((k, a)), np.empty((k, a))
    value, counts = np.empty((k, fast.num_players)), np.empty((k, 5), np.int64)
    T.harvest(pool, bufs, run, legal, visits, means, prior, value, counts)
    return FastResults(
        legal=legal, n_legal=counts[:, 0], visits=visits, means=means, root_value=value,
        prior=prior, simulations=counts[:, 1], leaves=counts[:, 2], tree_nodes=counts[:, 3],
        histogram=bufs[4].copy(), depths=counts[:, 4], rng_states=seeds, forward_calls=calls,
        rows=rows,
    )  # fmt: skip


def search_result(results: FastResults, k: int, player: int, config: ISMCTSConfig,
                  rng: random.Random, seconds: float, hidden: bool) -> SearchResult:  # fmt: skip
    """Row ``k`` as the Python search's :class:`SearchResult` (``hidden``: the game has hidden
    information, so every simulation drew a world)."""
    n = int(results.n_legal[k])
    legal: list[int] = results.legal[k, :n].tolist()
    visits: list[int] = results.visits[k, :n].tolist()
    values: list[float] = results.means[k, :n].tolist()
    policy = final_policy(visits)
    index = choose_action(policy, visits, config.temperature, rng)
    hist: list[int] = results.histogram[k, : results.depths[k]].tolist()
    sims = int(results.simulations[k])
    diagnostics = SearchDiagnostics(
        simulations=sims, determinizations=sims if hidden else 0, seconds=seconds,
        leaf_evaluations=int(results.leaves[k]), tree_nodes=int(results.tree_nodes[k]),
        max_depth=len(hist) - 1, depth_histogram=tuple(hist),
    )  # fmt: skip
    return SearchResult(
        player=player, action=legal[index], legal=tuple(legal), policy=tuple(policy),
        visits=tuple(visits), action_values=tuple(values),
        root_value=tuple(results.root_value[k].tolist()), diagnostics=diagnostics,
    )  # fmt: skip
