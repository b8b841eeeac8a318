"""Goofspiel (the game of pure strategy), natively: the same rules, parameters and action ids as
OpenSpiel's ``goofspiel``, so one action sequence drives both engines (checked by
``tests/conformance/test_openspiel_crosscheck.py``).

Rules: every player holds the cards ``1..num_cards`` (action ``a`` bids card ``a + 1``). Each turn a
point card is turned — by an explicit ``CHANCE`` node (``points_order="random"``, action = card
index) or in ``ascending``/``descending`` order — and all players bid one card at once
(``current_players`` is every seat; ``apply_joint_action``; the history entry is the tuple of bids).
A unique highest bid takes the point card's value; a tied top bid discards it. Bid cards are spent.
As in OpenSpiel, the last turn has no choice and is played automatically (it is not in the history),
and ``num_turns`` (``-1`` = ``num_cards``) can shorten the game. ``returns_type``: ``win_loss``
(winners share +1, losers share -1, an all-way tie is 0), ``point_difference`` (points minus the
mean) or ``total_points``. ``scores()`` are the points.

Information follows OpenSpiel's ``information_state_string``: without ``imp_info`` every player sees
the point cards, every hand and who won each turn (not the order of the bids); with ``imp_info`` a
player sees only their own bids, the point cards and who won each turn. ``information_set_key`` is
an int built from those fields, so both partition states identically. With ``imp_info``,
``sample_world`` redraws the opponents' past bids consistently with every turn's win/lose/tie outcome
(a randomized backtracking search, see :func:`_sample_bids`). ``egocentric`` only changes
OpenSpiel's tensors; it is accepted for parity and has no effect here.

The rule-based player :class:`GoofspielMatchPlayer` (the game's ``heuristic``, a fixed rating
anchor) bids the card that matches the prize, from ``state.observation(player)`` alone.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

from omega_cluster.games.api import (
    CHANCE,
    ConstraintError,
    Game,
    GameError,
    GameSpec,
    InvalidParameterError,
    ParamSpec,
    RngLike,
    State,
    as_rng,
)
from omega_cluster.games.plugin import GamePlugin

__all__ = ["GoofspielGame", "GoofspielMatchPlayer", "GoofspielObservation", "GoofspielState"]

_CHANCE_ACTING = (CHANCE,)
_ORDERS = ("random", "descending", "ascending")
_RETURNS = ("win_loss", "point_difference", "total_points")
# Hands and the deck are bit masks. Legal moves and chance outcomes of up to 14 cards are the
# concatenation of two lists looked up by the mask's low and high 7 bits: the tables stay a few
# kB, so they live in the CPU caches (one list per 14-bit mask takes MBs and was ~20 % slower in
# bench/bench_small_games.py), and the concatenation is the fresh list handed to the caller.
_SPLIT = 7
_LOW_MASK = (1 << _SPLIT) - 1
_LOW_CARDS = [[c for c in range(_SPLIT) if m >> c & 1] for m in range(1 << _SPLIT)]
_HIGH_CARDS = [[c + _SPLIT for c in low] for low in _LOW_CARDS]
# deck size k -> (low, high) tables of (card, 1/k); the tuples are shared, one per (k, card)
_OUTCOMES = [
    (
        [[pairs[c] for c in low] for low in _LOW_CARDS],
        [[pairs[c] for c in high] for high in _HIGH_CARDS],
    )
    for pairs in ([(c, 1.0 / max(k, 1)) for c in range(2 * _SPLIT)] for k in range(2 * _SPLIT + 1))
]


def _cards_of(mask: int) -> list[int]:
    """Sorted set bits of ``mask``, a fresh list."""
    try:
        return _LOW_CARDS[mask & _LOW_MASK] + _HIGH_CARDS[mask >> _SPLIT]
    except IndexError:  # more than 14 cards
        return [c for c in range(mask.bit_length()) if mask >> c & 1]


class GoofspielObservation(NamedTuple):
    """Everything one player knows: OpenSpiel's information state as fields."""

    player: int  # the observing seat
    point_cards: tuple[int, ...]  # point card indices turned so far (value = index + 1)
    wins: tuple[int, ...]  # winner of each finished turn, -1 for a tie
    points: tuple[int, ...]  # every player's points
    hands: tuple[tuple[int, ...], ...]  # every hand; with imp_info only the player's own
    own_bids: tuple[int, ...]  # the player's bids in turn order (imp_info only: OpenSpiel's
    # perfect-information state shows the hands, not the order in which they were spent)


