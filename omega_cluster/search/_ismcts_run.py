"""One ISMCTS search's simulations: the determinizations, the select / evaluate / back-up loop
and the root a root schedule drives.

Internal to :mod:`omega_cluster.search.ismcts` (which owns the configuration and the result); the
tree itself is :mod:`._ismcts_tree`.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence

from omega_cluster.games.api import State
from omega_cluster.search._ismcts_config import WorldConstraints
from omega_cluster.search._ismcts_root import Steps
from omega_cluster.search._ismcts_tree import Node, Tree
from omega_cluster.search.evaluators import Leaf, LeafEvaluation

__all__ = ["Root", "Run", "Worlds", "paired_worlds"]


class Worlds:
    """Determinizations: ``next()`` returns a fresh world (the caller may mutate it) and counts it.

    ``pushed``: a world already drawn (for the root's creation) that the first simulation uses.
    """

    __slots__ = ("drawn", "hidden", "pushed", "sample")

    def __init__(
        self,
        state: State,
        player: int,
        rng: random.Random,
        constraints: WorldConstraints | None = None,
    ) -> None:
        self.hidden = state.game.spec.hidden_information
        self.sample: Callable[[], State] = state.clone  # perfect information: the state itself
        if self.hidden:
            facts = constraints(state, player) if constraints is not None else None
            if facts is None:
                self.sample = functools.partial(state.sample_world, player, rng)
            else:
                self.sample = functools.partial(state.sample_world, player, rng, facts)
        self.drawn = 0  # worlds drawn
        self.pushed: State | None = None

    def next(self) -> State:
        if self.pushed is not None:
            world, self.pushed = self.pushed, None
            return world
        self.drawn += 1
        return self.sample()


def paired_worlds(worlds: Worlds, count: int, arms: list[int]) -> Iterator[tuple[State, int]]:
    """``count`` worlds, each played once with every root candidate in ``arms`` (clones of one
    world: a paired comparison)."""
    for _ in range(count):
        world = worlds.next()
        for i in arms[:-1]:
            yield world.clone(), i
        yield world, arms[-1]


class Run:
    """One search's simulations over a tree: select (the root's candidate forced or free),
    send new leaves to the evaluator ``in_flight`` at a time, back up; counts as it goes."""

    __slots__ = (
        "descend",
        "fast_draws",
        "histogram",
        "in_flight",
        "leaves",
        "rng",
        "simulations",
        "tree",
    )

    def __init__(self, tree: Tree, rng: random.Random, in_flight: int) -> None:
        self.tree, self.rng, self.in_flight = tree, rng, in_flight
        self.descend = tree.simulator(rng)
        self.simulations = self.leaves = self.fast_draws = 0
        self.histogram = [0] * 16

    def play(
        self, worlds: Iterable[tuple[State, int]]
    ) -> Generator[list[Leaf], list[LeafEvaluation], None]:
        """One simulation per ``(world, root candidate)`` (-1: selected like any node)."""
        tree, in_flight, descend = self.tree, self.in_flight, self.descend
        histogram = self.histogram
        pending: list[tuple[State, int, object, list[Node], list[int]]] = []
        table_limit = len(tree.explore) - in_flight - 2
        sims = self.simulations  # a local in the loop, written back before every yield
        for world, forced in worlds:
            if sims >= table_limit:  # visit counts outgrow the UCT tables
                tree.ensure_tables(sims + in_flight + 2)
                table_limit = len(tree.explore) - in_flight - 2
            nodes: list[Node] = []
            picks: list[int] = []
            if forced >= 0:
                tree.force_root(forced, world, nodes, picks)
            found = descend(world, nodes, picks)
            sims += 1
            depth = len(nodes)
            if depth >= len(histogram):
                histogram.extend([0] * (depth + 1 - len(histogram)))
            histogram[depth] += 1
            if found is None:  # reached the end and backed up: no evaluator needed
                continue
            p, key = found
            pending.append((world, p, key, nodes, picks))
            if len(pending) < in_flight:
                continue
            self.simulations = sims
            yield from self._evaluate(pending)
            pending = []
        self.simulations = sims
        if pending:
            yield from self._evaluate(pending)

    def _evaluate(
        self, pending: list[tuple[State, int, object, list[Node], list[int]]]
    ) -> Generator[list[Leaf], list[LeafEvaluation], None]:
        tree, rng, tables = self.tree, self.rng, self.tree.tables
        requests = [Leaf(w, p, tuple(w.legal_actions(p)), rng) for w, p, _, _, _ in pending]
        answers = yield requests
        self.leaves += len(requests)
        for (_, p, key, nodes, picks), leaf, answer in zip(pending, requests, answers, strict=True):
            if key not in tables[p]:  # an earlier leaf of this batch may have created it
                tables[p][key] = tree.new_node(p, leaf.legal, answer.prior, answer.values[p])
            tree.backup(nodes, picks, answer.values)


class Root:
    """One search's :class:`~omega_cluster.search._ismcts_root.RootRun`: what a root schedule
    drives (free selection, or worlds played with chosen root candidates)."""

    def __init__(self, run: Run, worlds: Worlds, budget: int) -> None:
        self._run, self._worlds = run, worlds
        self.budget = budget
        root = run.tree.root
        assert root is not None
        self._node = root

    @property
    def simulations(self) -> int:
        return self._run.simulations

    @property
    def means(self) -> list[float]:
        return self._node.means

    @property
    def visits(self) -> list[int]:
        return self._node.visits

    def free(self) -> Steps:
        """A fresh world per simulation until the budget runs out, the root selected like any
        node."""
        run, worlds = self._run, self._worlds
        budget = self.budget - run.simulations
        sample = worlds.sample  # one fresh world per simulation: call sample_world directly
        first = worlds.pushed
        worlds.pushed = None

        def stream() -> Iterator[tuple[State, int]]:
            nonlocal first
            for _ in range(budget):
                if first is not None:
                    world, first = first, None
                else:
                    world = sample()
                    run.fast_draws += 1
                yield world, -1

        before = run.simulations
        yield from run.play(stream())
        return run.simulations - before

    def paired(self, count: int, arms: Sequence[int]) -> Steps:
        yield from self._run.play(paired_worlds(self._worlds, count, list(arms)))
        return count
