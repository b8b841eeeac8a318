"""One ISMCTS search's simulations: the determinizations, the select / evaluate / back-up loop
and the root a root schedule drives.

Internal to :mod:`omega_cluster.search.ismcts` (which owns the configuration, the tree's lifetime
between moves and the result); the tree itself is :mod:`._ismcts_tree`.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence

from omega_cluster.games.api import State
from omega_cluster.search._ismcts_config import WorldConstraints
from omega_cluster.search._ismcts_root import Steps
from omega_cluster.search._ismcts_tree import Node, Tree
from omega_cluster.search.evaluators import Leaf, LeafEvaluation

__all__ = ["Root", "Run", "Worlds", "paired_worlds"]


class Worlds:
    """Determinizations: ``next()`` returns a world the caller may mutate (D×S: clones).

    ``pushed``: a world already drawn (for the root's creation) that the first simulation uses.
    """

    __slots__ = ("_base", "_left", "drawn", "hidden", "per_world", "pushed", "sample")

    def __init__(
        self,
        state: State,
        player: int,
        rng: random.Random,
        per_world: int,
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
        self.per_world = per_world
        self.drawn = 0  # worlds drawn
        self._base: State | None = None
        self._left = 0
        self.pushed: State | None = None

    def next(self) -> State:
        if self.pushed is not None:
            world, self.pushed = self.pushed, None
            return world
        if self.per_world == 1:
            self.drawn += 1
            return self.sample()
        if self._left == 0:
            self._base = self.sample()
            self.drawn += 1
            self._left = self.per_world
        self._left -= 1
        assert self._base is not None
        return self._base if self._left == 0 else self._base.clone()


def paired_worlds(
    worlds: Worlds, count: int, arms: list[int], deadline: float | None, played: list[int]
) -> Iterator[tuple[State, int]]:
    """``count`` worlds, each played once with every root candidate in ``arms`` (clones of one
    world: a paired comparison); ``played[0]`` counts the worlds given out (the clock may stop
    the loop before ``count``)."""
    clock = time.perf_counter
    for _ in range(count):
        if deadline is not None and worlds.drawn and clock() >= deadline:
            return
        world = worlds.next()
        played[0] += 1
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
        table_limit = len(tree.explore) - tree.base_visits - in_flight - 2
        sims = self.simulations  # a local in the loop, written back before every yield
        for world, forced in worlds:
            if sims >= table_limit:  # visit counts outgrow the UCT tables
                tree.ensure_tables(tree.base_visits + sims + in_flight + 2)
                table_limit = len(tree.explore) - tree.base_visits - in_flight - 2
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
        for (world, p, key, nodes, picks), leaf, answer in zip(
            pending, requests, answers, strict=True
        ):
            if key not in tables[p]:  # an earlier leaf of this batch may have created it
                tables[p][key] = tree.new_node(
                    p, leaf.legal, answer.prior, answer.values[p], world, root=False
                )
            tree.backup(nodes, picks, answer.values)


class Root:
    """One search's :class:`~omega_cluster.search._ismcts_root.RootRun`: what a root schedule
    drives (free selection, or worlds played with chosen root candidates)."""

    def __init__(self, run: Run, worlds: Worlds, budget: int, deadline: float | None) -> None:
        self._run, self._worlds, self._deadline = run, worlds, deadline
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

    def admit_all(self) -> None:
        self._run.tree.admit(self._node, len(self._node.acts))

    def free(self) -> Steps:
        """A world per simulation until the budget or the clock runs out, the root selected
        like any node."""
        run, worlds, deadline = self._run, self._worlds, self._deadline
        budget = self.budget - run.simulations
        clock = time.perf_counter
        # one fresh world per simulation: call sample_world directly (the common case)
        fast = worlds.sample if worlds.per_world == 1 else None
        first = worlds.pushed
        worlds.pushed = None

        def stream() -> Iterator[tuple[State, int]]:
            nonlocal first
            n = 0
            while n < budget and (deadline is None or not n or clock() < deadline):
                n += 1
                if first is not None:
                    world, first = first, None
                elif fast is not None:
                    world = fast()
                    run.fast_draws += 1
                else:
                    world = worlds.next()
                yield world, -1

        before = run.simulations
        yield from run.play(stream())
        return run.simulations - before

    def paired(self, count: int, arms: Sequence[int]) -> Steps:
        played = [0]
        arms = list(arms)
        yield from self._run.play(paired_worlds(self._worlds, count, arms, self._deadline, played))
        return played[0]
