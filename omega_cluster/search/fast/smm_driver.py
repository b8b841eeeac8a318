"""The Python driver of the compiled SM-MCTS (:mod:`.smm`): K searches, one network call a batch.

:func:`run_batched_sm` allocates the K trees, plants the roots and alternates "run every search
until it needs the network (compiled)" with "one forward pass over the leaves gathered (Python)",
until every budget is spent. A rollout leaf never leaves the compiled loop. It mirrors
:class:`~omega_cluster.search.smmcts.SMMCTS` for the configurations self-play and the gate run
(:func:`unsupported` names what it does not cover: a time limit, a leaf it has not compiled)
and answers, per search, what ``SMMCTS`` would: the searched player's legal actions, their
visits and mean values, the mixed strategy (``final_strategy``) and the root value. Drawing the
move from the strategy (``temperature``) is the caller's.

The results are a function of the seeds: the same search gives the same answer alone or batched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.fields import check_allocation
from omega_cluster.search import _bandits
from omega_cluster.search._layout import nbytes, smm_arrays
from omega_cluster.search._smm_config import SELECTION_RULES, SMMCTSConfig
from omega_cluster.search.fast import smm
from omega_cluster.search.fast.game import RANDOM_ROLLOUT, FastLeaf
from omega_cluster.search.fast.smm_specialize import smm_for

__all__ = ["SMResults", "leaf_mode", "run_batched_sm", "unsupported"]

SMForward = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class SMResults:
    """Per search (row k): the searched player's legal actions (ascending, ``num_legal[k]`` of
    them, -1 past), their visits, mean values (NaN when unvisited) and strategy; the root value."""

    legal: np.ndarray  # int64[K, A]
    num_legal: np.ndarray  # int64[K]
    visits: np.ndarray  # int64[K, A]
    values: np.ndarray  # float64[K, A]
    policy: np.ndarray  # float64[K, A]
    root_value: np.ndarray  # float64[K, N]: the root's mean value vector
    simulations: np.ndarray  # int64[K]
    leaves: np.ndarray  # int64[K]: new leaves evaluated (rollouts or network rows)
    tree_nodes: np.ndarray  # int64[K]
    forward_calls: int


def leaf_mode(leaf: FastLeaf) -> int | None:
    """The compiled leaf of ``leaf``: random rollouts, the network or their blend (None: the
    compiled SM-MCTS has no such leaf)."""
    if leaf.critic or leaf.rollout not in (None, RANDOM_ROLLOUT):
        return None
    if not leaf.network:
        return smm.LEAF_ROLLOUT
    return smm.LEAF_NETWORK if leaf.rollout is None else smm.LEAF_BLEND


def unsupported(config: SMMCTSConfig, leaf: FastLeaf) -> str | None:
    """Why the compiled search does not mirror ``config`` with ``leaf`` (None: it does)."""
    if leaf_mode(leaf) is None:
        compiled = f"{RANDOM_ROLLOUT}, network, network+{RANDOM_ROLLOUT}"
        return f"leaf {leaf.name!r} is not compiled (compiled: {compiled})"
    if config.time_limit_s is not None:
        return f"SMMCTSConfig.time_limit_s={config.time_limit_s!r} is not compiled"
    return None


def run_batched_sm(
    fast: Any,
    roots: np.ndarray,
    players: np.ndarray,
    budgets: np.ndarray,
    seeds: np.ndarray,
    config: SMMCTSConfig,
    leaf: FastLeaf,
    forward: SMForward | None = None,
) -> SMResults:
    """Search K packed ``roots`` (int64[K, state_size]) for ``players`` with ``budgets``
    simulations each, splitmix64 ``seeds``; ``fast`` a game's kernels (its plugin hook
    ``fast_smm_search``). ``forward(obs, feats, mask) -> (priors, seat-relative values)`` serves
    the network leaf (``leaf`` "network", or "network+random_rollout" with the network's value
    weighted by the leaf's ``network_value_weight``, the rollout's by the rest)."""
    why = unsupported(config, leaf)
    if why is not None:
        raise ValueError(f"run_batched_sm: {why}")
    mode = leaf_mode(leaf)
    assert mode is not None
    if mode != smm.LEAF_ROLLOUT and forward is None:
        raise ValueError(f"run_batched_sm: leaf {leaf.name!r} needs a forward function")
    K = len(roots)
    if not (len(players) == len(budgets) == len(seeds) == K) or np.any(np.asarray(budgets) < 1):
        raise ValueError("run_batched_sm: one player, budget >= 1 and seed per root")
    for k in range(K):
        if fast.status(fast.ctx, roots[k]) != smm.BIDDING or not 0 <= players[k] < fast.num_players:
            raise ValueError(
                f"run_batched_sm: root {k} is not a decision of player {players[k]} "
                "(search a state where every seat bids)"
            )
    T = _trees(fast, roots, players, budgets, seeds, config)
    compiled, G = smm_for(fast)  # cached on disk: see smm_specialize
    cfg = _cfg(fast, config, mode, leaf.network_value_weight)
    buf = np.zeros(max(fast.num_actions, 1), np.int64)
    n, A = fast.num_players, fast.num_actions
    width = max(fast.obs_size, 1), max(fast.feat_size, 1)
    obs = np.zeros((K, width[0]), np.float32)
    feats = np.zeros((K, A, width[1]), np.float32)
    mask = np.zeros((K, A), np.bool_)
    rowk = np.zeros(K, np.int64)
    netv = np.zeros((K, n))
    compiled.init_roots(T, G, fast.ctx, cfg, buf)
    calls = 0
    while True:
        rows = compiled.advance(T, G, fast.ctx, cfg, buf, obs, feats, mask, rowk, netv)
        if rows == 0:
            break
        assert forward is not None
        _, values = forward(obs[:rows], feats[:rows], mask[:rows])
        netv[:rows] = values
        calls += 1
    return _results(fast, T, roots, players, config, calls)


def _trees(fast: Any, roots: Any, players: Any, budgets: Any, seeds: Any, config: Any) -> tuple:
    """The K trees (shapes: :func:`~omega_cluster.search._layout.smm_arrays`), refused on one
    line (:class:`~omega_cluster.fields.MemoryBoundError`) when they would not fit in memory."""
    K, top = len(roots), int(np.max(budgets, initial=1))
    shapes = smm_arrays(
        K, top, num_players=fast.num_players, max_legal=fast.num_actions,
        state_size=fast.state_size, max_depth=fast.max_depth,
        rule_tables=SELECTION_RULES[config.selection] != _bandits.UCB, hidden=bool(fast.hidden),
    )  # fmt: skip
    check_allocation(
        f"compiled SM-MCTS: {K} search tree(s) of {top} simulations ({fast.name})", nbytes(shapes)
    )
    T: tuple[np.ndarray, ...] = tuple(np.zeros(shape, dtype) for shape, dtype in shapes)
    T[11][:, smm.PLAYER] = players
    T[11][:, smm.BUDGET] = budgets
    T[13][:, 0] = np.asarray(seeds, np.uint64)
    T[14][:] = np.asarray(roots, np.int64)
    return T


def _cfg(fast: Any, config: SMMCTSConfig, mode: int, weight: float) -> np.ndarray:
    rule = SELECTION_RULES[config.selection]
    lo, hi = fast.min_return, fast.max_return
    lo, span = (lo, hi - lo) if hi > lo else (0.0, 1.0)
    cfg = np.zeros(8)
    cfg[[smm.F_RULE, smm.F_C, smm.F_GAMMA, smm.F_LO, smm.F_INV_SPAN]] = (
        rule, config.c_uct, _bandits.GAMMA, lo, 1.0 / span)  # fmt: skip
    cfg[[smm.F_LEAF, smm.F_WNET, smm.F_HIDDEN]] = (mode, weight, float(fast.hidden))
    return cfg


def _results(fast: Any, T: tuple, roots: Any, players: Any, config: Any, calls: int) -> SMResults:
    ni, nv, cnt, w, strat, sk = T[0], T[1], T[4], T[5], T[7], T[11]
    K, A = len(roots), fast.num_actions
    buf = np.zeros(max(A, 1), np.int64)
    legal = np.full((K, A), -1, np.int64)
    num = np.zeros(K, np.int64)
    visits = np.zeros((K, A), np.int64)
    values = np.full((K, A), np.nan)
    policy = np.zeros((K, A))
    rule = SELECTION_RULES[config.selection]
    average = config.final_strategy == "average" and rule != _bandits.UCB
    lo, hi = fast.min_return, fast.max_return
    lo, span = (lo, hi - lo) if hi > lo else (0.0, 1.0)
    for k in range(K):
        p, block = int(players[k]), int(ni[k, 0, smm.BLOCK])
        m = fast.legal(fast.ctx, T[14][k], p, buf)
        acts = buf[:m].copy()
        legal[k, :m], num[k] = acts, m
        n_a = cnt[k, block, p, acts]
        visits[k, :m] = n_a
        seen = n_a > 0
        values[k, :m][seen] = lo + span * w[k, block, p, acts][seen] / n_a[seen]
        weights = (strat[k, block, p, acts] if average else n_a).astype(np.float64)
        total = weights.sum()
        policy[k, :m] = weights / total if total > 0 else 1.0 / m
    root_visits = np.maximum(ni[:, 0, smm.VISITS], 1)[:, None]
    return SMResults(
        legal=legal,
        num_legal=num,
        visits=visits,
        values=values,
        policy=policy,
        root_value=nv[:, 0, :] / root_visits,
        simulations=sk[:, smm.SIMS].copy(),
        leaves=sk[:, smm.LEAVES].copy(),
        tree_nodes=sk[:, smm.NODES].copy(),
        forward_calls=calls,
    )
