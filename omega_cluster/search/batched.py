"""One batched search interface: K searches in, their K SearchResults out, on one of two paths.

A :class:`BatchedSearch` runs ISMCTS or SM-MCTS (the configuration's type says which) for K
roots at once: ``run(states, players, budgets, rngs)`` returns one
:class:`~omega_cluster.search.result.SearchResult` per root; each root's :class:`Budget` sets
its simulations, move temperature and root noise (self-play's playout caps), and its rng is
its random stream. Two implementations:

* :class:`PythonSearches` — the Python loop: the generator searches (``ISMCTS`` / ``SMMCTS``)
  driven together by :func:`~omega_cluster.search.batching.run_searches`, one batched evaluator
  call per round;
* :class:`CompiledSearches` / :class:`CompiledSMSearches` — the compiled drivers
  (:func:`omega_cluster.search.fast.driver.run_batched`,
  :func:`omega_cluster.search.fast.smm_driver.run_batched_sm`): the K searches in one call, one
  forward pass per batch of network leaves gathered across them.

Which one runs is chosen once, by :func:`batched_search`, when the search is built: the compiled
one where the game, the configuration and the evaluator allow it
(:func:`~omega_cluster.search.fast.game.evaluator_path`,
:func:`~omega_cluster.search._smm_fast.smm_path`), else the Python loop, with the reason kept in
``fast_reason``. ``ISMCTS`` and ``SMMCTS`` build theirs the same way, so a single search and a
self-play round take the same path. Handed a
:class:`~omega_cluster.search.fast.rng.SplitMixRandom`, compiled ISMCTS draws the Python loop's
random numbers (same results, tested); compiled SM-MCTS seeds from the stream (same law).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.search._ismcts_config import ISMCTSConfig
from omega_cluster.search._smm_config import SMMCTSConfig
from omega_cluster.search._smm_fast import sm_result, sm_seed, smm_path
from omega_cluster.search.batching import BatchStats, SearchSteps, run_searches
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.search.fast.game import evaluator_path
from omega_cluster.search.fast.rng import SplitMixRandom
from omega_cluster.search.result import SearchResult

__all__ = [
    "BatchedSearch",
    "Budget",
    "CompiledSMSearches",
    "CompiledSearches",
    "PythonSearches",
    "SearchConfig",
    "batched_search",
    "configure",
]

SearchConfig = ISMCTSConfig | SMMCTSConfig
PYTHON_BY_CHOICE = "fast=False: the Python loop"


@dataclass(frozen=True)
class Budget:
    """One search's share of a batch: its ``simulations``, its move ``temperature`` (``None``:
    the configuration's) and whether the configuration's root noise goes on (``noise``; ISMCTS's
    Dirichlet noise, none for SM-MCTS)."""

    simulations: int | None = None
    temperature: float | None = None
    noise: bool = True


DEFAULT = Budget()


def configure(config: SearchConfig, budget: Budget) -> Any:
    """The configuration of one search under ``budget``."""
    if budget == DEFAULT:
        return config
    changes: dict[str, Any] = {}
    if budget.simulations is not None:
        changes["simulations"] = budget.simulations
    if budget.temperature is not None:
        changes["temperature"] = budget.temperature
    if not budget.noise and isinstance(config, ISMCTSConfig):
        changes["dirichlet_fraction"] = 0.0
    return dataclasses.replace(config, **changes)


class BatchedSearch(Protocol):
    """K searches at once (module docstring); ``fast``: the compiled game the searches run on
    (``None``: the Python loop, ``fast_reason`` says why)."""

    game: Game
    config: Any
    fast: Any
    fast_reason: str

    def run(self, states: Sequence[State], players: Sequence[int], budgets: Sequence[Budget],
            rngs: Sequence[random.Random], *,
            stats: BatchStats | None = None) -> list[SearchResult]:  # fmt: skip
        """One search per root, ``budgets[k]`` and ``rngs[k]`` its own; ``stats`` counts the
        evaluator calls and leaves."""
        ...

    def steps(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        """One search at the configuration's budget as a generator (:mod:`.batching`)."""
        ...


