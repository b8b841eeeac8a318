"""Goofspiel's positions: :class:`GoofspielState` (the bids, the point cards, the scoring, the
information sets and ``sample_world``) and the observation type :class:`GoofspielObservation`.

Hands are bit masks and information-set keys incremental ints; the two-player turn, half of
every random playout's steps, is played inline in ``apply_joint_action``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from omega_cluster.games.api import CHANCE, ConstraintError, GameError, RngLike, State, as_rng
from omega_cluster.games.goofspiel.cards import (
    HIGH_CARDS,
    LOW_CARDS,
    LOW_MASK,
    OUTCOMES,
    SPLIT,
    cards_of,
)
from omega_cluster.games.goofspiel.sampling import sample_bids

if TYPE_CHECKING:
    from omega_cluster.games.goofspiel.game import GoofspielGame

__all__ = ["GoofspielObservation", "GoofspielState"]

_CHANCE_ACTING = (CHANCE,)


class GoofspielObservation(NamedTuple):
    """Everything one player knows: OpenSpiel's information state as fields."""

    player: int  # the observing seat
    point_cards: tuple[int, ...]  # point card indices turned so far (value = index + 1)
    wins: tuple[int, ...]  # winner of each finished turn, -1 for a tie
    points: tuple[int, ...]  # every player's points
    hands: tuple[tuple[int, ...], ...]  # every hand; with imp_info only the player's own
    own_bids: tuple[int, ...]  # the player's bids in turn order (imp_info only: OpenSpiel's
    # perfect-information state shows the hands, not the order in which they were spent)


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
            try:  # cards_of, inlined
                return LOW_CARDS[mask & LOW_MASK] + HIGH_CARDS[mask >> SPLIT]
            except IndexError:  # more than 14 cards
                return cards_of(mask)
        if acting is _CHANCE_ACTING and (player is None or player == CHANCE):
            return cards_of(self._remaining)
        return []  # the end, a seat that does not act, or a joint node without a player

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self._acting is _CHANCE_ACTING:
            mask = self._remaining
            try:
                low, high = OUTCOMES[mask.bit_count()]
                return low[mask & LOW_MASK] + high[mask >> SPLIT]
            except IndexError:  # more than 14 cards
                cards = cards_of(mask)
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
        playout), ending in the next turn's chance node on every turn but the last ones. Only a
        tuple takes the inline paths (every caller on the hot path passes one); anything else
        goes to the base class, which checks its type (a set or a dict is not a joint action).
        """
        if type(actions) is not tuple:
            State.apply_joint_action(self, actions)
            return
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
                self.history.append(actions)
                self._play_turn(actions)
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
            bids.append(next(c for c in cards_of(spent) if c not in bids))
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
            hands=tuple(tuple(cards_of(self._hands[p])) for p in seats),
            own_bids=tuple(self.own_bids(player)) if game.imp_info else (),
        )

    def hidden_state(self, player: int) -> np.ndarray | None:
        """With ``imp_info``, for training only: the other seats' hands, relative seat 1 first,
        one float per card (1 while held) — the part of the past bids ``player`` cannot see;
        ``None`` without ``imp_info`` (nothing is hidden)."""
        if not self.game.imp_info:
            return None
        n, nc = len(self._hands), self.game.num_cards
        cards = np.arange(nc)
        rows = [self._hands[(player + k) % n] >> cards & 1 for k in range(1, n)]
        return np.concatenate(rows).astype(np.float32)

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
        bids = sample_bids(game.num_players, game.num_cards, player, own, wins, r, max_nodes)
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
            lines.append(f"  P{p} hand: " + " ".join(str(c + 1) for c in cards_of(self._hands[p])))
        if not self._acting:
            lines.append("  over, returns " + " ".join(f"{x:+g}" for x in self.returns()))
        return "\n".join(lines)
