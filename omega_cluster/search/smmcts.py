"""Simultaneous-move MCTS (SM-MCTS): decoupled per-player bandits, a mixed strategy as the answer.

Where several players act at once (Goofspiel's bids), sequential MCTS would have to pretend one of
them moves first and converge to a pure strategy that an opponent can exploit (the joint-action
MCTS baseline of Lanctot et al. 2013). SM-MCTS keeps, at every node, one bandit per acting player over
*that player's* actions; each player picks from its own bandit without seeing the others' picks, the
joint action is the tuple of picks and the node's children are keyed by joint action (decoupled
selection: Lanctot et al. 2013; Lisý et al. 2013; Tak et al. 2014). Selection rules
(:mod:`._bandits`): decoupled UCB1 (default), Exp3 and regret matching. A node where one player acts
is a bandit of that player alone (so a sequential game degenerates to plain UCT/MCTS); at a chance
node an outcome is drawn from ``chance_outcomes`` with the search's rng.

One iteration: select down the tree (chance nodes are passed through), add the first new decision
node, ask the evaluator for its value (terminal states are scored with ``returns()`` directly), and
back the value vector up: each bandit receives its own player's component, rescaled to [0, 1] with
the game's ``min_return``/``max_return`` when the spec gives both (UCB1 and Exp3 assume [0, 1]).

The search is a generator (``steps``) that yields one :class:`~.evaluators.Leaf` at a time, so
:func:`~.batching.run_searches` serves many searches with one evaluator call and the batched result
equals the unbatched one. The leaf at a simultaneous node names the searched player when it acts
there (else the first acting player) and that player's legal actions; SM-MCTS reads only the
evaluator's values, never its prior.

Hidden information in simultaneous games (Goofspiel ``imp_info``): each iteration draws a world
with ``sample_world(player, rng)`` (as ISMCTS does) and descends in it; a child is then keyed by
the searcher's ``information_set_key`` after the step (which contains every public fact) instead
of the joint action, so worlds the searcher cannot tell apart share nodes and its statistics are not
split by the opponents' hidden choices. Opponents' bandits live at the searcher's information sets
(single-observer, Cowling, Powley & Whitehouse 2012), their legal sets can differ between worlds
(each visit offers only the actions legal in the world; UCB then counts availability) and the
information-set key must determine who acts. Perfect-information games skip ``sample_world``.

Every search grows its own tree (:mod:`._smm_tree`). The configuration, :class:`SMMCTSConfig`, is
in :mod:`._smm_config` (re-exported here).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import fields, replace
from typing import Any

from omega_cluster.games.api import CHANCE, Game, GameError, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.search import _bandits
from omega_cluster.search._bandits import Bandit
from omega_cluster.search._smm_config import SELECTION_RULES, SMMCTSConfig
from omega_cluster.search._smm_tree import Node, make_node, pick_action
from omega_cluster.search.batched import BatchedSearch, batched_search
from omega_cluster.search.batching import SearchSteps, run_search
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.result import SearchDiagnostics, SearchResult

__all__ = ["SELECTION_RULES", "SMMCTS", "SMMCTSConfig"]


class SMMCTS:
    """Simultaneous-move MCTS for one game with one evaluator; see the module docstring.

    ``SMMCTS(game, evaluator, config, **overrides)``: ``overrides`` replace fields of ``config``
    (``SMMCTS(game, ev, simulations=200, selection="exp3")``). An instance holds no per-search
    state (every search grows its own tree), so one instance may run many searches at once
    (``run_searches``).

    The compiled SM-MCTS (:mod:`.fast.smm_driver`) runs the search when the game's plugin has
    ``fast_smm_search``, the evaluator's ``fast_leaf()`` is a leaf it has (random rollout, the
    network, their blend) and the configuration is one it mirrors (:mod:`._smm_fast`): same
    answers in law, not the same random numbers. ``fast=False`` keeps the Python loop;
    ``fast_reason`` says why a search does not take the compiled one.
    """

    def __init__(
        self,
        game: Game,
        evaluator: Evaluator,
        config: SMMCTSConfig | None = None,
        *,
        fast: bool = True,
        **overrides: Any,
    ) -> None:
        config = config if config is not None else SMMCTSConfig()
        if overrides:
            known = {f.name for f in fields(SMMCTSConfig)}
            unknown = sorted(set(overrides) - known)
            if unknown:
                raise ValueError(
                    f"SMMCTS: unknown option(s) {', '.join(unknown)}; "
                    f"valid options: {', '.join(sorted(known))}"
                )
            config = replace(config, **overrides)
        self.game = game
        self.evaluator = evaluator
        self.config = config
        spec = game.spec
        self._num_players = spec.num_players
        self._hidden = spec.hidden_information
        lo, hi = spec.min_return, spec.max_return
        if lo is not None and hi is not None and hi > lo:
            self._lo, self._span = float(lo), float(hi - lo)
        else:  # unknown bounds: rewards used as they are (scale c_uct to the game's returns)
            self._lo, self._span = 0.0, 1.0
        self._rule = SELECTION_RULES[config.selection]
        # the path, chosen once: the compiled SM-MCTS or this Python loop (search.batched)
        self.runner: BatchedSearch = batched_search(game, evaluator, config, fast=fast, loop=self)
        self.fast: Any = self.runner.fast  # the compiled game (None: the Python loop)
        self.fast_reason = self.runner.fast_reason

    def reset(self) -> None:
        """Nothing to forget: every search grows its own tree (kept for the player protocol)."""

    def search(self, state: State, player: int, rng: random.Random) -> SearchResult:
        """Search ``state`` for ``player`` with the evaluator, unbatched."""
        return run_search(self.steps(state, player, rng), self.evaluator, self._num_players)

    # -- the search loop -----------------------------------------------------------------------
    def steps(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        """The search as a generator: yields ``[Leaf]``, receives ``[LeafEvaluation]``, returns
        the :class:`SearchResult` (drive it with :func:`~.batching.run_searches`)."""
        acting = state.current_players
        if player not in acting or player == CHANCE:
            raise GameError(
                f"SMMCTS: player {player} does not act in this state (acting: {acting!r}, "
                f"() = game over, (-1,) = chance); search a state where the player moves"
            )
        return self.runner.steps(state, player, rng)

    def _run(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        cfg = self.config
        start = time.perf_counter()
        deadline = start + cfg.time_limit_s if cfg.time_limit_s is not None else math.inf
        hidden = self._hidden
        counters = {"terminal_leaves": 0.0, "tree_nodes": 1.0}
        # hidden information: the root's bandits come from a sampled world, never the truth
        root = make_node(state.sample_world(player, rng) if hidden else state)
        worlds = int(hidden)
        evaluations, sims = 0, 0
        depths: list[int] = [0]
        while sims < cfg.simulations and (sims == 0 or time.perf_counter() < deadline):
            sims += 1
            if hidden:  # a determinization per iteration, as in ISMCTS
                world = state.sample_world(player, rng)
                worlds += 1
            else:
                world = state.clone()
            path, depth, values = self._select(root, world, player, rng, counters)
            if values is None:  # a new decision node: the evaluator gives its value
                answer: LeafEvaluation = (yield [self._leaf(world, player, rng)])[0]
                evaluations += 1
                values = answer.values
            self._backup(path, values)
            while len(depths) <= depth:
                depths.append(0)
            depths[depth] += 1
        seconds = time.perf_counter() - start
        tree_nodes = int(counters.pop("tree_nodes"))
        extra = dict(counters)
        diagnostics = SearchDiagnostics(
            simulations=sims,
            determinizations=worlds,
            seconds=seconds,
            leaf_evaluations=evaluations,
            tree_nodes=tree_nodes,
            max_depth=len(depths) - 1,
            depth_histogram=tuple(depths),
            extra=extra,
        )
        return self._result(state, player, root, rng, diagnostics)

    def _select(
        self,
        root: Node,
        world: State,
        player: int,
        rng: random.Random,
        counters: dict[str, float],
    ) -> tuple[list[Node], int, Sequence[float] | None]:
        """Selection and expansion in ``world`` (mutated): descend by joint actions (chance nodes
        sampled) until a terminal or a node created by this iteration. Returns the path, its depth
        in decisions and the terminal returns (None: the last node needs the evaluator)."""
        hidden = self._hidden
        rng_random = rng.random
        node, path, depth = root, [root], 0
        while True:
            if not node.acting:  # terminal: the game's own returns, no evaluator call
                counters["terminal_leaves"] += 1
                return path, depth, world.returns()
            if node.visits == 0 and node is not root and not node.chance:
                return path, depth, None
            key: Hashable
            if node.chance:
                key = self._chance_step(node, world, rng_random)
            else:
                key = self._decide(node, world, rng)
                depth += 1
            if hidden:  # what the searcher can tell apart (see the module docstring)
                key = world.information_set_key(player)
            child = node.children.get(key)
            if child is None:
                child = make_node(world)
                node.children[key] = child
                counters["tree_nodes"] += 1
            elif hidden and child.acting != world.current_players:
                raise GameError(
                    f"SMMCTS: {type(world).__name__}.information_set_key({player}) does not "
                    f"determine who acts ({child.acting!r} vs {world.current_players!r})"
                )
            node = child
            path.append(node)

    def _backup(self, path: list[Node], values: Sequence[float]) -> None:
        """Every node on the path counts the visit and sums the value vector; every bandit that
        selected in this iteration (all but the last node's) gets its player's rescaled value."""
        lo, inv_span, rule, update = self._lo, 1.0 / self._span, self._rule, _bandits.update
        last = path[-1]
        for nd in path:
            nd.visits += 1
            vs = nd.value
            for p, v in enumerate(values):
                vs[p] += v
            if nd is not last:
                for b in nd.bandits:
                    update(b, (values[b.player] - lo) * inv_span, rule)

    def _leaf(self, world: State, player: int, rng: random.Random) -> Leaf:
        acting = world.current_players
        who = player if player in acting else acting[0]
        return Leaf(world, who, tuple(world.legal_actions(who)), rng)

    def _chance_step(self, node: Node, world: State, rng_random: Callable[[], float]) -> int:
        outcomes = world.chance_outcomes() if self._hidden else node.outcomes
        action = sample_chance(outcomes, rng_random())
        world.apply_action_unchecked(action)
        return action

    def _decide(self, node: Node, world: State, rng: random.Random) -> int | tuple[int, ...]:
        """Every acting player picks from its own bandit; apply the joint action. Returns the
        child key (the action, or the joint action tuple)."""
        cfg, hidden, rule = self.config, self._hidden, self._rule
        picks = []
        for b in node.bandits:
            cand = self._candidates(b, world) if hidden else b.order
            i = _bandits.select(b, cand, rule, cfg.c_uct, _bandits.GAMMA, rng, hidden)
            picks.append(b.legal[i])
        if len(picks) == 1:
            world.apply_action_unchecked(picks[0])
            return picks[0]
        joint = tuple(picks)
        world.apply_joint_action_unchecked(joint)
        return joint

    def _candidates(self, b: Bandit, world: State) -> list[int]:
        """Positions this visit (hidden information) may pick: the actions legal in ``world``,
        each counted as available."""
        legal = {b.position(a) for a in world.legal_actions(b.player)}
        ordered = [i for i in b.order if i in legal]
        avail = b.avail
        for i in ordered:
            avail[i] += 1
        return ordered

    # -- the answer ----------------------------------------------------------------------------
    def _result(
        self,
        state: State,
        player: int,
        root: Node,
        rng: random.Random,
        diagnostics: SearchDiagnostics,
    ) -> SearchResult:
        b = next(b for b in root.bandits if b.player == player)
        legal = tuple(sorted(state.legal_actions(player)))
        positions = [b.position(a) for a in legal]
        weights = (
            _bandits.average_strategy(b, self._rule)
            if self.config.final_strategy == "average"
            else _bandits.average_strategy(b, _bandits.UCB)  # normalised visits
        )
        raw = [weights[i] for i in positions]
        total = sum(raw)
        policy = tuple(x / total for x in raw) if total > 0 else (1.0 / len(legal),) * len(legal)
        visits = tuple(b.n[i] for i in positions)
        lo, span = self._lo, self._span
        values = tuple(lo + span * b.w[i] / b.n[i] if b.n[i] else math.nan for i in positions)
        root_value = tuple(v / root.visits if root.visits else 0.0 for v in root.value)
        action = pick_action(legal, policy, self.config.temperature, rng)
        return SearchResult(player, action, legal, policy, visits, values, root_value, diagnostics)