class GoofspielGame(Game):
    """Goofspiel for 2..10 players (OpenSpiel ``goofspiel``)."""

    name: ClassVar[str] = "goofspiel"
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "players": ParamSpec(2, "number of players", int, minimum=2, maximum=10),
        "num_cards": ParamSpec(13, "cards per hand and point cards", int, minimum=1, maximum=64),
        "num_turns": ParamSpec(
            -1, "turns to play, -1 for num_cards (num_cards - 1 never ends, as in OpenSpiel)", int
        ),
        "points_order": ParamSpec("random", "order of the point cards", str, choices=_ORDERS),
        "returns_type": ParamSpec("win_loss", "what returns() reports", str, choices=_RETURNS),
        "imp_info": ParamSpec(False, "bids stay hidden; only turn winners are public", bool),
        "egocentric": ParamSpec(False, "OpenSpiel tensor layout only; no effect here", bool),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n, nc = self.params["players"], self.params["num_cards"]
        turns = self.params["num_turns"]
        if turns == -1:
            turns = nc
        # OpenSpiel plays turn num_cards - 1 automatically and only ends at num_turns, so
        # num_turns == num_cards - 1 (or 0) leaves a state with no moves that never ends.
        if not 1 <= turns <= nc or turns == nc - 1:
            raise InvalidParameterError(
                f"goofspiel: parameter num_turns={self.params['num_turns']} is not allowed for "
                f"num_cards={nc}; allowed: -1, or 1..{nc} except {nc - 1}"
            )
        self.num_cards: int = nc
        self.num_turns: int = turns
        self.order = _ORDERS.index(self.params["points_order"])  # 0 random, 1 desc, 2 asc
        self.returns_kind = _RETURNS.index(self.params["returns_type"])
        self.imp_info: bool = self.params["imp_info"]
        total = nc * (nc + 1) // 2
        bounds = ((-1.0, 1.0), (-total / n, total * (n - 1) / n), (0.0, float(total)))
        self.spec = GameSpec(
            name=self.name,
            num_players=n,
            min_players=2,
            max_players=10,
            num_actions=nc,
            simultaneous=True,
            hidden_information=self.imp_info,
            explicit_chance=self.order == 0,
            objectives=("win", "points"),
            objective="win" if self.returns_kind == 0 else "points",
            max_game_length=turns,
            min_return=bounds[self.returns_kind][0],
            max_return=bounds[self.returns_kind][1],
            zero_sum=self.returns_kind != 2,
        )
        self._all = tuple(range(n))
        self._full = (1 << nc) - 1  # a full hand or deck
        # public code digits: point card + 1, then winner + 2 (1 = tie), alternating
        self._digit_bits = max(nc, n + 1).bit_length()
        self._bid_bits = nc.bit_length()  # own-bid code digits: bid + 1
        # The inline two-player turn of GoofspielState.apply_joint_action: it runs when the acting
        # tuple is this one (two players, no imp_info: None never matches), and it opens the next
        # turn's chance node itself while the turns played stay below _chance_until (random order,
        # neither the automatic last turn nor the end follows).
        self._inline_pair = self._all if n == 2 and not self.imp_info else None
        self._chance_until = min(turns, nc - 1) if self.order == 0 else 0

    def new_initial_state(self, seed: int = 0) -> GoofspielState:
        """Before the first point card; ``seed`` is unused (every chance event is explicit)."""
        return GoofspielState(self)

    def describe_action(self, action: int, player: int | None = None) -> str:
        """``bid 7`` (action 6); with ``player=CHANCE``, the point card turned (``point card 7``)."""
        if not 0 <= action < self.num_cards:
            return f"unknown action {action}"
        return f"point card {action + 1}" if player == CHANCE else f"bid {action + 1}"


