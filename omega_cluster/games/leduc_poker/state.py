"""Leduc poker's positions: :class:`LeducPokerState` (the betting, the deals, the showdown, the
information sets and ``sample_world``) and :class:`MappedLeducState` (``action_mapping=True``).

The state is a few ints, one tuple and one short list, so ``clone`` is cheap; the hot steps
(``apply_action``, ``_apply_action``, the heads-up showdown) are written inline because they are
the innermost loop of a search.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games._poker import TERMINAL, PokerState, card_locations
from omega_cluster.games.api import CHANCE, RngLike, State
from omega_cluster.games.leduc_poker.rules import (
    ACTION_NAMES,
    CALL,
    DIGIT_BITS,
    FOLD,
    LEGAL,
    MAX_RAISES,
    RAISE,
    STARTING_MONEY,
    LeducObservation,
)
from omega_cluster.games.leduc_poker.sampling import sample_world as _sample_world

if TYPE_CHECKING:
    from omega_cluster.games.leduc_poker.game import LeducPokerGame

__all__ = ["LeducPokerState", "MappedLeducState"]


class LeducPokerState(PokerState):
    """One Leduc position: a few ints, one tuple and one short list, so ``clone`` is cheap.

    Derived rather than stored (fewer slots, faster clone): the pot is ``sum(ante)``, the round is
    2 once the board card is out, the deal position is ``len(history)`` while chance deals.
    """

    __slots__ = (
        "_ante",  # list: chips each seat has put in
        "_board",  # public card (id, or rank under isomorphism), -1 before it is turned
        "_calls",  # calls since the last raise in this round
        "_deck",  # bit c: card id c still in the deck
        "_folded",  # bit p: seat p folded
        "_private",  # tuple: each seat's card (id, or rank under isomorphism), -1 before the deal
        "_pub",  # public code: one base-32 digit per betting action or board card
        "_raises",  # raises in this round
        "_stakes",  # chips each seat must have put in to stay
        "_winners",  # bit p: seat p took (part of) the pot; 0 before the end
    )

    game: LeducPokerGame

    def __init__(self, game: LeducPokerGame) -> None:
        n = game.num_players
        self.game = game
        self.history = []
        self._cur = CHANCE
        self._deck = (1 << game.num_cards) - 1
        self._private = (-1,) * n
        self._board = -1
        self._stakes = 1
        self._raises = 0
        self._calls = 0
        self._folded = 0
        self._ante = [1] * n
        self._pub = 0
        self._winners = 0
        self._returns = None

    # -- who acts (current_players, is_terminal, ... from PokerState) -------------------------
    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self._cur
        if player is not None and player != cur:
            return []
        if cur >= 0:
            if self.game.action_mapping:
                return [FOLD, CALL, RAISE]
            return LEGAL[(self._stakes > self._ante[cur]) * 2 + (self._raises < MAX_RAISES)][:]
        if cur == CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        return []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._cur != CHANCE:
            return list(super().chance_outcomes())  # raises: not a chance node
        cache: dict[int, list[tuple[int, float]]] = self.game._outcomes
        outcomes = cache.get(self._deck)
        if outcomes is None:
            outcomes = cache[self._deck] = self._compute_outcomes()
        return outcomes[:]

    def _compute_outcomes(self) -> list[tuple[int, float]]:
        deck = self._deck
        p = 1.0 / deck.bit_count()  # OpenSpiel: 1 / cards left, twice that for a rank pair
        if self.game.suit_isomorphism:
            out = []
            for rank in range(len(self._private) + 1):
                pair = deck >> (2 * rank) & 3
                if pair:
                    out.append((rank, p * 2 if pair == 3 else p))
            return out
        return [(c, p) for c in range(2 * len(self._private) + 2) if deck >> c & 1]

    def is_legal(self, player: int, action: int) -> bool:
        cur = self._cur
        if player != cur or action < 0:
            return False
        if cur >= 0:
            if action == CALL or (action <= RAISE and self.game.action_mapping):
                return True
            if action == RAISE:
                return self._raises < MAX_RAISES
            return action == FOLD and self._stakes > self._ante[cur]
        if cur != CHANCE:
            return False
        if self.game.suit_isomorphism:
            return action <= len(self._private) and bool(self._deck >> (2 * action) & 3)
        return bool(self._deck >> action & 1)

    def apply_action(self, action: int) -> None:
        """The checked step, with the common legal cases tested inline (the base class raises
        the error for everything else): this is the innermost loop of a playout."""
        cur = self._cur
        if type(action) is int:
            if cur >= 0:
                if (
                    action == CALL
                    or (action == RAISE and self._raises < MAX_RAISES)
                    or (action == FOLD and self._stakes > self._ante[cur])
                    or (0 <= action <= RAISE and self.game.action_mapping)
                ):
                    self._apply_action(action)
                    return
            elif cur == CHANCE and action >= 0 and self._deck >> action & 1:
                if not self.game.suit_isomorphism:
                    self.history.append(action)
                    self._deal(action)
                    return
                if self.is_legal(CHANCE, action):
                    self.history.append(action)
                    self._deal(action)
                    return
        State.apply_action(self, action)

    # -- rules ---------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        """One step (a deal or a bet). The bet is inline rather than a method of its own: this
        is the innermost step of a search, where a Python call is a large part of the step."""
        self.history.append(action)
        cur = self._cur
        if cur < 0:
            self._deal(action)
            return
        ante = self._ante
        self._pub = self._pub << DIGIT_BITS | (action + 1)
        if action == CALL:
            ante[cur] = self._stakes
            self._calls = calls = self._calls + 1
            raises = self._raises
        elif action == RAISE:
            raise_by = 4 if self._board >= 0 else 2  # OpenSpiel: 2 in round 1, 4 in round 2
            self._stakes = ante[cur] = self._stakes + raise_by
            self._raises = raises = self._raises + 1
            self._calls = calls = 0
        else:
            self._folded |= 1 << cur
            calls, raises = self._calls, self._raises
        # OpenSpiel's order: end of hand, else end of round, else the next seat still in.
        n = len(ante)
        folded = self._folded
        remaining = n - folded.bit_count() if folded else n
        ready = calls == remaining if raises == 0 else calls == remaining - 1
        if remaining == 1 or (ready and self._board >= 0):
            self._resolve()
        elif ready and action != RAISE:
            self._raises = 0
            self._calls = 0
            self._cur = CHANCE
        else:
            seat = cur + 1 if cur + 1 < n else 0
            while folded >> seat & 1:
                seat = seat + 1 if seat + 1 < n else 0
            self._cur = seat

    def _deal(self, action: int) -> None:
        game = self.game
        if game.suit_isomorphism:  # the lower suit of the rank goes first, as in OpenSpiel
            bit = 1 << (2 * action)
            self._deck ^= bit if self._deck & bit else bit << 1
        else:
            self._deck ^= 1 << action
        seat, n = len(self.history) - 1, len(self._ante)
        if seat < n:  # the private deal, in seat order, comes first
            self._private = tuple(self.history) + game._pads[seat]  # the deals so far, then -1s
            if seat == n - 1:
                self._cur = self.game.starting_player
        else:
            self._board = action
            self._pub = self._pub << DIGIT_BITS | (4 + action)
            seat = self.game.starting_player
            while self._folded >> seat & 1:
                seat = seat + 1 if seat + 1 < n else 0
            self._cur = seat

    def _resolve(self) -> None:
        folded, ante = self._folded, self._ante
        n, pot = len(ante), sum(ante)
        self._cur = TERMINAL
        if n == 2:
            self._resolve_two(folded, ante, pot)
            return
        # money = (100 - ante) + share, returns = money - 100: OpenSpiel's float order
        returns = [-float(a) for a in ante]
        if folded.bit_count() == n - 1:  # everyone else folded: exact integer arithmetic
            winner = (~folded & ((1 << n) - 1)).bit_length() - 1
            returns[winner] = float(pot - ante[winner])
            self._winners = 1 << winner
        else:
            best, winners = -1, 0
            strength = self.game._hand_rank[self._board]
            private = self._private
            for p in range(n):
                if not folded >> p & 1:
                    rank = strength[private[p]]
                    if rank > best:
                        best, winners = rank, 1 << p
                    elif rank == best:
                        winners |= 1 << p
            share = pot / winners.bit_count()
            for p in range(n):
                if winners >> p & 1:
                    returns[p] = ((STARTING_MONEY - ante[p]) + share) - STARTING_MONEY
            self._winners = winners
        self._returns = tuple(returns)

    def _resolve_two(self, folded: int, ante: list[int], pot: int) -> None:
        """Heads-up: the same arithmetic as the general case, unrolled (the playout hot spot)."""
        a0, a1 = ante
        if folded:
            winner = 1 if folded == 1 else 0
        else:
            strength = self.game._hand_rank[self._board]
            r0, r1 = strength[self._private[0]], strength[self._private[1]]
            winner = 0 if r0 > r1 else 1 if r1 > r0 else -1
        if winner == 0:
            self._returns, self._winners = (float(pot - a0), -float(a1)), 1
        elif winner == 1:
            self._returns, self._winners = (-float(a0), float(pot - a1)), 2
        else:
            share = pot / 2
            self._returns = (
                ((STARTING_MONEY - a0) + share) - STARTING_MONEY,
                ((STARTING_MONEY - a1) + share) - STARTING_MONEY,
            )
            self._winners = 3

    # -- information ---------------------------------------------------------------------------
    def information_set_key(self, player: int) -> int:
        """Own card, public code, dealing flag and (at the end) the winners: OpenSpiel's
        information state, whose final chip counts reveal who won a showdown."""
        game = self.game
        code = (self._pub << 1 | (self._cur == CHANCE)) << game.key_shift | self._winners
        return code * game.key_base + self._private[player] + 1

    def observation(self, player: int) -> LeducObservation:
        digits = []
        pub = self._pub
        while pub:
            digits.append(pub & 31)
            pub >>= DIGIT_BITS
        digits.reverse()
        split = next((i for i, d in enumerate(digits) if d >= 4), len(digits))
        return LeducObservation(
            player=player,
            card=self._private[player],
            board=self._board,
            round1=tuple(d - 1 for d in digits[:split]),
            round2=tuple(d - 1 for d in digits[split + 1 :]),
            dealing=self._cur == CHANCE,
            winners=tuple(p for p in range(len(self._ante)) if self._winners >> p & 1),
        )

    def hidden_state(self, player: int) -> np.ndarray:
        """Where each card id of the deck is, for training only (:func:`card_locations`: 0 own
        or the public board card, 1 undealt, ``1 + k`` the seat ``k`` places after ``player``).
        Under suit isomorphism a dealt rank takes its lower suit first, as the deck does."""
        game = self.game
        owners: dict[int, int] = {}
        deals = [(seat, card) for seat, card in enumerate(self._private) if card >= 0]
        if self._board >= 0:
            deals.append((-1, self._board))
        for seat, card in deals:  # in the order they were dealt
            if game.suit_isomorphism:
                card = 2 * card + (2 * card in owners)
            owners[card] = seat
        return card_locations(game.num_cards, owners, player, len(self._private))

    def sample_world(
        self,
        player: int,
        rng: RngLike,
        constraints: Mapping[int, int] | None = None,
        *,
        max_tries: int = 10_000,
    ) -> LeducPokerState:
        """Redeal the opponents' private cards uniformly from the unseen cards.

        After a showdown the draw is rejected until it gives the same winners (the final chip
        counts tell every player who won); ``constraints`` pins cards, ``{seat: card}``. The
        draw is :func:`.sampling.sample_world`.
        """
        return _sample_world(self, player, rng, constraints, max_tries)

    # -- plumbing ------------------------------------------------------------------------------
    def clone(self) -> LeducPokerState:
        new = self.__class__.__new__(self.__class__)
        new.game = self.game
        new.history = self.history[:]
        new._cur = self._cur
        new._deck = self._deck
        new._private = self._private
        new._board = self._board
        new._stakes = self._stakes
        new._raises = self._raises
        new._calls = self._calls
        new._folded = self._folded
        new._ante = self._ante[:]
        new._pub = self._pub
        new._winners = self._winners
        new._returns = self._returns
        return new

    def render(self) -> str:
        game = self.game
        seats = " ".join(
            f"P{p}:{game.card_name(c) if c >= 0 else '-'}"
            + ("(folded)" if self._folded >> p & 1 else "")
            + f"/{self._ante[p]}"
            for p, c in enumerate(self._private)
        )
        obs = self.observation(0)
        board = game.card_name(self._board) if self._board >= 0 else "-"
        r1 = " ".join(ACTION_NAMES[a] for a in obs.round1) or "-"
        r2 = " ".join(ACTION_NAMES[a] for a in obs.round2) or "-"
        pot = sum(self._ante) if self._returns is None else 0
        return (
            f"Leduc poker | seats (card/chips in) {seats} | board {board} | pot {pot} | "
            f"round 1: {r1} | round 2: {r2} | {self._status()}"
        )


class MappedLeducState(LeducPokerState):
    """``action_mapping=True``: every action is legal; OpenSpiel plays an impossible fold (nothing
    to call) or a third raise as a call. A subclass keeps the check off the default path."""

    __slots__ = ()

    def _apply_action(self, action: int) -> None:
        cur = self._cur
        if cur >= 0 and (
            (action == FOLD and self._stakes <= self._ante[cur])
            or (action == RAISE and self._raises >= MAX_RAISES)
        ):
            super()._apply_action(CALL)
            self.history[-1] = action  # the history keeps the action as it was given
            return
        super()._apply_action(action)
