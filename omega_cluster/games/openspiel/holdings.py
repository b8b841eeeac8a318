"""Uniform draws of who holds the unknown cards: every assignment that gives each holder exactly
its number of cards and no holder a card it cannot hold is equally likely, and a draw never
fails (the true deal is one such assignment, so there is always one).

Holders that can hold every unknown card are one pool for the count (which of them holds what is
a uniform split of the pool's cards at the end). For the others the cards fall into classes by
the set of holders that may hold them (a suit, mostly: the voids), and a dynamic programme over
the classes counts the assignments: ``W(k, r)`` is the number of ways to place classes ``k..`` when
the constrained holders still have ``r`` places, a sum over how many cards of class ``k`` each
holder takes (multinomial) of ``W(k + 1, r - x)``. It is built once per information state (only
the states reachable from the full places), and a draw walks it: for each class it picks the
split with its share of the count, then deals the class's cards in a random order. With no
constrained holder a draw is one random permutation.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Iterator, Sequence

__all__ = ["Holdings"]

_Split = tuple[int, ...]  # how many cards of a class each constrained holder takes


class Holdings:
    """The uniform distribution over assignments of ``unknown`` cards to holders with ``slots``
    places each, holder ``i`` never getting a card of bit mask ``forbidden[i]``."""

    def __init__(
        self, unknown: Sequence[int], slots: Sequence[int], forbidden: Sequence[int]
    ) -> None:
        if sum(slots) != len(unknown):
            raise ValueError(f"{len(unknown)} unknown cards for {sum(slots)} places")
        present = sum(1 << c for c in unknown)
        self.slots = tuple(slots)
        self.constrained = [h for h, f in enumerate(forbidden) if f & present]
        self.free = [h for h, f in enumerate(forbidden) if not f & present]
        classes: dict[int, list[int]] = {}
        for card in unknown:
            allowed = 0
            for j, h in enumerate(self.constrained):
                if not forbidden[h] >> card & 1:
                    allowed |= 1 << j
            classes.setdefault(allowed, []).append(card)
        self.classes = sorted(classes.items())  # (allowed constrained holders, cards)
        self.left = [sum(len(c) for _, c in self.classes[k:]) for k in range(len(self.classes) + 1)]
        self.table: dict[tuple[int, tuple[int, ...]], tuple[list[_Split], list[float]]] = {}
        start = tuple(self.slots[h] for h in self.constrained)
        if self.constrained and self._count(0, start) <= 0:
            raise ValueError("no assignment gives every holder its cards")

    def _count(self, k: int, r: tuple[int, ...]) -> float:
        """``W(k, r)`` (module docstring), with the splits of class ``k`` and their running sums
        kept for :meth:`draw`."""
        if k == len(self.classes):
            return 1.0 if not any(r) else 0.0
        known = self.table.get((k, r))
        if known is not None:
            return known[1][-1] if known[1] else 0.0
        allowed, cards = self.classes[k]
        n = len(cards)
        pool = self.left[k] - sum(r)  # places the pool still has
        splits: list[_Split] = []
        sums: list[float] = []
        total = 0.0
        fact = math.factorial
        for x in _splits(n, r, allowed):
            to_pool = n - sum(x)
            if to_pool > pool:
                continue
            rest = self._count(k + 1, tuple(a - b for a, b in zip(r, x, strict=True)))
            if rest <= 0:
                continue
            ways = fact(n) / fact(to_pool)
            for b in x:
                ways /= fact(b)
            total += ways * rest
            splits.append(x)
            sums.append(total)
        self.table[(k, r)] = (splits, sums)
        return total

    def draw(self, rng: random.Random) -> list[list[int]]:
        """One assignment: per holder, its cards (in a random order)."""
        hands: list[list[int]] = [[] for _ in self.slots]
        rnd = rng.random
        if not self.constrained:
            pool = [c for _, cards in self.classes for c in cards]
        else:
            pool = []
            r = tuple(self.slots[h] for h in self.constrained)
            for k, (_, cards) in enumerate(self.classes):
                splits, sums = self.table[(k, r)]
                x = splits[bisect.bisect_right(sums, rnd() * sums[-1])]
                order = _shuffled(cards, rnd)
                at = 0
                for j, count in enumerate(x):
                    hands[self.constrained[j]] += order[at : at + count]
                    at += count
                pool += order[at:]
                r = tuple(a - b for a, b in zip(r, x, strict=True))
        pool = _shuffled(pool, rnd)
        at = 0
        for h in self.free:
            hands[h] = pool[at : at + self.slots[h]]
            at += self.slots[h]
        return hands


def _splits(n: int, r: tuple[int, ...], allowed: int) -> Iterator[tuple[int, ...]]:
    """Every way to give at most ``n`` cards to the constrained holders: holder ``j`` at most
    ``r[j]``, and none unless bit ``j`` of ``allowed`` is set."""
    if not r:
        yield ()
        return
    head = min(r[0], n) if allowed & 1 else 0
    for first in range(head + 1):
        for rest in _splits(n - first, r[1:], allowed >> 1):
            yield (first, *rest)


def _shuffled(cards: Sequence[int], rnd: Callable[[], float]) -> list[int]:
    """``cards`` in a uniformly random order (sorted by random keys: cheaper in CPython than a
    Fisher-Yates shuffle, and ties have probability zero)."""
    keys = [rnd() for _ in cards]
    return [c for _, c in sorted(zip(keys, cards, strict=True))]
