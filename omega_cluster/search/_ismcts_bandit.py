"""The bandit at one ISMCTS node: which admitted candidate a simulation takes there.

Internal to :mod:`omega_cluster.search.ismcts`: the selection loop of :mod:`._ismcts_tree`
(:meth:`~._ismcts_tree.Tree.simulator`) calls :func:`chooser`'s closure at every tree node it
passes. UCT (Kocsis & Szepesvári 2006) plays untried candidates first, in random order, then the
best ``mean + c·sqrt(ln N / n)``; PUCT (Silver et al. 2017) the best ``mean + c·prior·sqrt(N) /
(1 + n)``, an unvisited candidate valued at the node's running mean. ``N`` counts how often the
candidate was available (``node.n - born``, the subset-armed bandit of Cowling, Powley &
Whitehouse 2012) when progressive widening admits candidates over time. Ties break uniformly at
random. Inner-loop code, written for CPython speed like the tree (precomputed tables, locals,
one ``rnd()`` per random choice). Its own function costs one call per tree node: measured ~1-2 %
of a 2,000-simulation Leduc search in the Python loop (within the noise), none on Mexican Train.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from omega_cluster.search._ismcts_tree import Node, Tree

__all__ = ["chooser", "select"]


def chooser(tree: Tree, rnd: Callable[[], float]) -> Callable[[Node, int], int]:
    """``choose(node, node.n)``: the candidate index one simulation takes at ``node`` (a closure
    over ``tree``'s constants, built once per search by :meth:`Tree.simulator`). UCT tries
    untried candidates first, in random order; PUCT and widening go to :func:`select`; plain
    UCT with every candidate admitted (the hot path) is inlined here."""
    general = tree.pw_base is not None or tree.puct
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
        if general:
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

    return choose


def select(tree: Tree, node: Node, big_n: int, rnd: Callable[[], float]) -> int:
    """PUCT and/or widening (availability = ``node.n - born``): the best candidate index,
    random among ties. Under PUCT an unvisited candidate is valued at the node's running
    mean for the acting player (its own evaluation counted once): first-play urgency that
    does not hang on one noisy rollout."""
    means, visits, prior, born = node.means, node.visits, node.prior, node.born
    explore = tree.explore
    puct = tree.puct
    bonus = tree.inv_succ if puct else tree.inv_sqrt
    fpu = 0.0
    if puct:
        total, count = node.fpu, 1
        for j in range(len(visits)):
            if visits[j]:
                total += means[j] * visits[j]
                count += visits[j]
        fpu = total / count
    best = -math.inf
    i = ties = 0
    for j in range(len(visits)):
        e = explore[big_n - born[j]] if born is not None else explore[big_n]
        if puct:
            n = visits[j]
            score = (means[j] if n else fpu) + e * prior[j] * bonus[n]
        else:
            score = means[j] + e * bonus[visits[j]]
        if score > best:
            best, i, ties = score, j, 1
        elif score == best:
            ties += 1
            if rnd() * ties < 1.0:
                i = j
    return i
