"""Leaf evaluation for the searches: one protocol, batched, and its basic implementations.

A search (``ismcts``, ``smmcts``) reaches a leaf — a decision state it has not expanded — and needs
two things: a value per player (the expected return of every seat from here) and, for PUCT, a prior
over the acting player's legal actions. It asks an :class:`Evaluator` for a *batch* of
:class:`Leaf` requests at once, because the network forward pass is the bottleneck of neural search:
many searches running in one process (one per concurrent self-play game) submit their leaves
together and one batched call serves them all (:mod:`omega_cluster.search.batching`).

Every leaf carries the ``rng`` of the search that made it, so a stochastic evaluator (a rollout)
draws from that search's own stream: batched and unbatched runs then give identical results.

Implementations here:

* :class:`RolloutEvaluator` — play the leaf to the end with any Player for every seat (random,
  Commander, …), ``k`` rollouts averaged: the rollout leaf;
* :class:`FunctionEvaluator` — a batched value/prior callable (the policy/value network plugs in
  here: the network leaf);
* :class:`HeuristicEvaluator` — a fixed value function of a state, no prior;
* :class:`BlendEvaluator` — ``weight_a · a + weight_b · b`` (e.g. a network's value mixed with a
  rollout's, AlphaGo's λ-mix), the prior taken from whichever provides one;
* :class:`PriorEvaluator` — another evaluator's values with a prior from a function of the state
  (progressive bias, Chaslot et al. 2008).

:func:`check_evaluations` turns a wrong shape, a NaN or a prior that does not cover the legal actions
into an :class:`EvaluatorError` naming the leaf and the problem.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from omega_cluster.games.api import CHANCE, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.player import Player, RandomPlayer

__all__ = [
    "BlendEvaluator",
    "Evaluator",
    "EvaluatorError",
    "FunctionEvaluator",
    "HeuristicEvaluator",
    "Leaf",
    "LeafEvaluation",
    "PriorEvaluator",
    "PriorFunction",
    "RolloutEvaluator",
    "check_evaluations",
]


class EvaluatorError(ValueError):
    """An evaluator returned something the search cannot use (shape, NaN, prior)."""


@dataclass(frozen=True)
class Leaf:
    """One evaluation request: a state (owned by the search; do not mutate it) and who acts."""

    state: State  # a decision node or a terminal state
    player: int  # the acting player at ``state`` (-1 when terminal)
    legal: tuple[int, ...]  # legal_actions(player), the order the prior must follow ((), terminal)
    rng: random.Random  # the requesting search's own stream (rollouts draw from it)


@dataclass(frozen=True)
class LeafEvaluation:
    """The answer for one leaf."""

    values: tuple[float, ...]  # float[N]: expected return of every player from the leaf
    prior: tuple[float, ...] | None = None  # float[len(leaf.legal)], sums to 1; None: no prior


@runtime_checkable
class Evaluator(Protocol):
    """Evaluates a batch of leaves; returns one :class:`LeafEvaluation` per leaf, in order."""

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]: ...


def check_evaluations(
    leaves: Sequence[Leaf], evaluations: Sequence[LeafEvaluation], num_players: int
) -> None:
    """Raise :class:`EvaluatorError` unless every evaluation fits its leaf."""
    if len(evaluations) != len(leaves):
        raise EvaluatorError(
            f"evaluator returned {len(evaluations)} evaluations for {len(leaves)} leaves"
        )
    for i, (leaf, ev) in enumerate(zip(leaves, evaluations, strict=True)):
        if len(ev.values) != num_players:
            raise EvaluatorError(
                f"leaf {i}: values {ev.values!r} have {len(ev.values)} entries, "
                f"expected one per player ({num_players})"
            )
        if not all(math.isfinite(v) for v in ev.values):
            raise EvaluatorError(f"leaf {i}: values {ev.values!r} are not all finite (NaN/inf)")
        if ev.prior is None:
            continue
        if len(ev.prior) != len(leaf.legal):
            raise EvaluatorError(
                f"leaf {i}: prior has {len(ev.prior)} entries but player {leaf.player} has "
                f"{len(leaf.legal)} legal actions {leaf.legal!r}: a prior must cover each one"
            )
        if not all(math.isfinite(p) and p >= 0.0 for p in ev.prior):
            raise EvaluatorError(f"leaf {i}: prior {ev.prior!r} has a negative or NaN entry")
        total = sum(ev.prior)
        if leaf.legal and abs(total - 1.0) > 1e-4:
            raise EvaluatorError(f"leaf {i}: prior sums to {total:.6f}, not 1")


def play_out(state: State, players: Sequence[Player], rng: random.Random, max_steps: int) -> State:
    """Play ``state`` (mutated) to the end: ``players[p]`` moves for seat p, chance from ``rng``."""
    steps = 0
    while True:
        acting = state.current_players
        if not acting:
            return state
        if acting[0] == CHANCE:
            state.apply_action_unchecked(sample_chance(state.chance_outcomes(), rng.random()))
        elif len(acting) == 1:
            p = acting[0]
            state.apply_action_unchecked(players[p].act(state, p, rng))
        else:
            state.apply_joint_action_unchecked(tuple(players[p].act(state, p, rng) for p in acting))
        steps += 1
        if steps > max_steps:
            raise EvaluatorError(f"rollout did not end within {max_steps} steps")


class RolloutEvaluator:
    """Value = mean returns of ``rollouts`` playouts from the leaf; every seat uses ``policy``.

    ``policy`` is a Player (``RandomPlayer``, ``Commander``, …) or a factory ``game -> Player``.
    For a uniform random policy, a game's own fast ``random_playout(rng)`` is used when it has one
    (Mexican Train: same rules and random numbers as the generic loop, faster), or its
    ``random_playout_returns(rng)``: the returns of such a playout, the state left as it was (the
    OpenSpiel card games: compiled, no pyspiel state to play on).
    A policy with ``playout_returns(state, rng)`` (returns of a playout with itself at every seat,
    or ``None`` where it cannot) plays there instead: the Commander's compiled playouts, the same
    moves, faster (``bench/bench_officers.py``).
    """

    def __init__(
        self,
        policy: Player,
        *,
        rollouts: int = 1,
        max_steps: int = 100_000,
        use_fast_playout: bool = True,
    ) -> None:
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        self.policy = policy
        self.rollouts = rollouts
        self.max_steps = max_steps
        self.use_fast_playout = use_fast_playout  # False: the generic loop (and Python search)
        self._fast = use_fast_playout and type(policy) is RandomPlayer
        # a policy may play whole games against itself faster (the Commander, compiled)
        self._playout = getattr(policy, "playout_returns", None) if use_fast_playout else None

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        return [self._one(leaf) for leaf in leaves]

    def _one(self, leaf: Leaf) -> LeafEvaluation:
        state = leaf.state
        if not state.current_players:
            return LeafEvaluation(tuple(float(r) for r in state.returns()))
        n = state.game.num_players
        totals = [0.0] * n
        seats = [self.policy] * n
        returns_of = getattr(state, "random_playout_returns", None) if self._fast else None
        for _ in range(self.rollouts):
            returns = None
            if self._playout is not None:
                returns = self._playout(state, leaf.rng)
            elif returns_of is not None:
                returns = returns_of(leaf.rng)
            if returns is not None:
                for p, r in enumerate(returns):
                    totals[p] += r
                continue
            sim = state.clone()
            fast = getattr(sim, "random_playout", None) if self._fast else None
            if fast is not None:
                fast(leaf.rng)
            else:
                play_out(sim, seats, leaf.rng, self.max_steps)
            for p, r in enumerate(sim.returns()):
                totals[p] += r
        k = float(self.rollouts)
        return LeafEvaluation(tuple(t / k for t in totals))

    def fast_leaf(self) -> tuple[Any, str]:
        """The compiled leaf this is (see :class:`~omega_cluster.search.fast.game.LeafPlan`):
        one rollout of a uniform random player, or of a player with a compiled playout."""
        from omega_cluster.search.fast.game import RANDOM_ROLLOUT, FastLeaf, LeafPlan

        if self.rollouts != 1:
            return None, f"{self.rollouts} rollouts per leaf (the compiled leaf plays one)"
        if not self.use_fast_playout:
            return None, "use_fast_playout=False keeps the Python rollouts"
        if type(self.policy) is RandomPlayer:
            return LeafPlan(FastLeaf(RANDOM_ROLLOUT)), ""
        if getattr(self.policy, "compiled", None) is False:
            return None, f"the rollout player {self.policy!r} is not compiled (compiled=False)"
        name = getattr(self.policy, "name", None)
        if not isinstance(name, str) or self._playout is None:
            return None, f"no compiled playout for the rollout player {self.policy!r}"
        return LeafPlan(FastLeaf(f"{name.lower()}_rollout"), policy=self.policy), ""

    def __repr__(self) -> str:
        return f"RolloutEvaluator({getattr(self.policy, 'name', self.policy)!r}, rollouts={self.rollouts})"


BatchFunction = Callable[[Sequence[Leaf]], Sequence[LeafEvaluation]]


class FunctionEvaluator:
    """Wraps a batched callable ``leaves -> evaluations`` (e.g. a policy/value network).

    Terminal leaves never reach the callable: their values are the game's returns.
    """

    def __init__(self, fn: BatchFunction, *, name: str = "function") -> None:
        self.fn = fn
        self.name = name

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        out: list[LeafEvaluation | None] = [None] * len(leaves)
        live = []
        for i, leaf in enumerate(leaves):
            if leaf.state.current_players:
                live.append(i)
            else:
                out[i] = LeafEvaluation(tuple(float(r) for r in leaf.state.returns()))
        if live:
            answers = list(self.fn([leaves[i] for i in live]))
            if len(answers) != len(live):
                raise EvaluatorError(
                    f"{self.name}: returned {len(answers)} evaluations for {len(live)} leaves"
                )
            for i, ev in zip(live, answers, strict=True):
                out[i] = ev
        return [ev for ev in out if ev is not None]


class HeuristicEvaluator:
    """A fixed value function ``state -> values per player`` (no prior)."""

    def __init__(self, value_fn: Callable[[State], Sequence[float]], *, name: str = "heuristic"):
        self.value_fn = value_fn
        self.name = name

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        return [
            LeafEvaluation(
                tuple(
                    float(v)
                    for v in (
                        leaf.state.returns()
                        if not leaf.state.current_players
                        else self.value_fn(leaf.state)
                    )
                )
            )
            for leaf in leaves
        ]


PriorFunction = Callable[[State, int, Sequence[int]], Sequence[float]]
"""``(state, player, legal) -> probability per legal action``: a prior for PUCT."""


class PriorEvaluator:
    """``base``'s values with the prior of ``prior_fn`` at every non-terminal leaf.

    Turns a heuristic's move scores into PUCT's prior (progressive bias, Chaslot et al. 2008):
    the search spends its simulations on the moves the heuristic likes and leaves them only when
    the values say so. The prior is checked like any evaluator's (length, finite, sums to 1).
    """

    def __init__(self, base: Evaluator, prior_fn: PriorFunction, *, name: str = "prior") -> None:
        if not callable(getattr(base, "evaluate", None)) or not callable(prior_fn):
            raise ValueError("PriorEvaluator needs an Evaluator and a callable prior_fn")
        self.base, self.prior_fn, self.name = base, prior_fn, name

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        out = []
        for leaf, ev in zip(leaves, self.base.evaluate(leaves), strict=True):
            if leaf.player < 0 or not leaf.legal:
                out.append(ev)
                continue
            prior = tuple(float(x) for x in self.prior_fn(leaf.state, leaf.player, leaf.legal))
            out.append(LeafEvaluation(ev.values, prior))
        return out

    def __repr__(self) -> str:
        return f"PriorEvaluator({self.base!r}, prior={self.name!r})"


class BlendEvaluator:
    """``weight_a · a + weight_b · b`` per player; the prior comes from ``a`` if it gives one,
    else from ``b`` (e.g. learned values plus quarter-strength hand-written terms)."""

    def __init__(
        self, a: Evaluator, b: Evaluator, *, weight_a: float = 1.0, weight_b: float = 0.25
    ) -> None:
        if not (math.isfinite(weight_a) and math.isfinite(weight_b)):
            raise ValueError("blend weights must be finite")
        self.a, self.b = a, b
        self.weight_a, self.weight_b = weight_a, weight_b

    def fast_leaf(self) -> tuple[Any, str]:
        """The compiled leaf ``network+<rollout>`` when ``a`` is the network leaf, ``b`` a
        compiled rollout and the weights ``w`` and ``1 - w``."""
        from omega_cluster.search.fast.game import FastLeaf, LeafPlan, leaf_plan

        net, why = leaf_plan(self.a)
        roll, why_b = leaf_plan(self.b)
        w = self.weight_a
        if net is None or roll is None or net.leaf.name != "network" or roll.leaf.network:
            return None, f"a blend other than network + a compiled rollout ({why or why_b})"
        if not (0.0 <= w <= 1.0 and abs(w + self.weight_b - 1.0) < 1e-12):
            return None, f"blend weights {w}, {self.weight_b} (the compiled blend: w and 1 - w)"
        leaf = FastLeaf(f"network+{roll.leaf.name}", w)
        return LeafPlan(leaf, net.forward, net.encoder, roll.policy), ""

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        first, second = self.a.evaluate(leaves), self.b.evaluate(leaves)
        return [
            LeafEvaluation(
                tuple(
                    self.weight_a * x + self.weight_b * y
                    for x, y in zip(ea.values, eb.values, strict=True)
                ),
                ea.prior if ea.prior is not None else eb.prior,
            )
            for ea, eb in zip(first, second, strict=True)
        ]
