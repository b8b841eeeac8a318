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
there (else the first acting player) and that player's legal actions: an evaluator's prior is for
that player only, and SM-MCTS uses it just to order the actions progressive widening unlocks.

Hidden information in simultaneous games (Goofspiel ``imp_info``): each iteration draws a world
with ``sample_world(player, rng)`` (as ISMCTS does) and descends in it; a child is then keyed by
the searcher's ``information_set_key`` after the step (which contains every public fact) instead
of the joint action, so worlds the searcher cannot tell apart share nodes and its statistics are not
split by the opponents' hidden choices. Opponents' bandits live at the searcher's information sets
(single-observer, Cowling, Powley & Whitehouse 2012), their legal sets can differ between worlds
(each visit offers only the actions legal in the world; UCB then counts availability) and the
information-set key must determine who acts. Perfect-information games skip ``sample_world``.

Also: progressive widening (``pw_c``, ``pw_alpha``), cross-turn subtree reuse (:mod:`._smm_tree`)
and an opponent-policy hook (a function that picks an opponent's action instead of its bandit, e.g.
a model of an opponent fitted from its games). The configuration, :class:`SMMCTSConfig`, is in
:mod:`._smm_config` (re-exported here).
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
from omega_cluster.search._smm_config import SELECTION_RULES, OpponentPolicy, SMMCTSConfig
from omega_cluster.search._smm_fast import sm_result, sm_seed, smm_path
from omega_cluster.search._smm_tree import Node, TreeStore, make_node, pick_action, subtree_size
from omega_cluster.search.batching import SearchSteps, run_search
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.result import SearchDiagnostics, SearchResult

__all__ = ["SELECTION_RULES", "SMMCTS", "OpponentPolicy", "SMMCTSConfig"]


