"""Kuhn poker (Kuhn 1950), natively: the same rules, parameters and action ids as OpenSpiel's
``kuhn_poker``, so one action sequence drives both engines (``tests/conformance/
test_openspiel_crosscheck.py`` checks this over thousands of playouts).

Rules (OpenSpiel's N-player generalisation): a deck of ``N + 1`` cards ranked ``0..N``; everyone
antes one chip; chance deals one card to each player in seat order (explicit ``CHANCE`` nodes, the
action id is the card); then players act in seat order with ``0 = pass`` and ``1 = bet`` (one chip).
After the first bet every other player gets exactly one reply (bet = call, pass = fold); if nobody
bets, everyone passes once. The highest card among players who bet (or among all, if nobody bet)
wins the pot. Returns are chips won: ``pot - own stake`` for the winner, ``-own stake`` otherwise.

Information: a player sees their own card and the public betting. ``information_set_key`` is an int
built from exactly the fields of OpenSpiel's ``information_state_string`` (own card once dealt, the
pass/bet sequence), so both induce the same partition of states; ``sample_world`` redraws the cards
already dealt to the opponents. :mod:`omega_cluster.games.leduc_poker` shares the card names here.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple, cast

from omega_cluster.games.api import (
    CHANCE,
    ConstraintError,
    Game,
    GameSpec,
    ParamSpec,
    RngLike,
    State,
    as_rng,
)

__all__ = [
    "BET",
    "PASS",
    "KuhnObservation",
    "KuhnPokerGame",
    "KuhnPokerState",
    "rank_names",
    "redeal",
]

PASS = 0
BET = 1
_ACTION_NAMES = ("pass", "bet")
_CHANCE_ACTING = (CHANCE,)
_PLAYER_LEGAL = (PASS, BET)


def rank_names(num_ranks: int) -> str:
    """Names of ``num_ranks`` ranks, lowest first: 3 ranks are ``JQK`` as in the classic games."""
    return "23456789TJQK"[-num_ranks:]


class KuhnObservation(NamedTuple):
    """Everything one player knows: the perfect-recall information state."""

    player: int  # the observing seat
    card: int  # own card (0 = lowest), -1 before it is dealt
    bets: tuple[int, ...]  # public pass (0) / bet (1) sequence since the deal


class KuhnPokerGame(Game):
    """Kuhn poker for 2..10 players (OpenSpiel ``kuhn_poker``)."""

    name: ClassVar[str] = "kuhn_poker"
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "players": ParamSpec(2, "number of players", int, minimum=2, maximum=10),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n = self.params["players"]
        self.spec = GameSpec(
            name=self.name,
            num_players=n,
            min_players=2,
            max_players=10,
            num_actions=2,
            simultaneous=False,
            hidden_information=True,
            explicit_chance=True,
            objectives=("chips",),
            objective="chips",
            max_game_length=2 * n - 1,
            min_return=-2.0,
            max_return=2.0 * (n - 1),
            zero_sum=True,
        )
        self.ranks = rank_names(n + 1)
        self._seats = tuple((p,) for p in range(n))  # cached current_players tuples

    def new_initial_state(self, seed: int = 0) -> KuhnPokerState:
        """The deal has not started; ``seed`` is unused (every chance event is explicit)."""
        return KuhnPokerState(self)

    def describe_action(self, action: int, player: int | None = None) -> str:
        """``pass``/``bet``; with ``player=CHANCE``, the dealt card (``deal K``)."""
        if player == CHANCE:
            if 0 <= action < len(self.ranks):
                return f"deal {self.ranks[action]}"
            return f"deal ?{action}"
        if action in (PASS, BET):
            return _ACTION_NAMES[action]
        return f"unknown action {action}"


class KuhnPokerState(State):
    """One Kuhn position. Fields are ints and one small tuple, so ``clone`` is a few slot copies."""

    __slots__ = (
        "_bet_mask",  # bit p: player p bet (or called)
        "_bets",  # betting sequence code: 1 followed by one bit per action (bet = 1)
        "_cards",  # tuple: each player's card, -1 until dealt
        "_cur",  # acting player, CHANCE, or -2 once terminal
        "_deck",  # bit c: card c still in the deck
        "_first_bettor",  # seat of the first bet, -1 before
        "_n",
        "_nacts",  # betting actions so far
        "_owner",  # tuple: owner of each card, -1 if undealt
        "_returns",  # tuple of floats once terminal, else None
    )

    game: KuhnPokerGame

    def __init__(self, game: KuhnPokerGame) -> None:
        n = game.num_players
        self.game = game
        self.history = []
        self._n = n
        self._cards = (-1,) * n
        self._owner = (-1,) * (n + 1)
        self._deck = (1 << (n + 1)) - 1
        self._cur = CHANCE
        self._bets = 1
        self._nacts = 0
        self._first_bettor = -1
        self._bet_mask = 0
        self._returns: tuple[float, ...] | None = None

    # -- who acts ------------------------------------------------------------------------------
    @property
    def current_players(self) -> tuple[int, ...]:
        cur = self._cur
        if cur >= 0:
            return self.game._seats[cur]
        return _CHANCE_ACTING if cur == CHANCE else ()

    def is_terminal(self) -> bool:
        return self._cur == -2

    def is_chance_node(self) -> bool:
        return self._cur == CHANCE

    def is_simultaneous_node(self) -> bool:
        return False

    def legal_actions(self, player: int | None = None) -> list[int]:
        cur = self._cur
        if player is not None and player != cur:
            return []
        if cur >= 0:
            return [PASS, BET]
        if cur == CHANCE:
            deck = self._deck
            return [c for c in range(self._n + 1) if deck >> c & 1]
        return []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._cur != CHANCE:
            return list(super().chance_outcomes())  # raises: not a chance node
        p = 1.0 / (self._n + 1 - len(self.history))
        deck = self._deck
        return [(c, p) for c in range(self._n + 1) if deck >> c & 1]

    def is_legal(self, player: int, action: int) -> bool:
        cur = self._cur
        if player != cur:
            return False
        if cur >= 0:
            return action in _PLAYER_LEGAL
        return cur == CHANCE and 0 <= action <= self._n and bool(self._deck >> action & 1)

    # -- rules ---------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        self.history.append(action)
        n = self._n
        if self._cur == CHANCE:
            seat = len(self.history) - 1
            self._cards = (*self._cards[:seat], action, *self._cards[seat + 1 :])
            self._owner = (*self._owner[:action], seat, *self._owner[action + 1 :])
            self._deck &= ~(1 << action)
            self._cur = 0 if seat == n - 1 else CHANCE
            return
        player = self._cur
        self._bets = self._bets << 1 | action
        self._nacts += 1
        if action == BET:
            self._bet_mask |= 1 << player
            if self._first_bettor < 0:
                self._first_bettor = player
        # OpenSpiel's end rule: everyone passed once, or everyone answered the first bet.
        fb = self._first_bettor
        if (fb < 0 and self._nacts == n) or (fb >= 0 and self._nacts == n + fb):
            self._finish()
        else:
            self._cur = self._nacts % n

    def _finish(self) -> None:
        n, owner, bet_mask = self._n, self._owner, self._bet_mask
        if self._first_bettor < 0:
            winner = owner[n] if owner[n] >= 0 else owner[n - 1]
        else:
            winner = next(
                owner[c] for c in range(n, -1, -1) if owner[c] >= 0 and bet_mask >> owner[c] & 1
            )
        pot = n + bet_mask.bit_count()
        stakes = [2.0 if bet_mask >> p & 1 else 1.0 for p in range(n)]
        self._returns = tuple(pot - s if p == winner else -s for p, s in enumerate(stakes))
        self._cur = -2

    def returns(self) -> tuple[float, ...]:
        return self._returns if self._returns is not None else (0.0,) * self._n

    # -- information ---------------------------------------------------------------------------
    def information_set_key(self, player: int) -> int:
        """Own card (or none) and the betting sequence: OpenSpiel's information state."""
        return self._bets * (self._n + 2) + self._cards[player] + 1

    def observation(self, player: int) -> KuhnObservation:
        bets = cast(list[int], self.history)[self._n :]
        return KuhnObservation(player, self._cards[player], tuple(bets))

    def sample_world(
        self, player: int, rng: RngLike, constraints: Mapping[int, int] | None = None
    ) -> KuhnPokerState:
        """Redeal the opponents' dealt cards uniformly from the cards ``player`` does not hold.

        ``constraints`` optionally pins cards: ``{seat: card}`` for seats already dealt.
        """
        cards = redeal(self._cards, list(range(self._n + 1)), player, as_rng(rng), constraints)
        world = KuhnPokerState(self.game)
        for action in cards + cast(list[int], self.history)[len(cards) :]:
            world._apply_action(action)
        return world

    # -- plumbing ------------------------------------------------------------------------------
    def clone(self) -> KuhnPokerState:
        new = KuhnPokerState.__new__(KuhnPokerState)
        new.game = self.game
        new.history = self.history[:]
        new._n = self._n
        new._cards = self._cards
        new._owner = self._owner
        new._deck = self._deck
        new._cur = self._cur
        new._bets = self._bets
        new._nacts = self._nacts
        new._first_bettor = self._first_bettor
        new._bet_mask = self._bet_mask
        new._returns = self._returns
        return new

    def render(self) -> str:
        ranks = self.game.ranks
        cards = " ".join(f"P{p}:{ranks[c] if c >= 0 else '-'}" for p, c in enumerate(self._cards))
        bets = " ".join(_ACTION_NAMES[a] for a in cast(list[int], self.history)[self._n :])
        if self._cur == -2:
            status = "over, returns " + " ".join(f"{r:+g}" for r in self.returns())
        else:
            status = "chance deals" if self._cur == CHANCE else f"P{self._cur} to act"
        return f"Kuhn poker | cards {cards} | betting: {bets or '-'} | {status}"


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
    cards) are removed. Shared with Leduc, whose suit-isomorphic deck holds each rank twice."""
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
