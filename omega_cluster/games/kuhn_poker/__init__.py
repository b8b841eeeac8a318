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
already dealt to the opponents. What it shares with Leduc (who acts, card names, the redeal) is in
:mod:`omega_cluster.games._poker`.

The rule-based player :class:`KuhnRulePlayer` (the game's ``heuristic``, a fixed rating anchor)
plays by card strength from ``state.observation(player)`` alone, so it never peeks at hidden cards.
:func:`seat_view` is what one seat sees at the play and serve tables.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple, cast

import numpy as np

from omega_cluster.games._poker import (
    PLAYERS,
    TERMINAL,
    PokerState,
    card_locations,
    poker_spec,
    rank_names,
    redeal,
    seat_rows,
)
from omega_cluster.games.api import CHANCE, Game, ParamSpec, RngLike, State, as_rng
from omega_cluster.games.picture import card_view
from omega_cluster.games.plugin import GamePlugin

__all__ = ["BET", "PASS", "KuhnObservation", "KuhnPokerGame", "KuhnPokerState", "KuhnRulePlayer"]

PASS = 0
BET = 1
_ACTION_NAMES = ("pass", "bet")
_PLAYER_LEGAL = (PASS, BET)


class KuhnObservation(NamedTuple):
    """Everything one player knows: the perfect-recall information state."""

    player: int  # the observing seat
    card: int  # own card (0 = lowest), -1 before it is dealt
    bets: tuple[int, ...]  # public pass (0) / bet (1) sequence since the deal


class KuhnPokerGame(Game):
    """Kuhn poker for 2..10 players (OpenSpiel ``kuhn_poker``)."""

    name: ClassVar[str] = "kuhn_poker"
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "players": PLAYERS,
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n = self.params["players"]
        self.spec = poker_spec(self.name, n, num_actions=2, max_game_length=2 * n - 1, max_loss=2)
        self.ranks = rank_names(n + 1)

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


class KuhnPokerState(PokerState):
    """One Kuhn position. Fields are ints and one small tuple, so ``clone`` is a few slot copies."""

    __slots__ = (
        "_bet_mask",  # bit p: player p bet (or called)
        "_bets",  # betting sequence code: 1 followed by one bit per action (bet = 1)
        "_cards",  # tuple: each player's card, -1 until dealt
        "_deck",  # bit c: card c still in the deck
        "_first_bettor",  # seat of the first bet, -1 before
        "_n",
        "_nacts",  # betting actions so far
        "_owner",  # tuple: owner of each card, -1 if undealt
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
        self._returns = None

    # -- who acts (current_players, is_terminal, ... from PokerState) -------------------------
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
        self._cur = TERMINAL

    # -- information ---------------------------------------------------------------------------
    def information_set_key(self, player: int) -> int:
        """Own card (or none) and the betting sequence: OpenSpiel's information state."""
        return self._bets * (self._n + 2) + self._cards[player] + 1

    def observation(self, player: int) -> KuhnObservation:
        bets = cast(list[int], self.history)[self._n :]
        return KuhnObservation(player, self._cards[player], tuple(bets))

    def hidden_state(self, player: int) -> np.ndarray:
        """Where each of the ``N + 1`` cards is, for training only (:func:`card_locations`:
        0 own, 1 undealt, ``1 + k`` the seat ``k`` places after ``player``)."""
        owners = {card: seat for seat, card in enumerate(self._cards) if card >= 0}
        return card_locations(self._n + 1, owners, player, self._n)

    def sample_world(
        self, player: int, rng: RngLike, constraints: Mapping[int, int] | None = None
    ) -> KuhnPokerState:
        """Redeal the opponents' dealt cards uniformly from the cards ``player`` does not hold.

        ``constraints`` optionally pins cards: ``{seat: card}`` for seats already dealt.
        """
        cards = redeal(self._cards, list(range(self._n + 1)), player, as_rng(rng), constraints)
        return self._replayed(cards)

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
        return f"Kuhn poker | cards {cards} | betting: {bets or '-'} | {self._status()}"


class KuhnRulePlayer:
    """Kuhn poker by card strength (for any player count; ``N + 1`` cards ranked ``0..N``):

    * the highest card bets, and calls any bet;
    * the lowest card passes and folds to a bet, except that it opens with a bet (a bluff) with
      probability ``bluff``;
    * a middle card checks when nobody has bet and calls a bet with probability ``call_middle``
      (1/3 is what the equilibrium does with the Queen in two-player Kuhn when facing a bet).
    """

    name = "kuhn_rules"

    def __init__(self, game: Game, *, bluff: float = 0.0, call_middle: float = 1 / 3) -> None:
        if not isinstance(game, KuhnPokerGame):
            raise ValueError(f"KuhnRulePlayer plays kuhn_poker, not {game.spec.name}")
        if not (0.0 <= bluff <= 1.0 and 0.0 <= call_middle <= 1.0):
            raise ValueError(f"bluff={bluff} and call_middle={call_middle} must be in [0, 1]")
        self.game = game
        self.bluff = bluff
        self.call_middle = call_middle
        self.top = game.num_players  # highest card

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, KuhnObservation)
        facing_bet = BET in obs.bets
        if obs.card == self.top:
            return BET
        if obs.card == 0:
            return BET if not facing_bet and rng.random() < self.bluff else PASS
        if facing_bet:
            return BET if rng.random() < self.call_middle else PASS
        return PASS

    def __repr__(self) -> str:
        return f"KuhnRulePlayer(bluff={self.bluff}, call_middle={self.call_middle})"


def seat_view(state: KuhnPokerState, seat: int) -> dict[str, Any]:
    """Kuhn poker as ``seat`` sees it at a table (:mod:`omega_cluster.games.picture`): its own
    card, the others face down, the bets and the pot (an ante of 1 a seat, 1 a bet)."""
    obs = state.observation(seat)
    game = state.game
    rows = seat_rows(game.num_players, seat, obs.card, game.ranks.__getitem__)
    bets = [_ACTION_NAMES[b] for b in obs.bets]
    return card_view(game, seat, rows, bets, [("pot", game.num_players + sum(obs.bets))])


PLUGIN = GamePlugin(
    name="kuhn_poker",
    game=KuhnPokerGame,
    encoder="omega_cluster.games.kuhn_poker.encoder:KuhnPokerEncoder",
    players={"heuristic": KuhnRulePlayer},
    fast_search="omega_cluster.games.kuhn_poker.fast:for_game",
    seat_view=seat_view,
)
