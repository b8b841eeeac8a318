"""Batched leaf evaluation gives the same searches as the unbatched loop (the issue's identity test).

Several PUCT ISMCTS searches on Mexican Train 4p share one ``run_searches`` call whose evaluator is
the torch policy/value MLP of ``bench/bench_batching.py``, built with ``exact=True``: float64 with
weights on a 2^-10 grid and integer inputs, so every partial sum is exact and a row's output does
not depend on the batch it is computed in (float32 BLAS kernels round differently per batch
shape, which is a property of the arithmetic, not of the search). With one leaf in flight per
search, every search must then return exactly what it returns alone.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import torch

from omega_cluster.games import make_game
from omega_cluster.search import BatchStats, run_search, run_searches
from omega_cluster.search.batching import SearchSteps
from omega_cluster.search.ismcts import ISMCTS
from omega_cluster.search.result import SearchResult

ROOT = Path(__file__).resolve().parents[2]


def load_bench() -> ModuleType:
    """``bench/bench_batching.py`` by path (``bench`` is not an installed package)."""
    name = "bench_batching_under_test"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "bench_batching.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def without_timing(result: SearchResult) -> SearchResult:
    return dataclasses.replace(
        result, diagnostics=dataclasses.replace(result.diagnostics, seconds=0.0)
    )


def test_batched_searches_equal_unbatched_with_the_exact_mlp() -> None:
    torch.set_num_threads(1)
    bench = load_bench()
    game = make_game("mexican_train", players=4, rounds=1)
    mlp = bench.MLPEvaluator(game, hidden=32, seed=3, exact=True)
    evaluator = mlp.evaluator()
    roots = bench.root_positions(game, 6, seed=5)

    def steps(i: int, in_flight: int = 1) -> SearchSteps[SearchResult]:
        state, player = roots[i]
        search = ISMCTS(
            game, evaluator, selection="puct", simulations=40, leaves_in_flight=in_flight
        )
        return search.steps(state, player, random.Random(100 + i))

    stats = BatchStats()
    together = run_searches([steps(i) for i in range(6)], evaluator, 4, stats=stats)
    alone = [run_search(steps(i), evaluator, 4) for i in range(6)]
    assert [without_timing(r) for r in together] == [without_timing(r) for r in alone]
    assert stats.max_batch == 6 and stats.mean_batch > 4  # the leaves really were batched
    assert len({r.visits for r in together}) > 1  # different roots, different searches
    for result in together:
        assert sum(result.visits) > 0 and all(p >= 0 for p in result.policy)

    # with virtual loss (4 leaves in flight) the batches grow; results stay legal
    wide_stats = BatchStats()
    wide = run_searches([steps(i, 4) for i in range(6)], evaluator, 4, stats=wide_stats)
    assert wide_stats.mean_batch > stats.mean_batch
    assert all(r.action in r.legal for r in wide)


def test_exact_mlp_rows_do_not_depend_on_the_batch() -> None:
    """The premise of the identity test, checked directly on real leaves."""
    bench = load_bench()
    game = make_game("mexican_train", players=4, rounds=1)
    mlp = bench.MLPEvaluator(game, hidden=32, seed=1, exact=True)
    leaves = bench.leaf_pool(game, 40, seed=2)
    batch = mlp(leaves)
    assert batch == [mlp([leaf])[0] for leaf in leaves]
    assert batch[:7] == mlp(leaves[:7])
    for leaf, ev in zip(leaves, batch, strict=True):
        assert len(ev.prior) == len(leaf.legal) and abs(sum(ev.prior) - 1.0) < 1e-9
        assert abs(sum(ev.values) - 1.0) < 1e-9  # expected win shares
