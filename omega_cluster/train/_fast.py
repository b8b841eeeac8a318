"""Self-play's searches on the compiled path: every game in flight searched in one batched call.

Internal to :mod:`.selfplay`. When the game has compiled kernels (its plugin hook
``fast_search``), the searches are ISMCTS in a configuration the compiled tree mirrors and the
evaluator is a leaf it has compiled (:func:`omega_cluster.players.fast_leaf.leaf_plan`), the K
searches of one decision round run as one :func:`omega_cluster.search.fast.driver.run_batched`
call: the network sees one batch of leaves gathered across all of them per forward pass, and
nothing but the root packing and the answers crosses into Python. Each search draws its seed
from its game's search stream (``getrandbits(64)``), so a game is still a function of the
self-play seed; the move is chosen from the visits by the same functions as the Python search.
Anything else runs the Python loop (:class:`FastSearches.plan` says why).
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
from omega_cluster.games.encoding import Encoder
from omega_cluster.players.fast_leaf import LeafPlan, leaf_plan
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.search.result import SearchResult

__all__ = ["FastSearches"]


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

    @classmethod
    def plan(
        cls, game: Game, encoder: Encoder, search: ISMCTSConfig, evaluator: Evaluator
    ) -> tuple[FastSearches | None, str]:
        """The compiled searches for this self-play, or ``None`` and why the Python loop runs."""
        from omega_cluster.search.fast.game import FastLeaf, fast_path

        if game.spec.simultaneous:
            return None, "moves are simultaneous (SM-MCTS)"
        plan, why = leaf_plan(evaluator)
        if plan is None:
            return None, why
        leaf = FastLeaf(plan.name, plan.network_value_weight)
        fast, why2 = fast_path(game, search, leaf, encoder=encoder if leaf.network else None)
        if fast is None:
            return None, why2 or "no compiled search"
        fast = _with_policy(fast, plan)
        if fast is None:
            return None, f"no compiled playout for the rollout player {plan.policy!r}"
        return cls(fast, leaf, plan.forward, game.spec.hidden_information), ""

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
            seeds = np.array([rngs[k].getrandbits(64) for k in members], np.uint64)
            budgets = np.array([configs[k].budget for k in members], np.int64)
            who = np.array([players[k] for k in members], np.int64)
            results = run_batched(self.fast, packed, who, budgets, seeds, configs[members[0]],
                                  self.leaf, self._timed_forward if self.forward else None)  # fmt: skip
            self.forward_calls += results.forward_calls
            self.rows += results.rows
            seconds = (time.perf_counter() - started) / len(members)
            for row, k in enumerate(members):
                out[k] = search_result(results, row, players[k], configs[k], rngs[k], seconds,
                                       self.hidden)  # fmt: skip
        return out  # type: ignore[return-value]  # every slot is filled above

    def _timed_forward(
        self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The network's forward on the columns some row uses (the buffers are as wide as the
        game's most legal moves; the action head costs per column)."""
        started = time.perf_counter()
        width = max(1, int(mask.sum(axis=1).max()))
        priors, values = self.forward(obs, feats[:, :width], mask[:, :width])
        full = np.zeros(mask.shape, np.float64)
        full[:, :width] = priors
        self.forward_seconds += time.perf_counter() - started
        return full, values[:, : self.fast.num_players]  # the network has a value per table seat


def _with_policy(fast: Any, plan: LeafPlan) -> Any:
    """``fast`` with its rollout playing ``plan.policy``'s own compiled playout where the game
    builds one per player (a Commander with its own weights), or ``None`` if it cannot."""
    name = plan.name.split("+", 1)[-1]
    if name == "network" or name == "random_rollout" or plan.policy is None:
        return fast
    rollout_for = getattr(fast, "rollout_for", None)
    if rollout_for is None:
        return fast
    entry = rollout_for(plan.policy)
    if entry is None:
        return None
    return dataclasses.replace(fast, rollouts={**fast.rollouts, name: entry})