class GoofspielState(State):
    """One Goofspiel position: hands are bit masks, keys are incremental ints."""

    __slots__ = (
        "_acting",  # current_players tuple: every seat, (CHANCE,) or ()
        "_hands",  # list: bit c set while a player still holds card c
        "_own",  # list: each player's own-bid code (imp_info only)
        "_point",  # value (index + 1) of the last point card turned, 0 before the first
        "_points",  # list of points per player
        "_pub",  # public code: point card and turn winner digits, alternating
        "_remaining",  # bit c: point card c not yet turned
        "_turn",  # finished turns
    )

    game: GoofspielGame

    def __init__(self, game: GoofspielGame) -> None:
        n, full = len(game._all), game._full
        self.game = game
        self.history = []
        self._hands = [full] * n
        self._own = [0] * n
        self._points = [0] * n
        self._pub = 0
        self._remaining = full
        self._turn = 0
        self._point = 0
        self._acting: tuple[int, ...] = _CHANCE_ACTING
        if game.order:
            self._deal(game.num_cards - 1 if game.order == 1 else 0)

    # -- who acts ------------------------------------------------------------------------------
    # The benchmark loop (bench/bench_small_games.py) calls these a dozen times per turn: each is
    # a slot read or a table lookup, with the common case tested first.
    @property
    def current_players(self) -> tuple[int, ...]:
        return self._acting

    def is_terminal(self) -> bool:
        return not self._acting

    def is_chance_node(self) -> bool:
        return self._acting is _CHANCE_ACTING

    def is_simultaneous_node(self) -> bool:
        return len(self._acting) > 1

    def legal_actions(self, player: int | None = None) -> list[int]:
        acting = self._acting
        if player in acting and acting is not _CHANCE_ACTING:  # a bidder
            mask = self._hands[player]
            try:  # _cards_of, inlined
                return _LOW_CARDS[mask & _LOW_MASK] + _HIGH_CARDS[mask >> _SPLIT]
            except IndexError:  # more than 14 cards
                return _cards_of(mask)
        if acting is _CHANCE_ACTING and (player is None or player == CHANCE):
            return _cards_of(self._remaining)
        return []  # the end, a seat that does not act, or a joint node without a player

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._acting is _CHANCE_ACTING:
            mask = self._remaining
            try:
                low, high = _OUTCOMES[mask.bit_count()]
                return low[mask & _LOW_MASK] + high[mask >> _SPLIT]
            except IndexError:  # more than 14 cards
                cards = _cards_of(mask)
                return [(c, 1.0 / len(cards)) for c in cards]
        raise GameError(f"{self.game.spec.name}: not a chance node")

    def is_legal(self, player: int, action: int) -> bool:
        acting = self._acting
        if action < 0:
            return False
        if acting is _CHANCE_ACTING:
            return player == CHANCE and bool(self._remaining >> action & 1)
        return (
            bool(acting) and 0 <= player < len(acting) and bool(self._hands[player] >> action & 1)
        )

    def apply_action(self, action: int) -> None:
        """The checked chance step, legal case inline (the base class raises the errors)."""
        if self._acting is _CHANCE_ACTING and type(action) is int and action >= 0:
            remaining = self._remaining
            if remaining >> action & 1:  # _deal, inlined: one chance step per turn
                self.history.append(action)
                game = self.game
                self._point = point = action + 1
                self._remaining = remaining ^ 1 << action
                self._pub = self._pub << game._digit_bits | point
                self._acting = game._all
                return
        State.apply_action(self, action)

    def apply_joint_action(self, actions: Sequence[int]) -> None:
        """The checked joint step, legal case inline (the base class raises the errors).

        The two-player turn is played here in full (it is half of all the steps of a random
        playout), ending in the next turn's chance node on every turn but the last ones.
        """
        game = self.game
        if self._acting is game._inline_pair and len(actions) == 2:
            a, b = actions
            ha, hb = hands = self._hands
            # a | b >= 0: both bids non-negative (a negative shift would raise)
            if type(a) is int and type(b) is int and a | b >= 0 and ha >> a & 1 and hb >> b & 1:
                self.history.append((a, b))
                hands[0] = ha ^ 1 << a
                hands[1] = hb ^ 1 << b
                # public digit: 1 for a tie (the point card is discarded), else 2 + the winner
                pub = self._pub << game._digit_bits
                if a == b:
                    self._pub = pub | 1
                elif a > b:
                    self._points[0] += self._point
                    self._pub = pub | 2
                else:
                    self._points[1] += self._point
                    self._pub = pub | 3
                self._turn = turn = self._turn + 1
                if turn < game._chance_until:
                    self._acting = _CHANCE_ACTING
                else:
                    self._next_turn(turn)
                return
        elif len(actions) == len(self._acting) > 1:
            for bid, hand in zip(actions, self._hands, strict=False):  # lengths checked above
                if type(bid) is not int or bid < 0 or not hand >> bid & 1:
                    break
            else:
                joint = tuple(actions)
                self.history.append(joint)
                self._play_turn(joint)
                return
        State.apply_joint_action(self, actions)

    # -- rules ---------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        self.history.append(action)
        self._deal(action)

    def _deal(self, card: int) -> None:
        game = self.game
        self._point = card + 1
        self._remaining &= ~(1 << card)
        self._pub = self._pub << game._digit_bits | (card + 1)
        self._acting = game._all

    def _apply_joint_action(self, actions: tuple[int, ...]) -> None:
        self.history.append(actions)
        self._play_turn(actions)

    def _play_turn(self, bids: Sequence[int]) -> None:
        """Spend the bids, score the point card, then open the next turn."""
        game = self.game
        hands = self._hands
        if len(bids) == 2:  # the common case, without the generic scans
            a, b = bids
            hands[0] &= ~(1 << a)
            hands[1] &= ~(1 << b)
            winner = -1 if a == b else (0 if a > b else 1)
        else:
            for p, bid in enumerate(bids):
                hands[p] &= ~(1 << bid)
            top = max(bids)
            winner = bids.index(top) if bids.count(top) == 1 else -1
        if winner >= 0:
            self._points[winner] += self._point
        self._pub = self._pub << game._digit_bits | (winner + 2)  # digit 1 = tie
        if game.imp_info:
            own, width = self._own, game._bid_bits
            for p, bid in enumerate(bids):
                own[p] = own[p] << width | (bid + 1)
        self._turn += 1
        self._next_turn(self._turn)

    def _next_turn(self, turn: int) -> None:
        """After ``turn`` finished turns: turn the next point card (or wait for chance), play the
        automatic last turn, or end the game."""
        game = self.game
        if turn < game.num_turns:
            if game.order == 0:
                self._acting = _CHANCE_ACTING
            elif game.order == 1:  # descending: the card below the last one
                if self._point > 1:
                    self._deal(self._point - 2)
            elif self._point < game.num_cards:  # ascending: the card above the last one
                self._deal(self._point)
        # As OpenSpiel: the last turn has no choice and is played at once, outside the history.
        if turn == game.num_cards - 1:
            if self._acting is _CHANCE_ACTING:
                self._deal(self._remaining.bit_length() - 1)
            self._play_turn([hand.bit_length() - 1 for hand in self._hands])
        elif turn == game.num_turns:
            self._acting = ()  # the end: returns() reads the points

    def returns(self) -> tuple[float, ...]:
        if self._acting:
            return (0.0,) * len(self._points)
        points, n, kind = self._points, len(self._points), self.game.returns_kind
        if kind == 0:  # win_loss
            best = max(points)
            winners = points.count(best)
            if winners == n:
                return (0.0,) * n
            win, lose = 1.0 / winners, -1.0 / (n - winners)
            return tuple([win if x == best else lose for x in points])
        if kind == 1:  # point_difference
            mean = sum(points) / n
            return tuple([x - mean for x in points])
        return tuple(map(float, points))  # total_points

    def scores(self) -> tuple[float, ...]:
        return tuple(float(x) for x in self._points)

    # -- information ---------------------------------------------------------------------------
    def information_set_key(self, player: int) -> int:
        game = self.game
        if game.imp_info:
            return self._pub << (game._bid_bits * game.num_turns) | self._own[player]
        key, nc = self._pub, game.num_cards
        for hand in self._hands:
            key = key << nc | hand
        return key

    def _public(self) -> tuple[list[int], list[int]]:
        """Decode the public code into (point cards, turn winners)."""
        game = self.game
        width, mask, pub, digits = game._digit_bits, (1 << game._digit_bits) - 1, self._pub, []
        while pub:
            digits.append(pub & mask)
            pub >>= width
        digits.reverse()
        return [d - 1 for d in digits[0::2]], [d - 2 for d in digits[1::2]]

    def own_bids(self, player: int) -> list[int]:
        """``player``'s bids in turn order, the automatic last turn included."""
        bids = [entry[player] for entry in self.history if isinstance(entry, tuple)]
        if self._turn > len(bids):  # the automatic last turn: the card that is gone
            spent = (1 << self.game.num_cards) - 1 & ~self._hands[player]
            bids.append(next(c for c in _cards_of(spent) if c not in bids))
        return bids

    def observation(self, player: int) -> GoofspielObservation:
        game = self.game
        cards, wins = self._public()
        seats = (player,) if game.imp_info else range(len(self._hands))
        return GoofspielObservation(
            player=player,
            point_cards=tuple(cards),
            wins=tuple(wins),
            points=tuple(self._points),
            hands=tuple(tuple(_cards_of(self._hands[p])) for p in seats),
            own_bids=tuple(self.own_bids(player)) if game.imp_info else (),
        )

    def sample_world(
        self, player: int, rng: RngLike, constraints: Any = None, *, max_nodes: int = 20_000
    ) -> GoofspielState:
        """With ``imp_info``: the opponents' past bids redrawn consistently with ``player``'s view
        (own bids, point cards, each turn's winner or tie). Otherwise a clone. No constraints."""
        if constraints:
            raise ConstraintError("goofspiel.sample_world takes no constraints")
        if not self.game.imp_info:
            return self.clone()
        r = as_rng(rng)
        game = self.game
        _, wins = self._public()
        own = self.own_bids(player)
        bids = _sample_bids(game.num_players, game.num_cards, player, own, wins, r, max_nodes)
        if bids is None:  # search budget spent: the true bids are a consistent world too
            return self.clone()
        world = GoofspielState(game)
        turn = 0
        for entry in self.history:
            if isinstance(entry, tuple):
                world._apply_joint_action(tuple(bids[q][turn] for q in range(len(entry))))
                turn += 1
            else:
                world._apply_action(entry)
        return world

    # -- plumbing ------------------------------------------------------------------------------
    def clone(self) -> GoofspielState:
        new = GoofspielState.__new__(GoofspielState)
        new.game = self.game
        new.history = self.history[:]
        new._acting = self._acting
        new._hands = self._hands[:]
        new._own = self._own[:]
        new._point = self._point
        new._points = self._points[:]
        new._pub = self._pub
        new._remaining = self._remaining
        new._turn = self._turn
        return new

    def render(self) -> str:
        cards, wins = self._public()
        n = len(self._hands)
        lines = [
            f"Goofspiel turn {self._turn} | points "
            + " ".join(f"P{p}:{x}" for p, x in enumerate(self._points))
            + f" | point card {self._point if len(self._acting) > 1 else '-'}"
        ]
        bids = [self.own_bids(p) for p in range(n)]
        for t, (card, win) in enumerate(zip(cards, wins, strict=False)):
            who = f"P{win} wins" if win >= 0 else "tie"
            lines.append(
                f"  turn {t}: card {card + 1}, bids "
                + " ".join(str(bids[p][t] + 1) for p in range(n))
                + f", {who}"
            )
        for p in range(n):
            lines.append(f"  P{p} hand: " + " ".join(str(c + 1) for c in _cards_of(self._hands[p])))
        if not self._acting:
            lines.append("  over, returns " + " ".join(f"{x:+g}" for x in self.returns()))
        return "\n".join(lines)


