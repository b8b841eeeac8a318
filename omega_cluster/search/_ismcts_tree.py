"""The ISMCTS tree: nodes keyed by information set, the selection loop, expansion, backup.

Internal to :mod:`omega_cluster.search.ismcts` (which owns the configuration, the generator that
talks to the evaluator and the result). Everything here is the inner loop, so it is written for
CPython speed rather than elegance: integer-keyed dicts (one per player), ``__slots__`` nodes with
parallel lists, precomputed tables for ``c·sqrt(ln N)`` / ``1/sqrt(n)`` / ``c·sqrt(N)``, local
variables and one ``rng.random()`` per random choice. The bandit that picks a candidate at a node
(UCT / PUCT) is :mod:`._ismcts_bandit`.

A node is the information set of the player to act (Cowling, Powley & Whitehouse 2012, as
OpenSpiel's ``ISMCTSBot`` keys nodes by (player, information state)). Per candidate action it holds
the visit count, the running mean of the acting player's return (what selection reads) and the
vector of summed returns of every player (what the root value reports). The exploration term of
an action uses how often the action was *available* (the subset-armed bandit of the paper): every
legal action is a candidate from the node's creation, so its availability is ``node.n``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from omega_cluster.games.api import CHANCE, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.search._ismcts_bandit import chooser

__all__ = ["Descend", "IllegalSearchStateError", "Node", "Tree"]


Descend = Callable[[State, list["Node"], list[int]], "tuple[int, object] | None"]
"""``descend(state, nodes, picks)``: one simulation's selection (see :meth:`Tree.simulator`)."""


_STEPS: dict[type[State], Callable[[State, int], None]] = {}
"""Per state class, the function that applies an action without checks (see :func:`_step_of`)."""


def _step_of(kind: type[State]) -> Callable[[State, int], None]:
    """``kind._apply_action`` unless the game overrides ``apply_action_unchecked``: one call
    fewer per step of the selection loop (cached in ``_STEPS``)."""
    unchecked = kind.apply_action_unchecked
    fn = kind._apply_action if unchecked is State.apply_action_unchecked else unchecked
    _STEPS[kind] = fn
    return fn


class IllegalSearchStateError(ValueError):
    """The game broke an assumption of ISMCTS (simultaneous node, inconsistent action sets)."""


class Node:
    """Statistics of one information set, one entry per candidate (every legal action, in legal
    order). Only a search's root sums the full return vector (``total``): the root value is all
    that reads it, and one vector add per simulation is cheaper than one per node."""

    __slots__ = (
        "acts",  # candidate actions: the legal actions, in legal order
        "fpu",  # the node's own evaluation for the acting player (PUCT first-play value)
        "fresh",  # UCT: indices of candidates never selected (picked at random first)
        "means",  # running mean of the acting player's return per candidate
        "n",  # selections through this node (in-flight ones included)
        "player",  # the acting player
        "prior",  # prior per candidate (uniform when the evaluator gives none)
        "total",  # summed return vector (one entry per player) of the simulations rooted here
        "total_n",  # number of those simulations
        "visits",  # selections per candidate
    )

    acts: list[int]
    fpu: float
    fresh: list[int] | None
    means: list[float]
    n: int
    player: int
    prior: list[float]
    total: list[float]
    total_n: int
    visits: list[int]


