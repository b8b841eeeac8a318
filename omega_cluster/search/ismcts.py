"""Information-set Monte Carlo tree search for hidden-information games with any number of players.

Single-observer ISMCTS (Cowling, Powley & Whitehouse 2012): each simulation draws a
determinization — a full state from the searcher's information set,
``state.sample_world(player, rng)`` — and walks one tree whose nodes are information sets, keyed
by (acting player, ``information_set_key(acting player)``). Selection is UCT, PUCT (with the
evaluator's prior) or Smooth UCT (:mod:`._ismcts_bandit`; the Python loop only), an action's
exploration term counting how often it was *available* (the subset-armed bandit); chance nodes
are sampled from ``chance_outcomes``. The first information set not in the tree is expanded as a
:class:`~omega_cluster.search.evaluators.Leaf` for the evaluator, and the value *vector* is
backed up: per action, the acting player's mean return (which that player maximises) and the
summed returns of every player (the root value). Terminal states never reach the evaluator: their
values are ``state.returns()``.

Searches are generators (:mod:`omega_cluster.search.batching`) that yield the leaves they need,
so many searches share one batched evaluator call; with ``leaves_in_flight > 1`` a search
selects several paths before yielding, each counting as a loss until its value arrives (virtual
loss). Also here: Dirichlet root noise and a visit temperature for self-play, and
``world_constraints``, public deductions every determinization honours (a game gives its own
through its plugin). The result is a :class:`~omega_cluster.search.result.SearchResult`.

How the root spends the budget is a function passed in, ``root_schedule`` (:mod:`._ismcts_root`):
:func:`tree_root` selects the root like any node (the default); :func:`paired_root` plays every
world drawn with every root move and plays the best mean, with common random numbers between the
moves. Pairing suits large hidden hands, where the search is mostly a bandit over the root's moves.

Information leaks: the search reads the real ``state`` only through ``legal_actions(player)``,
``information_set_key(player)``, ``sample_world(player, rng)`` and ``world_constraints(state,
player)`` (which must read only what ``player`` knows), so two states that ``player`` cannot tell
apart give identical results for the same rng (tested, for the compiled loop too).

The compiled loop (:mod:`omega_cluster.search.fast`, numba) runs the search for a game whose
plugin gives compiled kernels (``fast_search``), a configuration the compiled tree mirrors and an
evaluator with a compiled leaf (its ``fast_leaf()``); ``fast=False`` keeps the Python loop, and
``ISMCTS.fast_reason`` says why a search does not take the compiled one. Both loops draw the same
random numbers for the same purposes, so handed a
:class:`~omega_cluster.search.fast.rng.SplitMixRandom` they give the same result (tested). The
loop is chosen once, when the search is built (:func:`~omega_cluster.search.batched.batched_search`,
which self-play's batched searches use too).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Generator
from typing import Any

from omega_cluster.games.api import Game, RngLike, State, as_rng
from omega_cluster.search._ismcts_config import ISMCTSConfig, WorldConstraints, simulation_bytes
from omega_cluster.search._ismcts_policy import (
    choose_action,
    dirichlet_noise,
    final_policy,
    root_statistics,
)
from omega_cluster.search._ismcts_root import RootRun, RootSchedule, paired_root, tree_root
from omega_cluster.search._ismcts_run import Root, Run, Worlds
from omega_cluster.search._ismcts_tree import (
    IllegalSearchStateError,
    Node,
    Tree,
    simultaneous_error,
)
from omega_cluster.search.batched import BatchedSearch, batched_search
from omega_cluster.search.batching import SearchSteps, run_search
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.fast.game import FastGame
from omega_cluster.search.result import SearchDiagnostics, SearchResult

__all__ = [
    "ISMCTS",
    "ISMCTSConfig",
    "IllegalSearchStateError",
    "RootRun",
    "RootSchedule",
    "WorldConstraints",
    "paired_root",
    "simulation_bytes",
    "tree_root",
]


class ISMCTS:
    """Single-observer ISMCTS over ``game`` with leaves from ``evaluator`` (module docstring).

    ``config`` defaults to :class:`ISMCTSConfig` (); keyword ``overrides`` replace its fields:
    ``ISMCTS(game, evaluator, simulations=2000, selection="puct")``. Every search grows its own
    tree, so one instance may run many searches at once (batched).
    ``fast`` is the compiled game the search runs on (None: the Python loop, ``fast_reason``
    says why); ``fast=False`` keeps the Python loop whatever the game and leaf (the reference
    of the benchmarks and equality tests).
    """

    def __init__(
        self,
        game: Game,
        evaluator: Evaluator,
        config: ISMCTSConfig | None = None,
        *,
        fast: bool = True,
        **overrides: Any,
    ) -> None:
        if not isinstance(evaluator, Evaluator):
            raise TypeError(
                f"evaluator must implement evaluate(leaves) -> list[LeafEvaluation], "
                f"got {evaluator!r}"
            )
        base = config if config is not None else ISMCTSConfig()
        fields = {f.name for f in dataclasses.fields(ISMCTSConfig)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise TypeError(
                f"ISMCTS: unknown option(s) {', '.join(unknown)}; options: {', '.join(sorted(fields))}"
            )
        self.game = game
        self.evaluator = evaluator
        self.config = dataclasses.replace(base, **overrides) if overrides else base
        # the path, chosen once: the compiled tree when the game, configuration and leaf
        # allow it, else this Python loop (search.batched)
        self.runner: BatchedSearch = batched_search(game, evaluator, self.config, fast=fast,
                                                    loop=self)  # fmt: skip
        self.fast: FastGame | None = self.runner.fast
        self.fast_reason = self.runner.fast_reason

    def reset(self) -> None:
        """Nothing to forget: every search grows its own tree (kept for the player protocol)."""

    def search(self, state: State, player: int, rng: RngLike) -> SearchResult:
        """Run one search to the end, evaluating leaves as they come (the unbatched loop)."""
        return run_search(self.steps(state, player, rng), self.evaluator, self.game.num_players)

    def steps(self, state: State, player: int, rng: RngLike) -> SearchSteps[SearchResult]:
        """The search as a generator (see :mod:`omega_cluster.search.batching`)."""
        spec = self.game.spec
        if state.game.spec != spec:
            raise ValueError(
                f"ISMCTS built for {spec.name} ({spec.num_players} players) was given a state of "
                f"{state.game.spec.name} ({state.game.spec.num_players} players)"
            )
        acting = state.current_players
        if len(acting) > 1:
            raise simultaneous_error(state, acting)
        if acting != (player,):
            who = acting or "none, the game is over"
            raise ValueError(f"{spec.name}: player {player} does not act in this state ({who})")
        return self.runner.steps(state, player, as_rng(rng))

    # -- the search ------------------------------------------------------------------------------
    def _new_tree(self) -> Tree:
        cfg = self.config
        virtual_loss = None
        if cfg.leaves_in_flight > 1:
            virtual_loss = (
                self.game.spec.min_return if self.game.spec.min_return is not None else 0.0
            )
        return Tree(
            self.game.num_players,
            puct=cfg.selection == "puct",
            smooth=cfg.selection == "smooth_uct",
            c_uct=cfg.c_uct,
            c_puct=cfg.c_puct,
            virtual_loss=virtual_loss,
        )

    def _run(
        self, state: State, player: int, rng: random.Random
    ) -> Generator[list[Leaf], list[LeafEvaluation], SearchResult]:
        cfg = self.config
        started = time.perf_counter()
        legal = list(state.legal_actions(player))
        root_key = state.information_set_key(player)
        tree = self._new_tree()
        worlds = Worlds(state, player, rng, cfg.world_constraints)
        leaves = 0
        world = worlds.next()
        worlds.pushed = world  # the first simulation starts from it
        prior: tuple[float, ...] | None = None
        value = 0.0
        if tree.puct:  # PUCT needs the root's prior before the first selection
            (answer,) = yield [Leaf(world, player, tuple(legal), rng)]
            leaves += 1
            prior, value = answer.prior, answer.values[player]
        root = tree.new_node(player, legal, prior, value)
        tree.tables[player][root_key] = root
        tree.root = root
        clean_prior = root.prior
        if cfg.dirichlet_fraction > 0.0:
            root.prior = dirichlet_noise(
                clean_prior, cfg.dirichlet_alpha, cfg.dirichlet_fraction, rng
            )
        try:
            counts = yield from self._simulate(tree, worlds, rng, started)
        finally:
            root.prior = clean_prior
        simulations, histogram, more_leaves, winner = counts
        leaves += more_leaves
        drawn = worlds.drawn if worlds.hidden else 0
        return self._result(
            root, legal, player, rng, started, simulations, histogram, leaves, drawn,
            tree.size(), winner,
        )  # fmt: skip

    def _simulate(
        self, tree: Tree, worlds: Worlds, rng: random.Random, started: float
    ) -> Generator[list[Leaf], list[LeafEvaluation], tuple[int, list[int], int, int | None]]:
        """Run the budget through the root schedule: select, expand (via the evaluator), back up.
        Returns the simulation count, the depth histogram, the number of leaves evaluated and
        the root candidate the schedule chose (``None``: the final policy chooses)."""
        cfg = self.config
        run = Run(tree, rng, cfg.leaves_in_flight)
        root = Root(run, worlds, cfg.simulations)
        winner = yield from cfg.root_schedule(root)
        if winner is not None and not (isinstance(winner, int) and 0 <= winner < len(root.means)):
            raise ValueError(
                f"ISMCTS: root_schedule {cfg.root_schedule!r} returned {winner!r}; expected None "
                f"or the index of a root candidate (0..{len(root.means) - 1})"
            )
        worlds.drawn += run.fast_draws
        histogram = run.histogram
        while histogram and histogram[-1] == 0:
            histogram.pop()
        return run.simulations, histogram, run.leaves, winner

    def _result(
        self,
        root: Node,
        legal: list[int],
        player: int,
        rng: random.Random,
        started: float,
        simulations: int,
        histogram: list[int],
        leaves: int,
        determinizations: int,
        tree_nodes: int,
        winner: int | None = None,
    ) -> SearchResult:
        cfg = self.config
        stats = root_statistics(root, self.game.num_players)
        policy = final_policy(stats.visits)
        if winner is not None and cfg.temperature == 0.0:  # the root schedule's choice
            index = legal.index(root.acts[winner])
        else:
            index = choose_action(policy, stats.visits, cfg.temperature, rng)
        diagnostics = SearchDiagnostics(
            simulations=simulations,
            determinizations=determinizations,
            seconds=time.perf_counter() - started,
            leaf_evaluations=leaves,
            tree_nodes=tree_nodes,
            max_depth=len(histogram) - 1,
            depth_histogram=tuple(histogram),
        )
        return SearchResult(
            player=player,
            action=legal[index],
            legal=tuple(legal),
            policy=tuple(policy),
            visits=tuple(stats.visits),
            action_values=tuple(stats.action_values),
            root_value=stats.root_value,
            diagnostics=diagnostics,
        )
