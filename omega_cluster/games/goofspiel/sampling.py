"""Goofspiel's determinization with hidden bids (``imp_info``): the opponents' past bids redrawn so
that every card is spent at most once and every finished turn keeps its public result (who won
it, or a tie). :func:`sample_bids` is the randomized backtracking search
:meth:`GoofspielState.sample_world <omega_cluster.games.goofspiel.state.GoofspielState.sample_world>`
runs.
"""

from __future__ import annotations

import random

from omega_cluster.games.goofspiel.cards import cards_of

__all__ = ["sample_bids"]


def sample_bids(
    n: int,
    nc: int,
    player: int,
    own: list[int],
    wins: list[int],
    rng: random.Random,
    max_nodes: int,
) -> list[list[int]] | None:
    """Bids for every seat and finished turn: ``player``'s are ``own``; the opponents' use each card
    at most once and reproduce every turn's result (``wins[t]``: the unique top bidder, -1 = tie).

    Randomized depth-first search: turns are visited from the most constrained (fewest candidate
    cards) with random tie-breaks, candidates in random order. Any consistent world can come out,
    though not with exactly uniform probability. Returns None if ``max_nodes`` is exhausted.
    """
    search = _BidSearch(n, nc, player, own, wins, rng, max_nodes)
    return search.bids if search.assign_turn(0) else None


class _BidSearch:
    """The state of one :func:`sample_bids` search: the bids so far, the cards each opponent has
    spent (``used``, bit masks), the order of the turns and the node budget left."""

    def __init__(
        self,
        n: int,
        nc: int,
        player: int,
        own: list[int],
        wins: list[int],
        rng: random.Random,
        max_nodes: int,
    ) -> None:
        self.n, self.nc, self.player, self.own, self.wins, self.rng = n, nc, player, own, wins, rng
        self.opponents = [q for q in range(n) if q != player]
        turns = len(own)
        self.bids = [[-1] * turns for _ in range(n)]
        self.bids[player] = list(own)
        self.used = [0] * n  # bit c: opponent already spent card c in another turn
        self.full = (1 << nc) - 1
        self.order = sorted(range(turns), key=lambda t: (self.size(t), rng.random()))
        self.budget = max_nodes

    def size(self, t: int) -> float:
        """How many cards an opponent could have bid in turn ``t`` (the visiting order)."""
        b, w = self.own[t], self.wins[t]
        if w == self.player:
            return b  # every opponent below b
        if w == -1 and self.n == 2:
            return 1  # the opponent matched b
        return self.nc - b if w >= 0 else self.nc  # an opponent above b / a tie somewhere

    def options(self, t: int) -> list[tuple[int, list[int]]]:
        """(opponent, candidate cards) for turn t, the turn's winner first."""
        b, w = self.own[t], self.wins[t]
        out = []
        for q in sorted(self.opponents, key=lambda q: q != w):
            free = self.full & ~self.used[q]
            if w == self.player:
                free &= (1 << b) - 1  # everyone below the winning bid
            elif w == q:
                free &= ~((1 << (b + 1)) - 1)  # the winner above player's bid
            elif w == -1 and self.n == 2:
                free &= 1 << b  # a two-player tie: the same card
            cards = cards_of(free)
            self.rng.shuffle(cards)
            out.append((q, cards))
        return out

    def joint_ok(self, t: int, values: list[int]) -> bool:
        """Whether the opponents' bids ``values`` give turn ``t`` its public result."""
        allbids = [self.own[t], *values]
        top = max(allbids)
        if self.wins[t] == -1:
            return allbids.count(top) >= 2
        return allbids.count(top) == 1  # the winner's bid is the top one by construction

    def assign_turn(self, i: int) -> bool:
        """Bid every turn from ``order[i]`` on; True once every turn is consistent."""
        if i == len(self.order):
            return True
        t = self.order[i]
        cands = self.options(t)
        cap = (
            self.nc if self.wins[t] in (-1, self.player) else -1
        )  # an opponent's win caps the others
        return self.pick(i, t, cands, cap, [], 0)

    def pick(
        self,
        i: int,
        t: int,
        cands: list[tuple[int, list[int]]],
        cap: int,
        values: list[int],
        k: int,
    ) -> bool:
        """Choose the bid of the ``k``-th opponent of turn ``t`` (the first ``k`` are ``values``)."""
        self.budget -= 1
        if self.budget < 0:
            return False
        if k == len(cands):
            return self.commit(i, t, cands, values)
        limit = values[0] if cap < 0 and k > 0 else self.nc
        for v in cands[k][1]:
            if v >= limit:
                continue
            values.append(v)
            if self.pick(i, t, cands, cap, values, k + 1):
                return True
            values.pop()
            if self.budget < 0:
                return False
        return False

    def commit(self, i: int, t: int, cands: list[tuple[int, list[int]]], values: list[int]) -> bool:
        """Keep turn ``t``'s bids if they fit its result and the later turns can follow; else undo."""
        if not self.joint_ok(t, values):
            return False
        for (q, _), v in zip(cands, values, strict=True):
            self.bids[q][t] = v
            self.used[q] |= 1 << v
        if self.assign_turn(i + 1):
            return True
        for (q, _), v in zip(cands, values, strict=True):
            self.used[q] &= ~(1 << v)
        return False