class Tree:
    """One search tree (a dict per player) plus the constants of one configuration."""

    def __init__(
        self,
        num_players: int,
        *,
        puct: bool,
        c_uct: float,
        c_puct: float,
        virtual_loss: float | None,
        smooth: bool = False,
    ) -> None:
        self.num_players = num_players
        self.smooth = smooth  # Smooth UCT: UCT mixed with the average policy (_ismcts_bandit)
        self.tables: list[dict[object, Node]] = [{} for _ in range(num_players)]
        self.puct = puct
        self.c = c_puct if puct else c_uct
        self.root: Node | None = None  # the running search's root
        self.virtual_loss = virtual_loss  # value of an in-flight visit (None: one leaf at a time)
        self.explore: list[float] = []  # UCT: c·sqrt(ln N); PUCT: c·sqrt(N)
        self.inv_sqrt: list[float] = []  # 1/sqrt(n) (UCT)
        self.inv_succ: list[float] = []  # 1/(1+n) (PUCT)
        self.ensure_tables(1024)

    # -- tables ---------------------------------------------------------------------------------
    def ensure_tables(self, size: int) -> None:
        """Make the lookup tables cover visit counts ``0 .. size`` (grown geometrically)."""
        have = len(self.explore)
        if size < have:
            return
        new = max(size + 1, 2 * have)
        c = self.c
        if self.puct:
            self.explore.extend(c * math.sqrt(n) for n in range(have, new))
        else:
            self.explore.extend(
                c * math.sqrt(math.log(n)) if n > 0 else 0.0 for n in range(have, new)
            )
        self.inv_sqrt.extend(1.0 / math.sqrt(n) if n else 0.0 for n in range(have, new))
        self.inv_succ.extend(1.0 / (1.0 + n) for n in range(have, new))

    def size(self) -> int:
        return sum(len(t) for t in self.tables)

    # -- expansion ------------------------------------------------------------------------------
    def new_node(
        self, player: int, legal: Sequence[int], prior: Sequence[float] | None, value: float
    ) -> Node:
        """A node for ``player``'s information set, every legal action a candidate, in legal
        order. ``value`` (the acting player's value of the node) is the first-play value of
        unvisited actions under PUCT."""
        k = len(legal)
        node = Node()
        node.player = player
        node.n = 0
        node.fpu = value
        node.acts = list(legal)
        node.prior = list(prior) if prior is not None and self.puct else [1.0 / k] * k
        node.means = [value] * k
        node.visits = [0] * k
        node.total = [0.0] * self.num_players
        node.total_n = 0
        node.fresh = None if self.puct else list(range(k))
        return node

    # -- selection ------------------------------------------------------------------------------
    def simulator(self, rng: random.Random) -> Descend:
        """The selection loop of one search, as a closure over this tree's constants (a cell
        read is cheaper than an attribute; one closure serves every simulation of the search).

        ``descend(state, nodes, picks)`` selects from ``state`` (mutated) down to the end or to
        an information set not in the tree, appending the nodes and the chosen candidate indices
        to ``nodes``/``picks`` and counting the visits. At the end it backs up the final value
        itself and returns ``None``; at a new information set it returns ``(player, key)``.
        """
        tables = self.tables
        rnd = rng.random
        vloss = self.virtual_loss
        backup, choose = self.backup, chooser(self, rnd)

        def descend(state: State, nodes: list[Node], picks: list[int]) -> tuple[int, object] | None:
            apply = _STEPS.get(type(state)) or _step_of(type(state))
            while True:
                acting = state.current_players
                if not acting:
                    backup(nodes, picks, state.returns())
                    return None
                p = acting[0]
                if p == CHANCE:
                    apply(state, sample_chance(state.chance_outcomes(), rnd()))
                    continue
                if len(acting) > 1:
                    raise simultaneous_error(state, acting)
                key = state.information_set_key(p)
                node = tables[p].get(key)
                if node is None:
                    return p, key
                big_n = node.n
                i = choose(node, big_n)
                action = node.acts[i]
                if not state.is_legal(p, action):
                    raise inconsistent_error(state, p, key, action)
                node.n = big_n + 1
                visits = node.visits
                n_i = visits[i] + 1
                visits[i] = n_i
                if vloss is not None:  # virtual loss: in flight counts as a loss until backup
                    node.means[i] += (vloss - node.means[i]) / n_i
                nodes.append(node)
                picks.append(i)
                apply(state, action)

        return descend

    def force_root(self, i: int, state: State, nodes: list[Node], picks: list[int]) -> None:
        """Start a simulation with the root's candidate ``i`` (the root chosen by a root
        schedule, e.g. paired evaluation, rather than by selection): count the visit and play
        the action."""
        root = self.root
        assert root is not None
        root.n += 1
        n_i = root.visits[i] + 1
        root.visits[i] = n_i
        if self.virtual_loss is not None:
            root.means[i] += (self.virtual_loss - root.means[i]) / n_i
        nodes.append(root)
        picks.append(i)
        state.apply_action(root.acts[i])

    # -- backup ---------------------------------------------------------------------------------
    def backup(self, nodes: list[Node], picks: list[int], values: Sequence[float]) -> None:
        """Add ``values`` (one per player) along the path (``nodes[0]``: the search's root);
        undo virtual losses."""
        vloss = self.virtual_loss
        if vloss is None:
            for node, i in zip(nodes, picks, strict=False):
                means = node.means
                means[i] += (values[node.player] - means[i]) / node.visits[i]
        else:
            for node, i in zip(nodes, picks, strict=False):
                node.means[i] += (values[node.player] - vloss) / node.visits[i]
        if nodes:
            root = nodes[0]
            total = root.total
            for j, x in enumerate(values):
                total[j] += x
            root.total_n += 1


def simultaneous_error(state: State, acting: tuple[int, ...]) -> IllegalSearchStateError:
    return IllegalSearchStateError(
        f"{state.game.spec.name}: players {acting} move simultaneously at this node; ISMCTS needs "
        "a turn-based view of the game (one acting player per node). Use SM-MCTS "
        "(omega_cluster.search.smmcts) for simultaneous-move games."
    )


def inconsistent_error(
    state: State, player: int, key: object, action: int
) -> IllegalSearchStateError:
    return IllegalSearchStateError(
        f"{state.game.spec.name}: action {action} is not legal for player {player} in a state of "
        f"information set {key!r} where it was legal before: information_set_key must determine "
        f"the player's legal actions (legal here: {list(state.legal_actions(player))})"
    )
