"""The tree of :mod:`omega_cluster.search.smmcts`: nodes and the final draw.

Internal. A :class:`Node` is one decision point as the search sees it: who acts, one
:class:`~._bandits.Bandit` per acting player, the visit count, the summed value vector and the
children. Children are keyed by the joint action (an int where one player or chance moves, the
tuple of actions where several move) in perfect-information games, and by the searcher's
``information_set_key`` after the step in hidden-information ones (see the smmcts docstring).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from omega_cluster.games.api import CHANCE, State
from omega_cluster.search._bandits import Bandit

__all__ = ["Node", "make_node", "pick_action"]


class Node:
    """A node of the SM-MCTS tree."""

    __slots__ = ("acting", "bandits", "chance", "children", "outcomes", "value", "visits")

    def __init__(
        self,
        acting: tuple[int, ...],
        bandits: list[Bandit],
        outcomes: Sequence[tuple[int, float]],
        num_players: int,
    ) -> None:
        self.acting = acting  # current_players at the node (() terminal, (CHANCE,) chance)
        self.bandits = bandits  # one per acting player, in current_players order
        self.chance = acting == (CHANCE,)
        self.outcomes = outcomes  # chance outcomes (perfect information: fixed per node)
        self.children: dict[object, Node] = {}
        self.value = [0.0] * num_players  # summed value vectors of the visits (raw returns)
        self.visits = 0


def make_node(state: State) -> Node:
    """A fresh node for ``state``: a bandit per acting player over its legal actions."""
    acting = state.current_players
    n = state.game.num_players
    if not acting:
        return Node((), [], (), n)
    if acting[0] == CHANCE:
        return Node(acting, [], tuple(state.chance_outcomes()), n)
    bandits = [Bandit(p, list(state.legal_actions(p))) for p in acting]
    return Node(acting, bandits, (), n)


def pick_action(
    legal: Sequence[int], policy: Sequence[float], temperature: float, rng: random.Random
) -> int:
    """Draw the move from the mixed strategy: ``policy^(1/T)``; T = 0 is the argmax, ties at random."""
    if temperature == 0.0:
        top = max(policy)
        best = [a for a, p in zip(legal, policy, strict=True) if p >= top - 1e-12]
        return best[int(rng.random() * len(best))] if len(best) > 1 else best[0]
    if temperature == 1.0:
        weights = list(policy)
    else:
        top = max(policy)  # scale first: p^(1/T) underflows for small T
        weights = [(p / top) ** (1.0 / temperature) if p > 0 else 0.0 for p in policy]
    r = rng.random() * sum(weights)
    for a, w in zip(legal, weights, strict=True):
        r -= w
        if r < 0.0:
            return a
    return next(a for a, w in zip(reversed(legal), reversed(weights), strict=True) if w > 0)
