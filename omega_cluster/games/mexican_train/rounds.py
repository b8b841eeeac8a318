"""The round cycle of Mexican Train: the deal, the blocked-round test and the scoring at a round's
end (then the next deal, or the end of the campaign).

:class:`RoundCycle` is a mixin of :class:`~omega_cluster.games.mexican_train.state.MexicanTrainState`
(it owns no fields), like :class:`~omega_cluster.games.mexican_train.views.StateViews`; the moves
within a round live in :mod:`.state`. Round ``r`` is shuffled by a generator seeded from
``(chance_seed, r)`` (:func:`round_seed`), so a campaign replays exactly from its seed.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from omega_cluster.games.api import HistoryEntry
from omega_cluster.games.mexican_train.records import RoundResult
from omega_cluster.games.mexican_train.tiles import (
    HASH_MULT,
    MASK64,
    MEXICAN_SLOT,
    NUM_SLOTS,
    SLOTS_OF,
)

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.game import MexicanTrainGame

__all__ = ["ROUND_END_SALT", "RoundCycle", "round_seed"]

ROUND_END_SALT = 0x9E3779B9  # separates round-end pip entries from action ids in the hash


def round_seed(chance_seed: int, round_index: int) -> int:
    """Seed of round ``round_index``'s shuffle (splitmix-style mixing of the two numbers)."""
    x = (chance_seed * 0x9E3779B97F4A7C15 + (round_index + 1) * 0xBF58476D1CE4E5B9) & MASK64
    return x ^ (x >> 31)


class RoundCycle:
    """Deal, block test and round-end scoring shared by every Mexican Train state (no fields)."""

    __slots__ = ()

    game: MexicanTrainGame
    history: list[HistoryEntry]
    board: int
    bonus: bool
    chain: bool
    chance_seed: int
    current: int
    drawn: bool
    engine: int
    first_pending: int
    log_hash: int
    marked: int
    over: bool
    round_index: int
    boneyard: list[int]
    hands: list[int]
    ends: list[int]
    lengths: list[int]
    open_doubles: tuple[int, ...]
    outs: tuple[int, ...]
    pip_totals: tuple[int, ...]
    round_results: tuple[RoundResult, ...]
    round_starts: tuple[int, ...]
    win: tuple[float, ...] | None

    if TYPE_CHECKING:

        def open_mask(self, player: int) -> int:
            """Train slots ``player`` may play on (:meth:`MexicanTrainState.open_mask`)."""
            ...

    def deal(self, r: int) -> None:
        """Start round ``r``: shuffle from ``(chance_seed, r)``, deal, reset the trains."""
        g = self.game
        n, h = g.num_players, g.hand_size
        engine = g.max_value - r
        deck = list(g.decks[engine])
        rnd = random.Random(round_seed(self.chance_seed, r)).random
        for i in range(len(deck) - 1, 0, -1):  # Fisher–Yates, inlined: 2x faster than shuffle()
            j = int(rnd() * (i + 1))
            deck[i], deck[j] = deck[j], deck[i]
        hands = []
        for q in range(n):
            m = 0
            for t in deck[q * h : q * h + h]:
                m |= 1 << t
            hands.append(m)
        self.hands, self.boneyard = hands, deck[n * h :]
        self.ends, self.lengths = [engine] * NUM_SLOTS, [0] * NUM_SLOTS
        self.engine, self.round_index, self.current = engine, r, r % n
        self.marked, self.board, self.open_doubles = 0, 0, ()
        self.drawn = self.bonus = self.chain = False
        self.first_pending = (1 << n) - 1
        self.round_starts = (*self.round_starts, len(self.history))
        if not self.boneyard:
            self.check_blocked()

    def end_round(self, went_out: int | None) -> None:
        """Score the round, publish its result, then deal the next round or end the campaign."""
        g = self.game
        blank = g.double_blank_value
        pips = tuple(g.tiles.mask_pips(m, blank) for m in self.hands)
        self.round_results = (
            *self.round_results,
            RoundResult(self.round_index, self.engine, pips, went_out, went_out is None),
        )
        self.pip_totals = tuple(a + b for a, b in zip(self.pip_totals, pips, strict=True))
        if went_out is not None:
            outs = list(self.outs)
            outs[went_out] += 1
            self.outs = tuple(outs)
        h = self.log_hash
        for x in pips:  # the revealed pips are public: part of every information set
            h = (h * HASH_MULT + x + ROUND_END_SALT) & MASK64
        self.log_hash = h
        if self.round_index + 1 < g.num_rounds:
            self.deal(self.round_index + 1)
            return
        self.over, self.current = True, -1
        if g.objective == "points":
            best = min(self.pip_totals)
            winners = [p for p, x in enumerate(self.pip_totals) if x == best]
        else:
            most = max(self.outs)
            winners = [p for p, x in enumerate(self.outs) if x == most]
        share = 1.0 / len(winners)
        self.win = tuple(share if p in winners else 0.0 for p in range(g.num_players))

    def stuck(self) -> bool:
        """No player can ever play again this round (meaningful with an empty boneyard)."""
        em = self.game.tiles.end_mask
        ends = self.ends
        held = 0
        for m in self.hands:
            held |= m
        od = self.open_doubles
        if od and self.game.strict_doubles:
            if held & em[ends[od[0]]]:
                return False
            if self.bonus:  # the acting player may still lay another double
                dbl = self.hands[self.current] & self.game.tiles.doubles_mask
                for s in SLOTS_OF[self.open_mask(self.current)]:
                    if dbl & em[ends[s]]:
                        return False
            return True
        reach = em[ends[MEXICAN_SLOT]]
        for s in range(self.game.num_players):
            reach |= em[ends[s]]
        return not held & reach

    def check_blocked(self) -> None:
        if self.stuck():
            self.end_round(None)
