"""Depth-limited determinized max-n search: perfect-information Monte-Carlo (PIMC) over a few
sampled worlds, every move expanded to a fixed depth, the leaves valued by any evaluator.

For each of ``worlds`` determinizations of the searching seat's information set (the game's
``sample_world``, narrowed by ``world_constraints`` when given), :class:`Lookahead` expands every
legal move of the root to ``depth`` plies. A ply is one decision with two or more legal moves:
forced moves (one legal action) and chance (drawn from the search's rng) are played through
without counting, so a depth-1 search of Mexican Train looks past the opponents' forced draws to
their next real choice. The search stops at terminal states. Every leaf of one world goes to the
evaluator in ONE batched ``evaluate`` call, then the tree is backed up max-n: at each decision the
acting seat picks the child with its own highest value (ties: the lowest action). A root move's
value is the mean over worlds of the searching seat's value after it; the search plays the best
(ties: the lowest action).

It is the shallow search n-tuple players use (depth 1 to 3 over a table or hand-written leaf)
and the policy that trains the tables. Its cost is ``worlds × b^depth`` leaves for branching
``b``; it is meant for cheap leaves (a table lookup, a hand-written value), not for rollouts at
depth. A perfect-information game without chance gives the same tree in every world, so one
world is searched (the mean is the same).

Turn-based games only: a simultaneous node raises :class:`IllegalSearchStateError` (SM-MCTS,
:mod:`.smmcts`, searches those games).
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.search.evaluators import Evaluator, Leaf, check_evaluations
from omega_cluster.search.ismcts import IllegalSearchStateError, WorldConstraints

__all__ = ["Lookahead", "LookaheadResult"]

Node: TypeAlias = "int | tuple[int, list[Node]]"
"""A leaf's index in the world's batch, or ``(acting seat, children in legal order)``."""


@dataclass(frozen=True)
class LookaheadResult:
    """One search's answer: the move, each root move's mean value for the searching seat."""

    player: int
    action: int
    legal: tuple[int, ...]  # the root's legal actions, ascending
    values: tuple[float, ...]  # float[len(legal)]: mean over worlds of the player's value
    worlds: int  # worlds searched
    leaves: int  # leaves evaluated (all worlds)
    seconds: float


class Lookahead:
    """The search (module docstring): ``search(state, player, rng) -> LookaheadResult``."""

    def __init__(
        self,
        game: Game,
        evaluator: Evaluator,
        *,
        depth: int = 1,
        worlds: int = 8,
        world_constraints: WorldConstraints | None = None,
    ) -> None:
        for key, value in (("depth", depth), ("worlds", worlds)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key} must be an int >= 1, got {value!r}")
        if not callable(getattr(evaluator, "evaluate", None)):
            raise ValueError(f"the leaf must be an Evaluator (with evaluate), got {evaluator!r}")
        self.game = game
        self.evaluator = evaluator
        self.depth = depth
        self.worlds = worlds
        self.world_constraints = world_constraints

    def search(self, state: State, player: int, rng: random.Random) -> LookaheadResult:
        """The best move of ``player`` (who acts at ``state``, with two or more legal moves)."""
        started = time.perf_counter()
        legal = tuple(state.legal_actions(player))
        if not legal:
            raise ValueError(f"lookahead: player {player} does not act in this state")
        hidden = self.game.spec.hidden_information
        facts: Any = None
        if hidden and self.world_constraints is not None:
            facts = self.world_constraints(state, player)
        totals = [0.0] * len(legal)
        leaves_done, searched = 0, 0
        for _ in range(self.worlds):
            if not hidden:
                world = state.clone()
            elif facts is None:
                world = state.sample_world(player, rng)
            else:
                world = state.sample_world(player, rng, facts)
            expander = _Expander(rng)
            roots = expander.root(world, player, legal, self.depth)
            leaves = expander.leaves
            evaluations = self.evaluator.evaluate(leaves)
            check_evaluations(leaves, evaluations, self.game.num_players)
            values = [ev.values for ev in evaluations]
            for i, node in enumerate(roots):
                totals[i] += _backup(node, values)[player]
            leaves_done += len(leaves)
            searched += 1
            if not hidden and not expander.saw_chance:
                break  # every world would give the same tree
        means = tuple(t / searched for t in totals)
        best = max(range(len(legal)), key=lambda i: (means[i], -i))
        return LookaheadResult(
            player=player,
            action=legal[best],
            legal=legal,
            values=means,
            worlds=searched,
            leaves=leaves_done,
            seconds=time.perf_counter() - started,
        )


class _Expander:
    """Expands one world's tree and collects its leaves (the batch of one ``evaluate``)."""

    __slots__ = ("leaves", "rng", "saw_chance")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.leaves: list[Leaf] = []
        self.saw_chance = False

    def root(self, world: State, player: int, legal: tuple[int, ...], depth: int) -> list[Node]:
        """One subtree per root move (the root's own ply is the first of ``depth``)."""
        mine = tuple(world.legal_actions(player))
        if mine != legal:
            raise IllegalSearchStateError(
                f"lookahead: the sampled world gives player {player} the actions {mine}, the "
                f"state {legal} (the game's sample_world must keep the searcher's own view)"
            )
        last = len(legal) - 1
        out = []
        for i, action in enumerate(legal):
            child = world if i == last else world.clone()
            child.apply_action_unchecked(action)
            out.append(self.expand(child, depth - 1))
        return out

    def expand(self, state: State, plies: int) -> Node:
        """Play chance and forced moves through, then a leaf (no plies left, or the end) or one
        child per legal move (``state`` is consumed: the last child reuses it)."""
        seat, legal = self.advance(state)
        if seat < 0 or plies == 0:
            self.leaves.append(Leaf(state, seat, legal, self.rng))
            return len(self.leaves) - 1
        last = len(legal) - 1
        children = []
        for i, action in enumerate(legal):
            child = state if i == last else state.clone()
            child.apply_action_unchecked(action)
            children.append(self.expand(child, plies - 1))
        return seat, children

    def advance(self, state: State) -> tuple[int, tuple[int, ...]]:
        """Play chance and forced moves; the acting seat and its legal moves (-1, () at the end)."""
        while True:
            acting = state.current_players
            if not acting:
                return -1, ()
            seat = acting[0]
            if seat == CHANCE:
                self.saw_chance = True
                outcome = sample_chance(state.chance_outcomes(), self.rng.random())
                state.apply_action_unchecked(outcome)
                continue
            if len(acting) > 1:
                raise IllegalSearchStateError(
                    f"lookahead searches turn-based games; players {acting} move simultaneously "
                    f"in {state.game.spec.name} (use smmcts)"
                )
            legal = tuple(state.legal_actions(seat))
            if len(legal) != 1:
                return seat, legal
            state.apply_action_unchecked(legal[0])


def _backup(node: Node, values: Sequence[tuple[float, ...]]) -> tuple[float, ...]:
    """Max-n: the value vector of the acting seat's best child (ties: the first, lowest action)."""
    if isinstance(node, int):
        return values[node]
    seat, children = node
    best = _backup(children[0], values)
    for child in children[1:]:
        v = _backup(child, values)
        if v[seat] > best[seat]:
            best = v
    return best
