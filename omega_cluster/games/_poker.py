"""What Kuhn and Leduc poker share (private to :mod:`.kuhn_poker` and :mod:`.leduc_poker`).

Both are OpenSpiel card games for 2..10 seats (the ``players`` parameter :data:`PLAYERS`) with
zero-sum chip returns (:func:`poker_spec`), in which one seat acts at a time: :class:`PokerState`
holds that seat in ``_cur`` (a seat, ``CHANCE`` while cards are dealt, ``TERMINAL`` at the end)
and answers the who-acts queries, ``returns`` and the status line of ``render`` from it. :func:`rank_names`
names the ranks and :func:`redeal` draws the opponents' cards for ``sample_world``, which
:meth:`PokerState._replayed` then replays with the real betting. :func:`seat_rows` is the seats
as one seat sees them at a table (:mod:`omega_cluster.games.picture`): its own card face up, the
others' face down.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Self, cast

import numpy as np

from omega_cluster.games.api import CHANCE, ConstraintError, GameSpec, ParamSpec, State
from omega_cluster.games.picture import Card, Row

__all__ = [
    "PLAYERS",
    "TERMINAL",
    "PokerState",
    "card_locations",
    "poker_spec",
    "rank_names",
    "redeal",
    "seat_rows",
]

PLAYERS = ParamSpec(2, "number of players", int, minimum=2, maximum=10)

TERMINAL = -2  # ``_cur`` once the hand is over
_CHANCE_ACTING = (CHANCE,)
_SEATS = tuple((p,) for p in range(10))  # cached current_players tuples (both games: <= 10 seats)


def poker_spec(
    name: str, num_players: int, *, num_actions: int, max_game_length: int, max_loss: float
) -> GameSpec:
    """The spec of a poker game: turn-based, hidden cards, explicit chance deals, zero-sum chip
    returns (a seat loses at most ``max_loss`` and wins at most what the others lose)."""
    return GameSpec(
        name=name,
        num_players=num_players,
        min_players=2,
        max_players=10,
        num_actions=num_actions,
        simultaneous=False,
        hidden_information=True,
        explicit_chance=True,
        objectives=("chips",),
        objective="chips",
        max_game_length=max_game_length,
        min_return=-float(max_loss),
        max_return=float((num_players - 1) * max_loss),
        zero_sum=True,
    )


def rank_names(num_ranks: int) -> str:
    """Names of ``num_ranks`` ranks, lowest first: 3 ranks are ``JQK`` as in the classic games."""
    return "23456789TJQK"[-num_ranks:]


def seat_rows(
    num_players: int, seat: int, card: int, name: Callable[[int], str], folded: int = 0
) -> list[Row]:
    """One row per seat as ``seat`` sees the table: its own ``card`` (-1: not dealt yet) face up
    by ``name``, every other seat's face down; a seat whose bit is set in ``folded`` says so."""
    return [
        Row(
            f"seat {p}" + (" (folded)" if folded >> p & 1 else ""),
            [Card(name(card) if p == seat else None)] if p != seat or card >= 0 else [],
            p,
        )
        for p in range(num_players)
    ]


class PokerState(State):
    """A state whose acting seat is ``_cur``; subclasses implement the rules."""

    __slots__ = (
        "_cur",  # acting seat, CHANCE, or TERMINAL
        "_returns",  # tuple of floats once the hand is over, else None
    )

    _cur: int
    _returns: tuple[float, ...] | None

    def returns(self) -> tuple[float, ...]:
        return self._returns if self._returns is not None else (0.0,) * self.game.num_players

    @property
    def current_players(self) -> tuple[int, ...]:
        cur = self._cur
        if cur >= 0:
            return _SEATS[cur]
        return _CHANCE_ACTING if cur == CHANCE else ()

    def is_terminal(self) -> bool:
        return self._cur == TERMINAL

    def is_chance_node(self) -> bool:
        return self._cur == CHANCE

    def is_simultaneous_node(self) -> bool:
        return False

    def _status(self) -> str:
        """The end of ``render``'s line: who acts, or the returns once the hand is over."""
        if self._cur == TERMINAL:
            return "over, returns " + " ".join(f"{r:+g}" for r in self.returns())
        return "chance deals" if self._cur == CHANCE else f"P{self._cur} to act"

    def _replayed(self, cards: list[int]) -> Self:
        """A fresh hand where the first ``len(cards)`` deals are ``cards`` and every later action
        is this state's (for ``sample_world``: the opponents' cards redrawn, the betting kept)."""
        world = cast(Self, self.game.new_initial_state())
        for action in cards + cast(list[int], self.history)[len(cards) :]:
            world._apply_action(action)
        return world


def card_locations(num_cards: int, owners: dict[int, int], player: int, n: int) -> np.ndarray:
    """The hidden-state codes of a deck (training only): float32[num_cards], 1 for a card not
    dealt, ``1 + k`` for a card held by the seat ``k`` places after ``player``, 0 for
    ``player``'s own and the public cards (``owners``: dealt card → seat, -1 for public)."""
    codes = np.ones(num_cards, np.float32)
    for card, seat in owners.items():
        codes[card] = 0.0 if seat < 0 or seat == player else 1.0 + (seat - player) % n
    return codes


def redeal(
    cards: tuple[int, ...],
    deck: list[int],
    player: int,
    rng: random.Random,
    constraints: Mapping[int, int] | None,
    exclude: tuple[int, ...] = (),
) -> list[int]:
    """New cards for the seats already dealt (seat order), drawn from the multiset ``deck``:
    ``player`` keeps theirs, pinned seats (``constraints``: ``{seat: card}``) get theirs, the rest
    are a uniform draw without replacement from what is left once those and ``exclude`` (public
    cards) are removed. Leduc's suit-isomorphic deck holds each rank twice."""
    dealt = sum(1 for c in cards if c >= 0)
    fixed = {player: cards[player]} if cards[player] >= 0 else {}
    for seat, card in (constraints or {}).items():
        if not 0 <= seat < dealt or (seat == player and card != cards[player]):
            raise ConstraintError(f"cannot pin seat {seat} to card {card}: not a dealt seat")
        fixed[seat] = card
    pool = list(deck)
    for card in (*fixed.values(), *exclude):
        if card not in pool:
            raise ConstraintError(f"card constraints {dict(fixed)} clash with the deck or board")
        pool.remove(card)
    rng.shuffle(pool)
    return [fixed[seat] if seat in fixed else pool.pop() for seat in range(dealt)]
