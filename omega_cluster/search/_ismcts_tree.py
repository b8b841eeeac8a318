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
an action uses how often the action was *available* (the subset-armed bandit of the paper): here
an action becomes available when progressive widening admits it, so its availability is
``node.n - born[i]``; without widening every candidate is available from the start.
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
    """Statistics of one information set. ``acts``/``prior`` list every candidate in the order
    widening admits them; ``means``/``visits``/``born`` cover the admitted prefix only. Only a
    search's root sums the full return vector (``total``): the root value is all that reads it,
    and one vector add per simulation is cheaper than one per node."""

    __slots__ = (
        "acts",  # candidate actions: must-keep ones first, then by prior (or legal order)
        "born",  # node.n when each admitted candidate became available (widening only)
        "fpu",  # the node's own evaluation for the acting player (PUCT first-play value)
        "fresh",  # UCT: indices of admitted candidates never selected (picked at random first)
        "keep",  # number of must-keep candidates at the front of ``acts``
        "means",  # running mean of the acting player's return per admitted candidate
        "n",  # selections through this node (in-flight ones included)
        "player",  # the acting player
        "prior",  # prior per candidate (uniform when the evaluator gives none)
        "rest",  # legal actions cut by a candidate cap: [(action, prior)], best first
        "total",  # summed return vector (one entry per player) of the simulations rooted here
        "total_n",  # number of those simulations
        "visits",  # selections per admitted candidate
    )

    acts: list[int]
    born: list[int] | None
    fpu: float
    fresh: list[int] | None
    keep: int
    means: list[float]
    n: int
    player: int
    prior: list[float]
    rest: list[tuple[int, float]]
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
        pw_base: float | None,
        pw_scale: float,
        root_cap: int | None,
        nonroot_cap: int | None,
        virtual_loss: float | None,
        smooth: bool = False,
    ) -> None:
        self.num_players = num_players
        self.smooth = smooth  # Smooth UCT: UCT mixed with the average policy (_ismcts_bandit)
        self.tables: list[dict[object, Node]] = [{} for _ in range(num_players)]
        self.puct = puct
        self.c = c_puct if puct else c_uct
        self.pw_base = pw_base
        self.pw_scale = pw_scale
        self.root_cap = root_cap
        self.nonroot_cap = nonroot_cap
        self.base_visits = 0  # simulations run on this tree by earlier searches (tree reuse)
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
        self,
        player: int,
        legal: Sequence[int],
        prior: Sequence[float] | None,
        value: float,
        state: State,
        *,
        root: bool,
    ) -> Node:
        """A node for ``player``'s information set with candidates ordered and capped.

        Order: must-keep actions (``state.must_keep_actions``), then the rest by prior (PUCT; ties
        in legal order) or in legal order (UCT). ``root_cap``/``nonroot_cap`` cut the rest;
        widening admits the front of the list first. ``value`` (the acting player's value of the
        node) is the first-play value of unvisited actions under PUCT.
        """
        k = len(legal)
        priors = list(prior) if prior is not None and self.puct else [1.0 / k] * k
        cap = self.root_cap if root else self.nonroot_cap
        widen = self.pw_base is not None
        node = Node()
        node.player = player
        node.n = 0
        node.fpu = value
        if (cap is None or cap >= k) and not widen:
            acts, pri, rest, keep = list(legal), priors, [], 0
        else:
            must = set(state.must_keep_actions(player))
            order = [i for i in range(k) if legal[i] in must]
            keep = len(order)
            others = [i for i in range(k) if legal[i] not in must]
            if self.puct:
                others.sort(key=lambda i: -priors[i])
            if cap is not None and len(others) > cap:
                rest = [(legal[i], priors[i]) for i in others[cap:]]
                others = others[:cap]
            else:
                rest = []
            order += others
            acts, pri = [legal[i] for i in order], [priors[i] for i in order]
        node.acts, node.prior, node.rest, node.keep = acts, pri, rest, keep
        admit = len(acts) if not widen else min(len(acts), keep + self.allowed(0))
        node.means = [value] * admit
        node.visits = [0] * admit
        node.total = [0.0] * self.num_players
        node.total_n = 0
        node.born = [0] * admit if widen else None
        node.fresh = None if self.puct else list(range(admit))
        return node

    def allowed(self, visits: int) -> int:
        """Progressive widening: candidates admitted after ``visits`` (besides must-keep ones)."""
        assert self.pw_base is not None
        return max(1, int(self.pw_base + self.pw_scale * math.sqrt(visits)))

    def widen(self, node: Node) -> None:
        """Admit candidates while the widening rule allows more than are admitted."""
        self.admit(node, min(len(node.acts), node.keep + self.allowed(node.n)))

    def admit(self, node: Node, upto: int) -> None:
        """Admit the candidates ``acts[len(means):upto]``: the node's first-play value, no
        visits, available from now (``born``), untried (UCT's ``fresh``)."""
        for i in range(len(node.means), upto):
            node.means.append(node.fpu)
            node.visits.append(0)
            if node.born is not None:
                node.born.append(node.n)
            if node.fresh is not None:
                node.fresh.append(i)

    def uncap_root(self, node: Node) -> None:
        """A node created below the root and now the root gets the root cap's candidates back."""
        cap = self.root_cap
        others = len(node.acts) - node.keep
        extra = len(node.rest) if cap is None else min(len(node.rest), cap - others)
        if extra <= 0:
            return
        for action, p in node.rest[:extra]:
            node.acts.append(action)
            node.prior.append(p)
        del node.rest[:extra]
        if self.pw_base is None:  # no widening: admit them now
            self.admit(node, len(node.acts))

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
        widen = self.pw_base is not None
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
                if widen and len(node.means) < len(node.acts):
                    self.widen(node)
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
