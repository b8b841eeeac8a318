"""Root schedules of ISMCTS: how one search spends its budget at the root, as functions passed in.

A variant of the root is a function, not a string option (as mctx passes
``root_action_selection_fn`` to its policies): ``ISMCTSConfig.root_schedule`` is called once per
search with a :class:`RootRun` and drives the simulations through it; what it returns is the
index of the root candidate to play (``None``: the final policy chooses, as for any search). Two
schedules ship:

* :func:`tree_root` — the root is selected like any node (UCT or PUCT), the budget spent by the
  tree's own selection: plain ISMCTS (Cowling, Powley & Whitehouse 2012).
* :func:`paired_root` — full paired evaluation: every world drawn is played once with every root
  candidate (clones of one world, so the same hidden hands and chance behind every move: common
  random numbers), in batches, until the budget is spent; the best mean is played. Candidates
  that matched the leader by the same difference on every batch leave after a few batches
  (nothing tells them apart). A paired comparison of the moves aims at the move finally played
  (simple regret) rather than at the visits on the way. At Mexican Train 4p against three
  Commanders it plays stronger than the tree root, whose per-decision gain more budget did not
  lift (``bench/bench_ismcts.py --strength``; the study in ``experiments/decisions/``).

A schedule of one's own is any function with the signature of :data:`RootSchedule`; it may mix
:meth:`RootRun.free` and :meth:`RootRun.paired` calls and read the root's running ``means`` and
``visits`` between them.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Protocol

from omega_cluster.search.evaluators import Leaf, LeafEvaluation

__all__ = ["PAIRED_BATCH", "RootRun", "RootSchedule", "paired_root", "tree_root"]

Steps = Generator[list[Leaf], list[LeafEvaluation], int]


class RootRun(Protocol):
    """What a root schedule drives: one search's simulations at the root (see module docstring)."""

    @property
    def budget(self) -> int:
        """Simulations the search may run (``ISMCTSConfig.simulations``)."""
        ...

    @property
    def simulations(self) -> int:
        """Simulations run so far by this search."""
        ...

    @property
    def means(self) -> Sequence[float]:
        """Running mean value of each root candidate, for the searcher."""
        ...

    @property
    def visits(self) -> Sequence[int]:
        """Visits of each root candidate."""
        ...

    def free(self) -> Steps:
        """Spend the rest of the budget selecting the root like any node; returns the
        simulations run."""
        ...

    def paired(self, count: int, arms: Sequence[int]) -> Steps:
        """Play ``count`` fresh worlds, each once with every candidate index in ``arms`` (clones
        of one world); returns the worlds played."""
        ...


RootSchedule = Callable[[RootRun], Generator[list[Leaf], list[LeafEvaluation], "int | None"]]
"""``schedule(run) -> index of the root candidate to play, or None``, a generator like a search."""

PAIRED_BATCH = 20  # worlds per batch of paired_root (every candidate still in plays each)
TIED_BATCHES = 4  # batches every candidate plays before a tied one may leave


def tree_root(run: RootRun) -> Generator[list[Leaf], list[LeafEvaluation], int | None]:
    """The root selected like any node: the whole budget through the tree's selection."""
    yield from run.free()
    return None


def paired_root(run: RootRun) -> Generator[list[Leaf], list[LeafEvaluation], int | None]:
    """Full paired evaluation at the root (module docstring): batches of ``PAIRED_BATCH``
    common worlds, each played with every candidate still in, until the budget runs out; from the ``TIED_BATCHES``-th batch on, a candidate whose batch means differ from
    the leader's by the same amount on every batch leaves. Plays the best mean."""
    means, visits = run.means, run.visits
    alive = list(range(len(means)))
    batch_means: dict[int, list[float]] = {i: [] for i in alive}
    while True:
        count = min(PAIRED_BATCH, (run.budget - run.simulations) // len(alive))
        if count <= 0:
            if run.simulations:
                break
            count = 1  # a budget under one world per move: still one world for each
        before = [means[i] * visits[i] for i in alive]
        yield from run.paired(count, alive)
        for i, total in zip(alive, before, strict=True):
            batch_means[i].append((means[i] * visits[i] - total) / count)
        if len(alive) == 1:
            break
        if len(batch_means[alive[0]]) >= TIED_BATCHES:
            leader = max(alive, key=lambda i: (means[i], -i))
            lead = batch_means[leader]
            alive = [i for i in alive if i == leader or not _tied(lead, batch_means[i])]
            if len(alive) == 1:
                break
    return max(alive, key=lambda i: (means[i], -i))


def _tied(lead: list[float], other: list[float]) -> bool:
    """Whether ``other``'s batch means differ from ``lead``'s by the same amount on every batch
    (rounding aside) and do not beat them: no further world can tell the two apart."""
    k = len(lead)
    diffs = [a - b for a, b in zip(lead, other, strict=True)]
    mean = sum(diffs) / k
    var = sum((d - mean) ** 2 for d in diffs) / (k - 1)
    return var <= 1e-18 and mean >= -1e-9
