"""Leduc poker's parameters and tables: :class:`LeducPokerGame`.

It validates the OpenSpiel parameters (``players``, ``action_mapping``, ``suit_isomorphism``,
``starting_player``), builds the spec, and precomputes what every state of the game shares: the
hand ranks by board card, the chance deck, and the caches ``sample_world`` reads (unseen cards,
deck masks after a deal, chance outcomes by deck).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from omega_cluster.games._poker import PLAYERS, poker_spec, rank_names
from omega_cluster.games.api import CHANCE, Game, InvalidParameterError, ParamSpec
from omega_cluster.games.leduc_poker.rules import (
    ACTION_NAMES,
    MAX_RAISES,
    RAISE_AMOUNT,
    SUITS,
    rank_hand,
)
from omega_cluster.games.leduc_poker.state import LeducPokerState, MappedLeducState

__all__ = ["LeducPokerGame"]


class LeducPokerGame(Game):
    """Leduc poker for 2..10 players (OpenSpiel ``leduc_poker``)."""

    name: ClassVar[str] = "leduc_poker"
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "players": PLAYERS,
        "action_mapping": ParamSpec(
            False, "every action legal; an impossible fold or raise is played as a call", bool
        ),
        "suit_isomorphism": ParamSpec(
            False, "suits are indistinguishable; chance actions are ranks", bool
        ),
        "starting_player": ParamSpec(0, "seat that opens each betting round", int, minimum=0),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n = self.params["players"]
        if self.params["starting_player"] >= n:
            raise InvalidParameterError(
                f"leduc_poker: parameter starting_player={self.params['starting_player']} must be "
                f"a seat in [0, {n - 1}] for players={n}"
            )
        self.action_mapping: bool = self.params["action_mapping"]
        self.suit_isomorphism: bool = self.params["suit_isomorphism"]
        self.starting_player: int = self.params["starting_player"]
        self.num_cards = 2 * (n + 1)  # card ids; rank = id // 2
        self.key_base = self.num_cards + 1  # information_set_key: own card + 1 in one digit
        self.key_shift = n  # information_set_key: one bit per seat for the winners
        max_loss = MAX_RAISES * RAISE_AMOUNT[1] + MAX_RAISES * RAISE_AMOUNT[2] + 1
        self.spec = poker_spec(
            self.name, n, num_actions=3, max_game_length=2 * (3 * n - 2), max_loss=max_loss
        )
        self.ranks = rank_names(n + 1)
        self._outcomes: dict[int, list[tuple[int, float]]] = {}  # deck bit mask -> outcomes
        # sample_world's caches: unseen cards by own card * 32 + board + 1; the deck mask by deal
        self._unseen: dict[int, tuple[int, ...]] = {}
        self._deck_after: dict[tuple[tuple[int, ...], int], int] = {}
        self._pads = tuple((-1,) * (n - 1 - seat) for seat in range(n))  # undealt seats
        size = n + 1 if self.suit_isomorphism else self.num_cards
        # hand strength by [board][private card]: OpenSpiel's RankHand, precomputed
        self._hand_rank = [
            [rank_hand(b, c, size, self.suit_isomorphism) for c in range(size)] for b in range(size)
        ]
        # the chance deck as a list of chance actions (ids, or ranks twice under isomorphism)
        self.chance_deck = (
            [c // 2 for c in range(self.num_cards)]
            if self.suit_isomorphism
            else list(range(self.num_cards))
        )

    def unseen_cards(self, own: int, board: int) -> tuple[int, ...]:
        """The chance deck (a multiset under suit isomorphism) less ``own`` and ``board`` (-1: none):
        what a player holding ``own`` may find in an opponent's hand."""
        pool = list(self.chance_deck)
        for card in (own, board):
            if card >= 0:
                pool.remove(card)
        return tuple(pool)

    def deck_after(self, private: tuple[int, ...], board: int) -> int:
        """The deck mask once ``private`` (seat order) and then ``board`` (-1: not yet) are dealt,
        as :meth:`LeducPokerState._deal` removes them."""
        deck = (1 << self.num_cards) - 1
        for card in private + ((board,) if board >= 0 else ()):
            if self.suit_isomorphism:  # the lower suit of the rank goes first
                bit = 1 << (2 * card)
                deck ^= bit if deck & bit else bit << 1
            else:
                deck ^= 1 << card
        return deck

    def new_initial_state(self, seed: int = 0) -> LeducPokerState:
        """Before the deal; ``seed`` is unused (every chance event is explicit)."""
        return MappedLeducState(self) if self.action_mapping else LeducPokerState(self)

    def card_name(self, card: int) -> str:
        """``K♥`` for a card id; a bare rank under suit isomorphism."""
        if self.suit_isomorphism:
            return self.ranks[card] if 0 <= card < len(self.ranks) else f"?{card}"
        if 0 <= card < self.num_cards:
            return self.ranks[card // 2] + SUITS[card % 2]
        return f"?{card}"

    def describe_action(self, action: int, player: int | None = None) -> str:
        """``fold``/``call``/``raise``; with ``player=CHANCE``, the dealt card (``deal J♠``)."""
        if player == CHANCE:
            return f"deal {self.card_name(action)}"
        if 0 <= action < 3:
            return ACTION_NAMES[action]
        return f"unknown action {action}"
