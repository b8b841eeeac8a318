"""Self-play's searches on the compiled path: every game in flight searched in one batched call.

Internal to :mod:`.selfplay`. When the game has compiled kernels (its plugin hook
``fast_search``), the searches are ISMCTS in a configuration the compiled tree mirrors and the
evaluator is a leaf it has compiled (its ``fast_leaf()``: :func:`omega_cluster.search.fast.game.evaluator_path`), the K
searches of one decision round run as one :func:`omega_cluster.search.fast.driver.run_batched`
call: the network sees one batch of leaves gathered across all of them per forward pass, and
nothing but the root packing and the answers crosses into Python. Each search draws its seed
from its game's search stream (``getrandbits(64)``), so a game is still a function of the
self-play seed; the move is chosen from the visits by the same functions as the Python search.
Anything else runs the Python loop (:class:`FastSearches.plan` says why). Simultaneous games
(SM-MCTS) have their own: :class:`FastSMSearches`.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.games.api import Game
from omega_cluster.search.batching import BatchStats
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.search.fast.rng import SplitMixRandom
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.search.result import SearchResult
from omega_cluster.search.smmcts import SMMCTSConfig

__all__ = ["FastSMSearches", "FastSearches"]


def _seed(rng: random.Random) -> int:
    """The tree's splitmix64 seed: the stream itself for a :class:`SplitMixRandom` (so the
    compiled search draws the Python search's numbers), else 64 bits drawn from ``rng``."""
    return rng.state if isinstance(rng, SplitMixRandom) else rng.getrandbits(64)


