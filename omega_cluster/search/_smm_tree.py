"""The tree of :mod:`omega_cluster.search.smmcts`: nodes, cross-turn subtree reuse, the final draw.

Internal. A :class:`Node` is one decision point as the search sees it: who acts, one
:class:`~._bandits.Bandit` per acting player, the visit count, the summed value vector and the
children. Children are keyed by the joint action (an int where one player or chance moves, the
tuple of actions where several move) in perfect-information games, and by the searcher's
``information_set_key`` after the step in hidden-information ones (see the smmcts docstring).

:class:`TreeStore` keeps the tree of the latest search for the next one (cross-turn
subtree reuse). The next root is found by its signature: in perfect-information games the
new state's action history must extend the old root's, and the suffix (the joint action actually
played, the chance outcomes that followed) is walked down the children; with hidden information,
where the history holds moves the searcher never saw, the tree is scanned for the child whose key is
the searcher's current information-set key, so what is reused depends only on what it knows.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from omega_cluster.games.api import CHANCE, State
from omega_cluster.search._bandits import Bandit

__all__ = ["Node", "TreeStore", "make_node", "pick_action", "subtree_size"]


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


def make_node(state: State, rng: random.Random, shuffle: bool) -> Node:
    """A fresh node for ``state``. ``shuffle``: put each bandit's actions in a random
    progressive-widening order (must-keep actions stay first), else ascending action order."""
    acting = state.current_players
    n = state.game.num_players
    if not acting:
        return Node((), [], (), n)
    if acting[0] == CHANCE:
        return Node(acting, [], tuple(state.chance_outcomes()), n)
    bandits = []
    for p in acting:
        b = Bandit(p, list(state.legal_actions(p)), tuple(state.must_keep_actions(p)))
        if shuffle:
            tail = b.order[b.keep :]
            rng.shuffle(tail)
            b.order[b.keep :] = tail
        bandits.append(b)
    return Node(acting, bandits, (), n)


def subtree_size(node: Node) -> int:
    count, stack = 0, [node]
    while stack:
        nd = stack.pop()
        count += 1
        stack.extend(nd.children.values())
    return count


class TreeStore:
    """The tree kept between the searches of one :class:`~.smmcts.SMMCTS` instance."""

    __slots__ = ("hidden", "key", "player", "root", "state")

    def __init__(self, hidden: bool) -> None:
        self.hidden = hidden
        self.root: Node | None = None
        self.state: State | None = None  # clone of the root state (perfect information)
        self.key: object = None  # the searcher's information-set key at the root (hidden)
        self.player = -1

    def clear(self) -> None:
        self.root, self.state, self.key, self.player = None, None, None, -1

    def keep(self, root: Node, state: State, player: int) -> None:
        self.root, self.player = root, player
        if self.hidden:
            self.key, self.state = state.information_set_key(player), None
        else:
            self.key, self.state = None, state.clone()

    def find(self, state: State, player: int) -> Node | None:
        """The kept node for ``state`` (then the tree is re-rooted there), or None."""
        if self.root is None or player != self.player:
            return None
        node = self._find_hidden(state, player) if self.hidden else self._find_perfect(state)
        if node is None or node.acting != state.current_players:
            return None
        self.root = node
        return node

    def _find_perfect(self, state: State) -> Node | None:
        assert self.state is not None and self.root is not None
        old, new = self.state.history, state.history
        if len(new) < len(old) or new[: len(old)] != old:
            return None
        node = self.root
        for entry in new[len(old) :]:
            key = tuple(entry) if isinstance(entry, list) else entry
            child = node.children.get(key)
            if child is None:
                return None
            node = child
        return node

    def _find_hidden(self, state: State, player: int) -> Node | None:
        assert self.root is not None
        target = state.information_set_key(player)
        if target == self.key:
            return self.root
        frontier = [self.root]
        while frontier:  # breadth first: the new root is a few steps below the old one
            following = []
            for nd in frontier:
                for key, child in nd.children.items():
                    if key == target:
                        return child
                    following.append(child)
            frontier = following
        return None


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
