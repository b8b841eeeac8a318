"""Run many searches at once and serve all their leaves with one batched evaluator call.

Searches are written as resumable steps: ``search.steps(state, player, rng)`` returns a generator
that yields a list of :class:`~omega_cluster.search.evaluators.Leaf` requests, receives the matching
list of :class:`~omega_cluster.search.evaluators.LeafEvaluation` through ``send`` and finally
returns its result (``StopIteration.value``). :func:`run_searches` advances every generator to its
next request, evaluates the union of the requests in one call, hands each search its answers and
repeats until all have finished. With one search it is the plain unbatched loop.

A search that yields one leaf at a time gives exactly the same result batched or not, for any
evaluator that is a function of the leaf (and of the leaf's own rng): the order in which the
searches are served never changes what each one sees. Searches that keep several leaves in flight
(virtual loss) trade that identity for bigger batches.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, TypeAlias, TypeVar

from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation, check_evaluations

__all__ = ["BatchStats", "SearchSteps", "run_search", "run_searches"]

R = TypeVar("R")
SearchSteps: TypeAlias = Generator[list[Leaf], list[LeafEvaluation], R]


class BatchStats:
    """Counts of one :func:`run_searches` call (for benchmarks and diagnostics)."""

    __slots__ = ("calls", "leaves", "max_batch")

    def __init__(self) -> None:
        self.calls = 0  # evaluator calls
        self.leaves = 0  # leaves evaluated
        self.max_batch = 0  # largest batch

    @property
    def mean_batch(self) -> float:
        return self.leaves / self.calls if self.calls else 0.0

    def __repr__(self) -> str:
        return f"BatchStats(calls={self.calls}, leaves={self.leaves}, mean_batch={self.mean_batch:.1f})"


def run_searches(
    searches: Sequence[SearchSteps[R]],
    evaluator: Evaluator,
    num_players: int,
    *,
    stats: BatchStats | None = None,
) -> list[R]:
    """Drive ``searches`` to completion, one batched ``evaluator.evaluate`` call per round."""
    results: list[Any] = [None] * len(searches)
    requests: dict[int, list[Leaf]] = {}
    for i, search in enumerate(searches):
        try:
            requests[i] = next(search)
        except StopIteration as stop:
            results[i] = stop.value
    while requests:
        order = list(requests)
        batch = [leaf for i in order for leaf in requests[i]]
        answers = evaluator.evaluate(batch) if batch else []
        check_evaluations(batch, answers, num_players)
        if stats is not None:
            stats.calls += 1
            stats.leaves += len(batch)
            stats.max_batch = max(stats.max_batch, len(batch))
        position = 0
        following: dict[int, list[Leaf]] = {}
        for i in order:
            count = len(requests[i])
            chunk = answers[position : position + count]
            position += count
            try:
                following[i] = searches[i].send(chunk)
            except StopIteration as stop:
                results[i] = stop.value
        requests = following
    return results


def run_search(search: SearchSteps[R], evaluator: Evaluator, num_players: int) -> R:
    """The unbatched loop: one search, its leaves evaluated as it asks for them."""
    return run_searches([search], evaluator, num_players)[0]