def _sample_bids(
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
    opponents = [q for q in range(n) if q != player]
    turns = len(own)
    bids = [[-1] * turns for _ in range(n)]
    bids[player] = list(own)
    used = [0] * n  # bit c: opponent already spent card c in another turn
    full = (1 << nc) - 1

    def size(t: int) -> float:
        b, w = own[t], wins[t]
        if w == player:
            return b  # every opponent below b
        if w == -1 and n == 2:
            return 1  # the opponent matched b
        return nc - b if w >= 0 else nc  # an opponent above b / a tie somewhere

    order = sorted(range(turns), key=lambda t: (size(t), rng.random()))
    budget = [max_nodes]

    def options(t: int) -> list[tuple[int, list[int]]]:
        """(opponent, candidate cards) for turn t, the turn's winner first."""
        b, w = own[t], wins[t]
        out = []
        for q in sorted(opponents, key=lambda q: q != w):
            free = full & ~used[q]
            if w == player:
                free &= (1 << b) - 1  # everyone below the winning bid
            elif w == q:
                free &= ~((1 << (b + 1)) - 1)  # the winner above player's bid
            elif w == -1 and n == 2:
                free &= 1 << b  # a two-player tie: the same card
            cards = _cards_of(free)
            rng.shuffle(cards)
            out.append((q, cards))
        return out

    def joint_ok(t: int, values: list[int]) -> bool:
        allbids = [own[t], *values]
        top = max(allbids)
        if wins[t] == -1:
            return allbids.count(top) >= 2
        return allbids.count(top) == 1  # the winner's bid is the top one by construction

    def assign_turn(i: int) -> bool:
        if i == len(order):
            return True
        t = order[i]
        cands = options(t)
        cap = nc if wins[t] in (-1, player) else -1  # an opponent's win caps the others
        values: list[int] = []

        def pick(k: int) -> bool:
            budget[0] -= 1
            if budget[0] < 0:
                return False
            if k == len(cands):
                if not joint_ok(t, values):
                    return False
                for (q, _), v in zip(cands, values, strict=True):
                    bids[q][t] = v
                    used[q] |= 1 << v
                if assign_turn(i + 1):
                    return True
                for (q, _), v in zip(cands, values, strict=True):
                    used[q] &= ~(1 << v)
                return False
            limit = values[0] if cap < 0 and k > 0 else nc
            for v in cands[k][1]:
                if v >= limit:
                    continue
                values.append(v)
                if pick(k + 1):
                    return True
                values.pop()
                if budget[0] < 0:
                    return False
            return False

        return pick(0)

    return bids if assign_turn(0) else None


class GoofspielMatchPlayer:
    """The classic "matching" Goofspiel strategy: bid the card equal to the prize.

    When that card is already spent, bid the cheapest card above the prize (still likely to win it);
    when none is left above, throw away the lowest card.
    """

    name = "goofspiel_match"

    def __init__(self, game: Game) -> None:
        if not isinstance(game, GoofspielGame):
            raise ValueError(f"GoofspielMatchPlayer plays goofspiel, not {game.spec.name}")
        self.game = game

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, GoofspielObservation)
        prize = obs.point_cards[-1]  # the face-up card (bidding happens after it is turned)
        hand = obs.hands[0] if len(obs.hands) == 1 else obs.hands[player]
        if prize in hand:
            return prize
        above = [c for c in hand if c > prize]
        return above[0] if above else hand[0]

    def __repr__(self) -> str:
        return "GoofspielMatchPlayer()"


PLUGIN = GamePlugin(
    name="goofspiel",
    game=GoofspielGame,
    encoder="omega_cluster.model.encoders.goofspiel:GoofspielEncoder",
    players={"heuristic": GoofspielMatchPlayer},
)