@dataclass
class FastSearches:
    """The compiled searches of one :class:`~.selfplay.SelfPlay` (built by :meth:`plan`)."""

    fast: Any  # the game's FastGame
    leaf: Any  # the FastLeaf
    forward: Any  # the network's forward on padded buffers (None: rollouts only)
    hidden: bool  # the game hides information (every simulation draws a world)
    forward_seconds: float = 0.0  # time inside forward (the limit the network sets)
    forward_calls: int = 0
    rows: int = 0
    calls: int = 0  # evaluator calls: forward passes, or batched calls of a rollout leaf
    leaves: int = 0  # leaves evaluated (network rows and rollouts)

    @classmethod
    def plan(
        cls, game: Game, search: ISMCTSConfig, evaluator: Evaluator
    ) -> tuple[FastSearches | None, str]:
        """The compiled searches for this self-play, or ``None`` and why the Python loop runs."""
        from omega_cluster.search.fast.game import evaluator_path

        if game.spec.simultaneous:
            return None, "moves are simultaneous (SM-MCTS)"
        fast, plan, why = evaluator_path(game, search, evaluator)
        if fast is None or plan is None:
            return None, why or "no compiled search"
        return cls(fast, plan.leaf, plan.forward, game.spec.hidden_information), ""

    def search(
        self,
        roots: Sequence[Any],
        players: Sequence[int],
        configs: Sequence[ISMCTSConfig],
        rngs: Sequence[random.Random],
    ) -> list[SearchResult]:
        """One search per root (``configs[k]``: its budget, temperature and root noise), run
        together; grouped by root noise, since a batched call shares one configuration."""
        from omega_cluster.search.fast.driver import run_batched, search_result

        out: list[SearchResult | None] = [None] * len(roots)
        groups: dict[float, list[int]] = {}
        for k, c in enumerate(configs):
            groups.setdefault(c.dirichlet_fraction, []).append(k)
        for members in groups.values():
            started = time.perf_counter()
            pack = self.fast.pack
            packed = np.stack([pack(roots[k]) for k in members])
            seeds = np.array([_seed(rngs[k]) for k in members], np.uint64)
            budgets = np.array([configs[k].budget for k in members], np.int64)
            who = np.array([players[k] for k in members], np.int64)
            results = run_batched(self.fast, packed, who, budgets, seeds, configs[members[0]],
                                  self.leaf, self._timed_forward if self.forward else None)  # fmt: skip
            self.forward_calls += results.forward_calls
            self.rows += results.rows
            self.calls += results.forward_calls if self.forward else 1
            self.leaves += int(results.leaves.sum())
            seconds = (time.perf_counter() - started) / len(members)
            for row, k in enumerate(members):
                rng = rngs[k]
                if isinstance(rng, SplitMixRandom):  # the stream goes on where the tree left it
                    rng.state = int(results.rng_states[row])
                out[k] = search_result(results, row, players[k], configs[k], rngs[k], seconds,
                                       self.hidden)  # fmt: skip
        return out  # type: ignore[return-value]  # every slot is filled above

    def _timed_forward(
        self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray, *hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The network's forward, timed (the limit the network sets on self-play); ``hidden``:
        the critic leaf's hidden codes."""
        started = time.perf_counter()
        out = self.forward(obs, feats, mask, *hidden)
        self.forward_seconds += time.perf_counter() - started
        return out


@dataclass
class FastSMSearches:
    """The compiled SM-MCTS searches of one self-play of a simultaneous game (:meth:`plan`).

    Every acting player's search of a decision round, across all games in flight, runs in one
    :func:`~omega_cluster.search.fast.smm_driver.run_batched_sm` call (a batched call shares the
    configuration and the leaf; budgets differ by row, the temperature is applied afterwards),
    so the network sees the leaves of all of them in each forward pass. Each search's seed is
    64 bits of its game's search stream; the move is drawn from the strategy as SMMCTS does.
    """

    fast: Any  # the game's compiled SM-MCTS kernels
    plan: Any  # the evaluator's LeafPlan
    config: SMMCTSConfig  # the searches' shared configuration (its simulations: per row)
    hidden: bool
    forward_seconds: float = 0.0
    forward_calls: int = 0
    calls: int = 0  # evaluator calls: forward passes, or batched calls of a rollout leaf
    leaves: int = 0

    @classmethod
    def plan_for(
        cls, game: Game, config: SMMCTSConfig, evaluator: Evaluator
    ) -> tuple[FastSMSearches | None, str]:
        """The compiled searches, or ``None`` and why the Python SMMCTS loop runs."""
        from omega_cluster.search._smm_fast import smm_path

        fast, plan, why = smm_path(game, config, evaluator)
        if fast is None:
            return None, why
        return cls(fast, plan, config, game.spec.hidden_information), ""

    def search(
        self,
        roots: Sequence[Any],
        players: Sequence[int],
        budgets: Sequence[int],
        temperatures: Sequence[float],
        rngs: Sequence[random.Random],
        stats: BatchStats,
    ) -> list[SearchResult]:
        """One search per root, all in one batched call; ``temperatures[k]`` draws row k's move;
        ``stats`` counts the evaluator calls and leaves."""
        from omega_cluster.search._smm_fast import sm_result, sm_seed
        from omega_cluster.search.fast.smm_driver import run_batched_sm

        started = time.perf_counter()
        leaf = self.plan.leaf
        results = run_batched_sm(
            self.fast, np.stack([self.fast.pack(s) for s in roots]), np.array(players, np.int64),
            np.array(budgets, np.int64), np.array([sm_seed(r) for r in rngs], np.uint64),
            self.config, leaf, self._timed_forward if leaf.network else None,
        )  # fmt: skip
        self.forward_calls += results.forward_calls
        calls, leaves = results.forward_calls if leaf.network else 1, int(results.leaves.sum())
        self.calls, self.leaves = self.calls + calls, self.leaves + leaves
        stats.calls, stats.leaves = stats.calls + calls, stats.leaves + leaves
        seconds = (time.perf_counter() - started) / len(roots)
        out = []
        for k, rng in enumerate(rngs):
            config = dataclasses.replace(self.config, temperature=temperatures[k])
            out.append(sm_result(results, k, players[k], config, rng, seconds, self.hidden))
        return out

    def _timed_forward(
        self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        started = time.perf_counter()
        out = self.plan.forward(obs, feats, mask)
        self.forward_seconds += time.perf_counter() - started
        return out
