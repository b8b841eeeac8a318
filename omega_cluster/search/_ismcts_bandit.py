"""The bandit at one ISMCTS node: which admitted candidate a simulation takes there.

Internal to :mod:`omega_cluster.search.ismcts`: the selection loop of :mod:`._ismcts_tree`
(:meth:`~._ismcts_tree.Tree.simulator`) calls :func:`chooser`'s closure at every tree node it
passes. UCT (Kocsis & Szepesvári 2006) plays untried candidates first, in random order, then the
best ``mean + c·sqrt(ln N / n)``; PUCT (Silver et al. 2017) the best ``mean + c·prior·sqrt(N) /
(1 + n)``, an unvisited candidate valued at the node's running mean. ``N`` is the node's visit
count: every candidate is available from the node's creation (the subset-armed bandit of Cowling,
Powley & Whitehouse 2012 counts availability). Ties break uniformly at random.

Smooth UCT (Heinrich & Silver 2015, selection ``smooth_uct``): UCT's visit counts need not
converge to an equilibrium in an imperfect-information game (in Kuhn poker they get *more*
exploitable with more simulations), because each visit best-responds to the opponents' current
UCT choices. Smooth UCT takes the UCT choice only with probability ``η_k = max(γ, η·(1 +
d·sqrt(N))^-1)`` (N the node's visits) and otherwise samples a candidate from the node's average
policy, its visit counts ``n_a / N``: like fictitious play, each player then answers the others'
*average* strategies, whose visit distributions approach a Nash equilibrium. The search's final
policy ``visits`` is that average policy. Constants as in the paper's poker experiments:
γ = 0.1, η = 0.9, d = 0.001. Inner-loop code, written for CPython speed like the tree
(precomputed tables, locals, one ``rnd()`` per random choice); its own function costs one call
per tree node, within the noise of a search's time (``bench/bench_ismcts.py --profile``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omega_cluster.search._ismcts_tree import Node, Tree

__all__ = ["chooser", "select", "smooth_chooser"]

SMOOTH_GAMMA, SMOOTH_ETA, SMOOTH_D = 0.1, 0.9, 0.001  # Smooth UCT's mixing schedule (module doc)


def chooser(tree: Tree, rnd: Callable[[], float]) -> Callable[[Node, int], int]:
    """``choose(node, node.n)``: the candidate index one simulation takes at ``node`` (a closure
    over ``tree``'s constants, built once per search by :meth:`Tree.simulator`). UCT tries
    untried candidates first, in random order; PUCT goes to :func:`select`; UCT (the hot path)
    is inlined here."""
    puct = tree.puct
    explore, inv_sqrt = tree.explore, tree.inv_sqrt

    def choose(node: Node, big_n: int) -> int:
        fresh = node.fresh
        if fresh:  # UCT: untried candidates first, in random order
            m = len(fresh)
            if m == 1:
                return fresh.pop()
            j = int(rnd() * m)
            i = fresh[j]
            fresh[j] = fresh[-1]
            fresh.pop()
            return i
        if puct:
            return select(tree, node, big_n, rnd)
        visits, means = node.visits, node.means
        e = explore[big_n]
        k = len(visits)
        # two or three candidates (the poker games): unrolled, ~2x faster
        if k == 2:
            s0 = means[0] + e * inv_sqrt[visits[0]]
            s1 = means[1] + e * inv_sqrt[visits[1]]
            # a tie draws as the reservoir below would: 1 if rnd() < 1/2
            return 0 if s0 > s1 else 1 if s1 > s0 else (1 if rnd() < 0.5 else 0)
        if k == 3 and (
            (s0 := means[0] + e * inv_sqrt[visits[0]]) != (s1 := means[1] + e * inv_sqrt[visits[1]])
            and s0 != (s2 := means[2] + e * inv_sqrt[visits[2]])
            and s1 != s2
        ):
            return (0 if s0 > s2 else 2) if s0 > s1 else (1 if s1 > s2 else 2)
        best = -math.inf
        i = ties = 0
        for j in range(k):
            score = means[j] + e * inv_sqrt[visits[j]]
            if score > best:
                best, i, ties = score, j, 1
            elif score == best:  # random tie-break (reservoir: uniform)
                ties += 1
                if rnd() * ties < 1.0:
                    i = j
        return i

    return smooth_chooser(choose, rnd) if tree.smooth else choose


def smooth_chooser(
    uct: Callable[[Node, int], int], rnd: Callable[[], float]
) -> Callable[[Node, int], int]:
    """Smooth UCT over the UCT rule ``uct``: untried candidates and, with probability
    ``η_k``, the UCT choice; else a draw from the visit counts (the average policy)."""
    gamma, eta, d, sqrt = SMOOTH_GAMMA, SMOOTH_ETA, SMOOTH_D, math.sqrt

    def choose(node: Node, big_n: int) -> int:
        if node.fresh or rnd() < max(gamma, eta / (1.0 + d * sqrt(big_n))):
            return uct(node, big_n)
        visits = node.visits
        r = rnd() * sum(visits)
        for i, n in enumerate(visits):
            r -= n
            if r < 0.0:
                return i
        return len(visits) - 1  # rounding residue

    return choose


def select(tree: Tree, node: Node, big_n: int, rnd: Callable[[], float]) -> int:
    """PUCT: the best candidate index, random among ties. An unvisited candidate is valued at
    the node's running mean for the acting player (its own evaluation counted once): first-play
    urgency that does not hang on one noisy rollout."""
    means, visits, prior = node.means, node.visits, node.prior
    bonus = tree.inv_succ
    total, count = node.fpu, 1
    for j in range(len(visits)):
        if visits[j]:
            total += means[j] * visits[j]
            count += visits[j]
    fpu = total / count
    e = tree.explore[big_n]
    best = -math.inf
    i = ties = 0
    for j in range(len(visits)):
        n = visits[j]
        score = (means[j] if n else fpu) + e * prior[j] * bonus[n]
        if score > best:
            best, i, ties = score, j, 1
        elif score == best:
            ties += 1
            if rnd() * ties < 1.0:
                i = j
    return i