class PythonSearches:
    """The Python loop: one generator search per root, driven by ``run_searches``.

    ``loop``: the search (``ISMCTS`` / ``SMMCTS``) whose ``_run`` generator is this path's,
    which serves the configuration's own budget; other budgets get searches of their own
    configuration, built once each."""

    fast = None

    def __init__(self, game: Game, evaluator: Evaluator, config: SearchConfig, reason: str,
                 loop: Any = None) -> None:  # fmt: skip
        self.game, self.evaluator, self.config = game, evaluator, config
        self.fast_reason = reason
        self._loops: dict[Budget, Any] = {} if loop is None else {DEFAULT: loop}

    def _loop(self, budget: Budget) -> Any:
        search = self._loops.get(budget)
        if search is None:
            from omega_cluster.search.ismcts import ISMCTS  # they build on this module
            from omega_cluster.search.smmcts import SMMCTS

            kind: Callable[..., Any] = ISMCTS if isinstance(self.config, ISMCTSConfig) else SMMCTS
            search = kind(self.game, self.evaluator, configure(self.config, budget), fast=False)
            self._loops[budget] = search
        return search

    def steps(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        steps: SearchSteps[SearchResult] = self._loop(DEFAULT)._run(state, player, rng)
        return steps

    def run(self, states: Sequence[State], players: Sequence[int], budgets: Sequence[Budget],
            rngs: Sequence[random.Random], *,
            stats: BatchStats | None = None) -> list[SearchResult]:  # fmt: skip
        steps = [self._loop(b).steps(s, p, r) for s, p, b, r in zip(states, players, budgets, rngs,
                                                                     strict=True)]  # fmt: skip
        return run_searches(steps, self.evaluator, self.game.num_players, stats=stats)


class _Compiled:
    """What both compiled paths share: the game's kernels, the evaluator's ``LeafPlan``, the
    counters of the forward passes (the benchmarks read them) and the one-search generator."""

    fast_reason = ""

    def __init__(self, game: Game, config: Any, fast: Any, plan: Any) -> None:
        self.game, self.config, self.fast, self.plan = game, config, fast, plan
        self.hidden = game.spec.hidden_information  # every simulation draws a world
        self.forward_seconds = 0.0  # time inside forward (the limit the network sets)
        self.forward_calls = 0
        self.rows = 0  # leaf rows sent to forward
        self.calls = 0  # evaluator calls: forward passes, or batched calls of a rollout leaf
        self.leaves = 0  # leaves evaluated (network rows and rollouts)

    def run(self, states: Sequence[State], players: Sequence[int], budgets: Sequence[Budget],
            rngs: Sequence[random.Random], *,
            stats: BatchStats | None = None) -> list[SearchResult]:  # fmt: skip
        raise NotImplementedError

    def steps(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        """No leaf leaves the compiled search (its network calls are its own)."""
        yield from ()
        (result,) = self.run([state], [player], [DEFAULT], [rng])
        return result

    def _count(self, calls: int, leaves: int, stats: BatchStats | None) -> None:
        self.calls, self.leaves = self.calls + calls, self.leaves + leaves
        if stats is not None:
            stats.calls, stats.leaves = stats.calls + calls, stats.leaves + leaves

    def _timed_forward(self, *arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network's forward, timed (``arrays``: obs, feats, mask and, for the critic leaf,
        the hidden codes)."""
        started = time.perf_counter()
        out: tuple[np.ndarray, np.ndarray] = self.plan.forward(*arrays)
        self.forward_seconds += time.perf_counter() - started
        return out


class CompiledSearches(_Compiled):
    """ISMCTS on the compiled tree: the roots of one root-noise setting in one run of the
    search's :class:`~omega_cluster.search.fast.driver.CompiledTree` (set up once, its arrays
    reused from run to run; a run shares one configuration; budgets are per row, the
    temperature applies after).
    A :class:`SplitMixRandom` hands its stream to the tree and gets it back advanced, so the
    compiled search draws the Python loop's numbers; any other rng seeds it with 64 bits."""

    _tree: Any = None  # the driver's CompiledTree, built at the first run (it imports numba)

    def run(self, states: Sequence[State], players: Sequence[int], budgets: Sequence[Budget],
            rngs: Sequence[random.Random], *,
            stats: BatchStats | None = None) -> list[SearchResult]:  # fmt: skip
        from omega_cluster.search.fast.driver import CompiledTree, search_result  # numba

        if self._tree is None:
            self._tree = CompiledTree(self.fast, self.plan.leaf)
        configs = [configure(self.config, b) for b in budgets]
        out: list[SearchResult | None] = [None] * len(states)
        groups: dict[float, list[int]] = {}
        for k, c in enumerate(configs):
            groups.setdefault(c.dirichlet_fraction, []).append(k)
        network = self.plan.forward is not None
        for members in groups.values():
            started = time.perf_counter()
            packed = np.stack([self.fast.pack(states[k]) for k in members])
            deductions = self.config.world_constraints  # the game's own (fast_path checked)
            if deductions is not None and self.hidden:
                for row, k in enumerate(members):  # once per search, as the Python loop asks
                    facts = deductions(states[k], players[k])
                    if facts is not None:
                        self.fast.constrain(states[k], players[k], facts, packed[row])
            seeds = np.array([_seed(rngs[k]) for k in members], np.uint64)
            sims = np.array([configs[k].simulations for k in members], np.int64)
            who = np.array([players[k] for k in members], np.int64)
            results = self._tree.run(packed, who, sims, seeds, configs[members[0]],
                                     self._timed_forward if network else None)  # fmt: skip
            self.forward_calls += results.forward_calls
            self.rows += results.rows
            self._count(results.forward_calls if network else 1, int(results.leaves.sum()), stats)
            seconds = (time.perf_counter() - started) / len(members)
            for row, k in enumerate(members):
                rng = rngs[k]
                if isinstance(rng, SplitMixRandom):  # the stream goes on where the tree left it
                    rng.state = int(results.rng_states[row])
                out[k] = search_result(results, row, players[k], configs[k], rng, seconds,
                                       self.hidden)  # fmt: skip
        return out  # type: ignore[return-value]  # every slot is filled above


class CompiledSMSearches(_Compiled):
    """SM-MCTS on the compiled driver: every root in one ``run_batched_sm`` call (budgets per
    row, the temperature applied after). Each search's seed is 64 bits of its stream; the move
    is drawn from the strategy as ``SMMCTS`` draws it."""

    def run(self, states: Sequence[State], players: Sequence[int], budgets: Sequence[Budget],
            rngs: Sequence[random.Random], *,
            stats: BatchStats | None = None) -> list[SearchResult]:  # fmt: skip
        from omega_cluster.search.fast.smm_driver import run_batched_sm  # numba

        started = time.perf_counter()
        configs = [configure(self.config, b) for b in budgets]
        leaf = self.plan.leaf
        results = run_batched_sm(
            self.fast, np.stack([self.fast.pack(s) for s in states]), np.array(players, np.int64),
            np.array([c.simulations for c in configs], np.int64),
            np.array([sm_seed(r) for r in rngs], np.uint64), self.config, leaf,
            self._timed_forward if leaf.network else None,
        )  # fmt: skip
        self.forward_calls += results.forward_calls
        self._count(results.forward_calls if leaf.network else 1, int(results.leaves.sum()), stats)
        seconds = (time.perf_counter() - started) / len(states)
        return [sm_result(results, k, players[k], configs[k], rng, seconds, self.hidden)
                for k, rng in enumerate(rngs)]  # fmt: skip


def _seed(rng: random.Random) -> int:
    """The tree's splitmix64 seed: the stream itself for a :class:`SplitMixRandom` (so the
    compiled search draws the Python search's numbers), else 64 bits drawn from ``rng``."""
    return rng.state if isinstance(rng, SplitMixRandom) else rng.getrandbits(64)


def batched_search(game: Game, evaluator: Evaluator, config: SearchConfig, *, fast: bool = True,
                   loop: Any = None) -> BatchedSearch:  # fmt: skip
    """The search of ``config``'s kind (``ISMCTSConfig``: ISMCTS, ``SMMCTSConfig``: SM-MCTS) on
    the compiled path where the game, ``config`` and ``evaluator`` allow it and ``fast`` is on,
    else on the Python loop (``fast_reason`` says why): the one place the path is chosen.
    ``loop``: the ``ISMCTS`` / ``SMMCTS`` building it, whose own loop the Python path runs."""
    reason = PYTHON_BY_CHOICE
    if fast:
        if isinstance(config, SMMCTSConfig):
            kernels, plan, reason = smm_path(game, config, evaluator)
            if kernels is not None:
                return CompiledSMSearches(game, config, kernels, plan)
        else:
            kernels, plan, why = evaluator_path(game, config, evaluator)
            if kernels is not None:
                return CompiledSearches(game, config, kernels, plan)
            reason = why or "no compiled search"
    return PythonSearches(game, evaluator, config, reason, loop)