class SMMCTS:
    """Simultaneous-move MCTS for one game with one evaluator; see the module docstring.

    ``SMMCTS(game, evaluator, config, **overrides)``: ``overrides`` replace fields of ``config``
    (``SMMCTS(game, ev, simulations=200, selection="exp3")``). Without ``reuse_tree`` an instance
    holds no per-search state, so one instance may run many searches at once (``run_searches``).
    With ``reuse_tree`` it keeps the tree between calls: use one instance per seat, one search at a
    time, and call :meth:`reset` between games.

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
        self._gamma = config.exp3_gamma if self._rule == _bandits.EXP3 else config.rm_gamma
        self._store = TreeStore(self._hidden)
        self.fast: Any = None  # the compiled game the search runs on (None: the Python loop)
        self._plan: Any = None
        self.fast_reason = "fast=False: the Python loop"
        if fast:
            self.fast, self._plan, self.fast_reason = smm_path(game, config, evaluator)

    def reset(self) -> None:
        """Forget the kept tree (call between games when ``reuse_tree`` is on)."""
        self._store.clear()

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
        if self.fast is not None:
            return self._fast_steps(state, player, rng)
        return self._steps(state, player, rng)

    def _fast_steps(
        self, state: State, player: int, rng: random.Random
    ) -> SearchSteps[SearchResult]:
        """The compiled search: no leaf leaves it (its network calls are its own)."""
        import numpy as np

        from omega_cluster.search.fast.smm_driver import run_batched_sm  # numba: on first use

        yield from ()
        started, plan, fast = time.perf_counter(), self._plan, self.fast
        results = run_batched_sm(
            fast, fast.pack(state)[None, :], np.array([player]),
            np.array([self.config.simulations]), np.array([sm_seed(rng)], np.uint64),
            self.config, plan.leaf, plan.forward,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        return sm_result(results, 0, player, self.config, rng, seconds, self._hidden)

    def _steps(self, state: State, player: int, rng: random.Random) -> SearchSteps[SearchResult]:
        cfg = self.config
        start = time.perf_counter()
        deadline = start + cfg.time_limit_s if cfg.time_limit_s is not None else math.inf
        store = self._store
        root = store.find(state, player) if cfg.reuse_tree else None
        reused = root is not None
        hidden, shuffle = self._hidden, cfg.pw_c is not None
        worlds = 0
        counters = {"hook_calls": 0.0, "terminal_leaves": 0.0, "tree_nodes": 1.0}
        if root is None:
            # hidden information: the root's bandits come from a sampled world, never the truth
            root = make_node(state.sample_world(player, rng) if hidden else state, rng, shuffle)
            worlds += hidden
        else:
            counters["tree_nodes"] = float(subtree_size(root))
        reused_visits = root.visits
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
                leaf = self._leaf(world, player, rng)
                answer: LeafEvaluation = (yield [leaf])[0]
                evaluations += 1
                values = answer.values
                if answer.prior is not None and shuffle:
                    self._order_by_prior(path[-1], leaf, answer.prior)
            self._backup(path, values)
            while len(depths) <= depth:
                depths.append(0)
            depths[depth] += 1
        if cfg.reuse_tree:
            store.keep(root, state, player)
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
            reused=reused,
            reused_visits=reused_visits,
            candidates_kept=0,
            candidates_total=0,
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
        hidden, shuffle = self._hidden, self.config.pw_c is not None
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
                key = self._decide(node, world, player, rng, counters)
                depth += 1
            if hidden:  # what the searcher can tell apart (see the module docstring)
                key = world.information_set_key(player)
            child = node.children.get(key)
            if child is None:
                child = make_node(world, rng, shuffle)
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

    def _decide(
        self,
        node: Node,
        world: State,
        player: int,
        rng: random.Random,
        counters: dict[str, float],
    ) -> int | tuple[int, ...]:
        """Every acting player picks from its own bandit (or the hook); apply the joint action.
        Returns the child key (the action, or the joint action tuple)."""
        cfg, hidden = self.config, self._hidden
        hook = cfg.opponent_policy
        picks = []
        for b in node.bandits:
            if hook is not None and b.player != player:
                action = hook(world, b.player, rng)
                counters["hook_calls"] += 1
                if not world.is_legal(b.player, action):
                    raise GameError(
                        f"SMMCTS: opponent_policy returned {action!r} for player {b.player}, "
                        f"not a legal action {list(world.legal_actions(b.player))!r}"
                    )
                b.last, b.last_prob = b.position(action), -1.0
                picks.append(action)
                continue
            cand = self._candidates(b, world) if (hidden or cfg.pw_c is not None) else b.order
            i = _bandits.select(b, cand, self._rule, cfg.c_uct, self._gamma, rng, hidden)
            picks.append(b.legal[i])
        if len(picks) == 1:
            world.apply_action_unchecked(picks[0])
            return picks[0]
        joint = tuple(picks)
        world.apply_joint_action_unchecked(joint)
        return joint

    def _candidates(self, b: Bandit, world: State) -> list[int]:
        """Positions this visit may pick: the progressive-widening prefix of ``b.order``
        (must-keep actions first) and, with hidden information, only actions legal in ``world``."""
        pw = self.config.pw_c
        if self._hidden:
            legal = {b.position(a) for a in world.legal_actions(b.player)}
            ordered = [i for i in b.order if i in legal]
        else:
            ordered = b.order
        if pw is not None:
            k = max(1, b.keep, math.ceil(pw * b.total**self.config.pw_alpha))
            if k < len(ordered):
                ordered = ordered[:k]
        if self._hidden:
            avail = b.avail
            for i in ordered:
                avail[i] += 1
        return ordered

    def _order_by_prior(self, node: Node, leaf: Leaf, prior: tuple[float, ...]) -> None:
        """Progressive widening unlocks the leaf player's actions by decreasing prior."""
        for b in node.bandits:
            if b.player == leaf.player:
                ranked = sorted(range(len(leaf.legal)), key=lambda j: -prior[j])
                b.prioritise([b.position(leaf.legal[j]) for j in ranked])

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
        kept = len(self._candidates_now(b))
        diagnostics = replace(diagnostics, candidates_kept=kept, candidates_total=len(legal))
        action = pick_action(legal, policy, self.config.temperature, rng)
        return SearchResult(player, action, legal, policy, visits, values, root_value, diagnostics)

    def _candidates_now(self, b: Bandit) -> list[int]:
        pw = self.config.pw_c
        if pw is None:
            return b.order
        k = max(1, b.keep, math.ceil(pw * b.total**self.config.pw_alpha))
        return b.order[:k]
