"""Leduc poker (Southey et al. 2005), natively: the same rules, parameters and action ids as
OpenSpiel's ``leduc_poker``, so one action sequence drives both engines (checked by
``tests/conformance/test_openspiel_crosscheck.py``).

Rules (OpenSpiel's N-player version): a deck of ``N + 1`` ranks in two suits (card id ``c`` has rank
``c // 2``); everyone antes one chip; chance deals one private card per seat, then a betting round
(raise size 2), then chance turns one public card, then a second round (raise size 4). Actions are
``0 = fold`` (only when facing a bet), ``1 = call/check``, ``2 = raise`` (at most two raises a
round). A round ends when everyone still in has called the last raise (or checked). At showdown a
pair with the board wins, else the higher rank; equal hands split the pot. Returns are chips won.

Parameters as OpenSpiel: ``action_mapping`` (every action always legal; an impossible fold or a third
raise is played as a call), ``suit_isomorphism`` (chance actions are ranks, suits are not
distinguished), ``starting_player`` (who opens each round).

Information: ``information_set_key`` is an int built from exactly what OpenSpiel's
``information_state_string`` shows (own card, board card, both betting sequences, whether chance is
dealing — and, at the end of a showdown, who won, which the final chip counts reveal), so both
partition states identically. ``sample_world`` redraws opponents' private cards, keeping the
showdown result when the game is over. What it shares with Kuhn (who acts, card names, the
redeal) is in :mod:`omega_cluster.games._poker`.

The rule-based player :class:`LeducRulePlayer` (the game's ``heuristic``, a fixed rating anchor)
plays by hand strength from ``state.observation(player)`` alone, so it never peeks at hidden cards.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from omega_cluster.games._poker import (
    PLAYERS,
    TERMINAL,
    PokerState,
    poker_spec,
    rank_names,
    redeal,
)
from omega_cluster.games.api import (
    CHANCE,
    ConstraintError,
    Game,
    InvalidParameterError,
    ParamSpec,
    RngLike,
    State,
    as_rng,
)
from omega_cluster.games.plugin import GamePlugin

__all__ = [
    "CALL",
    "FOLD",
    "RAISE",
    "LeducObservation",
    "LeducPokerGame",
    "LeducPokerState",
    "LeducRulePlayer",
]

FOLD, CALL, RAISE = 0, 1, 2
_ACTION_NAMES = ("fold", "call", "raise")
_SUITS = "♠♥"
_RAISE_AMOUNT = (0, 2, 4)  # by round (1, 2)
_STARTING_MONEY = 100
_MAX_RAISES = 2
# legal action lists indexed by (facing a bet) * 2 + (raise allowed)
_LEGAL = ([CALL], [CALL, RAISE], [FOLD, CALL], [FOLD, CALL, RAISE])
# The public code appends one base-32 digit per public event: CALL/FOLD/RAISE as action + 1,
# the board card as 4 + card (card ids < 22 for ten players).
_DIGIT_BITS = 5


class LeducObservation(NamedTuple):
    """Everything one player knows: the perfect-recall information state."""

    player: int  # the observing seat
    card: int  # own private card (rank under suit isomorphism), -1 before the deal
    board: int  # public card, -1 before it is turned
    round1: tuple[int, ...]  # betting actions of round 1 (as played, after action mapping)
    round2: tuple[int, ...]
    dealing: bool  # chance is dealing (players cannot tell how far the private deal has gone)
    winners: tuple[int, ...]  # seats that took the pot, once the game is over


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
        max_loss = _MAX_RAISES * _RAISE_AMOUNT[1] + _MAX_RAISES * _RAISE_AMOUNT[2] + 1
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
            [_rank_hand(b, c, size, self.suit_isomorphism) for c in range(size)]
            for b in range(size)
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
        return _MappedLeducState(self) if self.action_mapping else LeducPokerState(self)

    def card_name(self, card: int) -> str:
        """``K♥`` for a card id; a bare rank under suit isomorphism."""
        if self.suit_isomorphism:
            return self.ranks[card] if 0 <= card < len(self.ranks) else f"?{card}"
        if 0 <= card < self.num_cards:
            return self.ranks[card // 2] + _SUITS[card % 2]
        return f"?{card}"

    def describe_action(self, action: int, player: int | None = None) -> str:
        """``fold``/``call``/``raise``; with ``player=CHANCE``, the dealt card (``deal J♠``)."""
        if player == CHANCE:
            return f"deal {self.card_name(action)}"
        if 0 <= action < 3:
            return _ACTION_NAMES[action]
        return f"unknown action {action}"


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
            return _LEGAL[(self._stakes > self._ante[cur]) * 2 + (self._raises < _MAX_RAISES)][:]
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
                return self._raises < _MAX_RAISES
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
                    or (action == RAISE and self._raises < _MAX_RAISES)
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
        is the innermost step of a search, where a Python call costs ~10% of the step."""
        self.history.append(action)
        cur = self._cur
        if cur < 0:
            self._deal(action)
            return
        ante = self._ante
        self._pub = self._pub << _DIGIT_BITS | (action + 1)
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
            self._pub = self._pub << _DIGIT_BITS | (4 + action)
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
                    returns[p] = ((_STARTING_MONEY - ante[p]) + share) - _STARTING_MONEY
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
                ((_STARTING_MONEY - a0) + share) - _STARTING_MONEY,
                ((_STARTING_MONEY - a1) + share) - _STARTING_MONEY,
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
            pub >>= _DIGIT_BITS
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
        counts tell every player who won); ``constraints`` pins cards, ``{seat: card}``.
        """
        r = rng if type(rng) is random.Random else as_rng(rng)
        if self._cur < 0 or constraints is not None:  # chance, the end, or pinned cards
            return self._sample_by_replay(player, r, constraints, max_tries)
        # A decision node, every private card dealt: clone and swap instead of a replay. The
        # opponents' cards are a uniform draw without replacement from what ``player`` cannot
        # see (the deck less their card and the board); the betting, which never depends on the
        # cards, is kept, and the deck mask and the deal entries of the history are rebuilt.
        # The same distribution as the replay, ~3x faster: this runs once per ISMCTS simulation.
        game = self.game
        own, board = self._private[player], self._board
        slot = own * 32 + board + 1
        pool = game._unseen.get(slot)
        if pool is None:
            pool = game._unseen[slot] = game.unseen_cards(own, board)
        world = self.clone()
        rnd = r.random
        n = len(self._ante)
        cards: tuple[int, ...]
        if n == 2:  # one opponent: one draw
            other = pool[int(rnd() * len(pool))]
            cards = (own, other) if player == 0 else (other, own)
        else:  # partial Fisher–Yates over the unseen cards, one draw per opponent
            left = list(pool)
            dealt = []
            for seat in range(n):
                if seat == player:
                    dealt.append(own)
                    continue
                j = int(rnd() * len(left))
                dealt.append(left[j])
                left[j] = left[-1]
                left.pop()
            cards = tuple(dealt)
        world._private = cards
        world.history[:n] = cards
        deck = game._deck_after.get((cards, board))
        if deck is None:
            deck = game._deck_after[(cards, board)] = game.deck_after(cards, board)
        world._deck = deck
        return world

    def _sample_by_replay(
        self,
        player: int,
        r: random.Random,
        constraints: Mapping[int, int] | None,
        max_tries: int,
    ) -> LeducPokerState:
        """Redeal and replay the history; after a showdown, reject deals with other winners."""
        game = self.game
        exclude = (self._board,) if self._board >= 0 else ()
        key = self.information_set_key(player)
        for _ in range(max_tries):
            cards = redeal(self._private, game.chance_deck, player, r, constraints, exclude)
            world = self._replayed(cards)
            if world._winners == self._winners and world.information_set_key(player) == key:
                return world
        raise ConstraintError(
            f"leduc_poker: no deal consistent with player {player}'s view in {max_tries} draws"
        )

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
        r1 = " ".join(_ACTION_NAMES[a] for a in obs.round1) or "-"
        r2 = " ".join(_ACTION_NAMES[a] for a in obs.round2) or "-"
        pot = sum(self._ante) if self._returns is None else 0
        return (
            f"Leduc poker | seats (card/chips in) {seats} | board {board} | pot {pot} | "
            f"round 1: {r1} | round 2: {r2} | {self._status()}"
        )


class _MappedLeducState(LeducPokerState):
    """``action_mapping=True``: every action is legal; OpenSpiel plays an impossible fold (nothing
    to call) or a third raise as a call. A subclass keeps the check off the default path."""

    __slots__ = ()

    def _apply_action(self, action: int) -> None:
        cur = self._cur
        if cur >= 0 and (
            (action == FOLD and self._stakes <= self._ante[cur])
            or (action == RAISE and self._raises >= _MAX_RAISES)
        ):
            super()._apply_action(CALL)
            self.history[-1] = action  # the history keeps the action as it was given
            return
        super()._apply_action(action)


def _rank_hand(board: int, card: int, size: int, isomorphic: bool) -> int:
    """OpenSpiel's ``RankHand``: a pair beats every high-card hand, then high card, then low card
    (``size`` = number of distinct card values; card ids ``2r`` and ``2r + 1`` share rank ``r``)."""
    lo, hi = sorted((board, card))
    if isomorphic:
        return size * size + lo if lo == hi else hi * size + lo
    if lo % 2 == 0 and hi == lo + 1:
        return size * size + lo
    return (hi // 2) * size + lo // 2


class LeducRulePlayer:
    """Leduc poker by hand strength (ranks ``J < Q < K`` heads-up; more ranks with more players):

    * raise with a pair (private card matches the board) or the top rank (K); call instead when the
      round's two raises are used up;
    * call (or check) with a middle rank;
    * with the lowest rank (J) and no pair: check, and fold when facing a bet.
    """

    name = "leduc_rules"

    def __init__(self, game: Game) -> None:
        if not isinstance(game, LeducPokerGame):
            raise ValueError(f"LeducRulePlayer plays leduc_poker, not {game.spec.name}")
        self.game = game
        self.isomorphic = bool(game.params["suit_isomorphism"])
        self.top = game.num_players  # highest rank

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, LeducObservation)
        legal = state.legal_actions(player)
        rank = obs.card if self.isomorphic else obs.card // 2
        board = -1 if obs.board < 0 else (obs.board if self.isomorphic else obs.board // 2)
        if rank == board or rank == self.top:
            return RAISE if RAISE in legal else CALL
        if rank == 0 and FOLD in legal:
            return FOLD
        return CALL

    def __repr__(self) -> str:
        return "LeducRulePlayer()"


PLUGIN = GamePlugin(
    name="leduc_poker",
    game=LeducPokerGame,
    encoder="omega_cluster.model.encoders.leduc_poker:LeducPokerEncoder",
    players={"heuristic": LeducRulePlayer},
)
