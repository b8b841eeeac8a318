"""OpenSpiel's trick-taking card games as the exact determinization needs them: where each card
was dealt, what the history proves about the hands a player cannot see, and the history of a
world that deals the unseen cards again.

Supported (:func:`card_game`): ``hearts`` (every rule variant, with or without passing) and
``oh_hell`` (any table, deck and trick count). Everything is read from the action history and
the movers pyspiel records (``full_history``: who played each card is public in both games), never
from a state's strings. A card is ``rank * suits + suit`` in both games (pyspiel's encoding).

What a player knows, at a decision node once the deal is complete (:meth:`CardGame.deal`):

* its own cards, every card played and by whom, the cards it passed (hearts: they sit in the
  receiver's hand until played) and received, oh_hell's trump card, every bid;
* **voids and the like**: a card a player was not allowed to play proves what its hand lacked
  then, and its hand then holds every card it holds now. Failing to follow suit proves a void in
  the led suit (both games). Hearts adds: a point card (a heart or the queen of spades) played to
  the first trick, when not following, proves a hand of point cards only
  (``no_pts_on_first_trick``); leading a heart before hearts are broken proves a hand of hearts
  only, the queen of spades aside with ``can_lead_hearts_instead_of_qs`` (``must_break_hearts``);
  the seat that leads the first trick, or is to lead it, holds the two of clubs (with
  ``can_lead_any_club`` it need not lead it).
  These are exactly the cases where pyspiel's ``PlayLegalActions`` narrows a hand's choice.

The rest is a :class:`Deal`: the unknown cards, the holders (the other seats' hands, and
oh_hell's undealt stock) with how many unknown cards each holds and the cards each cannot hold.
Any assignment of the unknown cards that fits it, with hearts' unseen passes drawn uniformly,
rebuilds (:meth:`CardGame.world`) a history that every move of the true one is legal in and that
leaves the player's view as it was; :mod:`.holdings` draws the assignment.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["UNDEALT", "CardGame", "Deal", "Hearts", "OhHell", "card_game"]

UNDEALT: Final = -1
"""The holder of the cards no player was dealt (oh_hell's stock)."""


@dataclass(frozen=True)
class Deal:
    """What one player knows of the deal at one state (module docstring): the unknown cards,
    and per holder (a seat, or :data:`UNDEALT`) how many of them it holds and a bit mask of the
    cards it cannot hold. A world's history is ``template`` with holder ``i``'s unknown cards at
    the entries ``places[i]`` (none for :data:`UNDEALT`), where ``places`` is not None; else
    (hearts' passes) :meth:`CardGame.world` builds it from ``context``."""

    unknown: tuple[int, ...]
    holders: tuple[int, ...]
    slots: tuple[int, ...]
    forbidden: tuple[int, ...]
    template: tuple[int, ...] = ()
    places: tuple[tuple[int, ...], ...] | None = None
    context: Any = None


class CardGame:
    """One supported game at its parameters: the deal and the tricks as the history shows them."""

    name: str = ""

    def __init__(self, players: int, suits: int, ranks: int) -> None:
        self.players, self.suits, self.ranks = players, suits, ranks
        self.cards = suits * ranks
        self.suit_mask = [
            sum(1 << (r * suits + s) for r in range(ranks)) for s in range(suits)
        ]  # per suit: its cards as a bit mask

    def deal(self, history: Sequence[int], movers: Sequence[int], player: int) -> Deal | None:
        """What ``player`` knows of the deal after ``history`` (``movers``: who made each entry,
        -1 for chance, then who moves now: public in both games); None where the card path does
        not apply (the deal is not complete)."""
        raise NotImplementedError

    def world(self, deal: Deal, hands: Sequence[Sequence[int]], rng: random.Random) -> list[int]:
        """The history of the world where holder ``i`` of ``deal`` holds ``hands[i]`` (its unknown
        cards), the player's own moves and every public entry as they were."""
        assert deal.places is not None
        history = list(deal.template)
        for places, cards in zip(deal.places, hands, strict=True):
            for at, card in zip(places, cards, strict=False):  # (the stock has no places)
                history[at] = card
        return history

    def _template(
        self, head: Sequence[int], per: int, known: Sequence[Sequence[int]],
        holders: Sequence[int], tail: Sequence[int],
    ) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:  # fmt: skip
        """``head``, a deal of ``per`` cards round the table from seat 0 that gives seat ``s`` the
        cards ``known[s]`` first, then ``tail``; and per holder the deal entries left for its
        unknown cards (none for the stock)."""
        n = self.players
        template = [*head, *([-1] * (per * n)), *tail]
        entries = [[len(head) + i * n + s for i in range(per)] for s in range(n)]
        for s in range(n):
            for at, card in zip(entries[s], known[s], strict=False):
                template[at] = card
        places = tuple(() if h == UNDEALT else tuple(entries[h][len(known[h]) :]) for h in holders)
        return tuple(template), places

    # -- shared by the games --------------------------------------------------------------------
    def _voids(self, plays: Sequence[tuple[int, int]], forbidden: list[int]) -> None:
        """Follow suit: a seat that did not follow the led suit holds none of it (both games).
        ``plays``: (seat, card) in order; ``forbidden``: per seat, updated in place."""
        n, suits = self.players, self.suits
        for t, (seat, card) in enumerate(plays):
            if t % n:
                led = plays[t - t % n][1] % suits
                if card % suits != led:
                    forbidden[seat] |= self.suit_mask[led]


def _seats_cards(entries: Sequence[int], players: int) -> list[list[int]]:
    """Cards dealt round the table (entry ``i`` to seat ``i % players``): per seat."""
    return [list(entries[s::players]) for s in range(players)]


def _deal_order(hands: Sequence[Sequence[int]], players: int) -> list[int]:
    """The deal entries that give seat ``s`` the cards ``hands[s]`` (each sorted: the order of a
    seat's cards changes nothing a player sees, nor the state)."""
    ordered = [sorted(h) for h in hands]
    per = len(ordered[0])
    return [ordered[i % players][i // players] for i in range(per * players)]


@dataclass(frozen=True)
class _HeartsContext:
    pass_dir: int
    dealt: list[int]  # the player's dealt hand
    passed: list[list[int]]  # per seat, the cards it passed, where the player saw them: its own
    # and, once passing is over, its giver's (the others' left empty)
    passes_done: int  # pass entries in the history (0..12)
    played: list[list[int]]  # per seat, the cards it played
    known: list[list[int]]  # per seat, unplayed cards the player knows it holds
    plays: list[int]  # the play entries


class Hearts(CardGame):
    """pyspiel's ``hearts``: a pass direction (chance), 52 cards dealt round the table, three
    cards passed by each seat in turn (when the direction is not "no pass"), then 13 tricks."""

    name = "hearts"
    _CLUBS2: Final = 0  # the two of clubs
    _QS: Final = 43  # the queen of spades
    _HEARTS: Final = 2  # the hearts suit

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(4, 4, 13)
        self.rules = {k: bool(v) for k, v in params.items()}
        hearts = self.suit_mask[self._HEARTS]
        self.non_points = ((1 << 52) - 1) & ~hearts & ~(1 << self._QS)
        self.non_hearts = ((1 << 52) - 1) & ~hearts

    def deal(self, history: Sequence[int], movers: Sequence[int], player: int) -> Deal | None:
        if len(history) < 53:
            return None
        pass_dir = history[0]
        dealt = _seats_cards(history[1:53], 4)
        passes = 12 if pass_dir else 0
        done = min(passes, len(history) - 53)
        giver = (player - pass_dir) % 4
        seen_passes: list[list[int]] = [[] for _ in range(4)]  # the player's, its giver's
        for j in range(done):  # seat j // 3 passes entry 53 + j
            if j // 3 == player or (done == passes and j // 3 == giver):
                seen_passes[j // 3].append(history[53 + j])
        others = tuple(s for s in range(4) if s != player)
        if done < passes:  # passing: every other hand is unseen, and so are its passes
            unknown = tuple(c for c in range(52) if c not in set(dealt[player]))
            context = _HeartsContext(pass_dir, dealt[player], seen_passes, done, [], [], [])
            return Deal(unknown, others, (13,) * 3, (0,) * 3, context=context)
        plays = list(history[53 + passes :])
        first_leader = movers[53 + passes]  # (or the seat to lead it): it holds the two of clubs
        movers = movers[53 + passes : len(history)]
        played: list[list[int]] = [[] for _ in range(4)]
        for seat, card in zip(movers, plays, strict=True):
            played[seat].append(card)
        gone = set(plays)
        known: list[list[int]] = [[] for _ in range(4)]
        if pass_dir:  # what the player passed sits in the receiver's hand until played
            known[(player + pass_dir) % 4] = [c for c in seen_passes[player] if c not in gone]
        forbidden = [0] * 4
        self._voids(list(zip(movers, plays, strict=True)), forbidden)
        self._hearts_rules(plays, movers, forbidden)
        if first_leader != player and self._CLUBS2 not in {*gone, *known[first_leader]}:
            known[first_leader].append(self._CLUBS2)
        # the player's hand after passing, what was played, and what it knows is elsewhere
        post = set(dealt[player]) - set(seen_passes[player]) | set(seen_passes[giver])
        seen = post | gone | {c for cards in known for c in cards}
        unknown = tuple(c for c in range(52) if c not in seen)
        slots = tuple(13 - len(played[s]) - len(known[s]) for s in others)
        shown = tuple(forbidden[s] for s in others)
        if pass_dir:  # the dealt hands are not the hands played from: world() works them out
            context = _HeartsContext(
                pass_dir, dealt[player], seen_passes, done, played, known, plays
            )
            return Deal(unknown, others, slots, shown, context=context)
        hands = [[*played[s], *known[s]] for s in range(4)]
        hands[player] = sorted(dealt[player])
        template, places = self._template([pass_dir], 13, hands, others, plays)
        return Deal(unknown, others, slots, shown, template, places)

    def _hearts_rules(
        self, plays: Sequence[int], movers: Sequence[int], forbidden: list[int]
    ) -> None:
        """Hearts' own narrowings of a hand (module docstring) but the first lead's, which
        :meth:`deal` reads: the seat that leads the first trick holds the two of clubs."""
        rules = self.rules
        broken = not rules["must_break_hearts"]
        for t, card in enumerate(plays):
            seat, suit = movers[t], card % 4
            following = t % 4 != 0
            if t == 0 or (following and suit == plays[t - t % 4] % 4):
                pass
            elif following:  # (a void in the led suit is _voids')
                points = suit == self._HEARTS or card == self._QS
                if rules["no_pts_on_first_trick"] and t < 4 and points:
                    forbidden[seat] |= self.non_points
            elif not broken and suit == self._HEARTS:  # led a heart before hearts broke
                allowed_qs = rules["can_lead_hearts_instead_of_qs"]
                forbidden[seat] |= self.non_hearts & ~((1 << self._QS) if allowed_qs else 0)
            if suit == self._HEARTS or (card == self._QS and rules["qs_breaks_hearts"]):
                broken = True

    def world(self, deal: Deal, hands: Sequence[Sequence[int]], rng: random.Random) -> list[int]:
        if deal.places is not None:  # no passing
            return super().world(deal, hands, rng)
        ctx: _HeartsContext = deal.context
        player = next(s for s in range(4) if s not in deal.holders)
        d = ctx.pass_dir
        hand: list[list[int]] = [[] for _ in range(4)]
        hand[player] = list(ctx.dealt)
        if not ctx.plays and ctx.passes_done < (12 if d else 0):  # passing
            for s, cards in zip(deal.holders, hands, strict=True):
                hand[s] = list(cards)
            passes = []
            for j in range(ctx.passes_done // 3 + (1 if ctx.passes_done % 3 else 0)):
                count = min(3, ctx.passes_done - 3 * j)
                if j == player:  # its own passes, in its order: its views between them show it
                    chosen = list(ctx.passed[j])
                else:
                    chosen = rng.sample(hand[j], count)
                passes += chosen
            return [d, *_deal_order(hand, 4), *passes]
        post: list[list[int]] = [[] for _ in range(4)]
        for s, cards in zip(deal.holders, hands, strict=True):
            post[s] = [*ctx.played[s], *ctx.known[s], *cards]
        # passing is over: seat s passed P[s] to s + d; the player saw its own and its giver's
        giver = (player - d) % 4
        passed: list[list[int]] = [list(p) for p in ctx.passed]
        for s in range(4):
            if s not in (player, giver):  # unseen: any three cards of the receiver's hand
                passed[s] = rng.sample(post[(s + d) % 4], 3)
        for s in deal.holders:
            got = set(passed[(s - d) % 4])
            hand[s] = [c for c in post[s] if c not in got] + passed[s]
        order: list[int] = []
        for s in range(4):  # the order of another seat's pass is unseen (pyspiel sorts it)
            cards = list(passed[s])
            if s != player:
                rng.shuffle(cards)
            order += cards
        return [d, *_deal_order(hand, 4), *order, *ctx.plays]


class OhHell(CardGame):
    """pyspiel's ``oh_hell``: the number of tricks and the dealer (chance), ``tricks`` cards
    dealt round the table from seat 0, the trump card shown, one bid each, then the tricks."""

    name = "oh_hell"

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__(int(params["players"]), int(params["num_suits"]),
                         int(params["num_cards_per_suit"]))  # fmt: skip

    def deal(self, history: Sequence[int], movers: Sequence[int], player: int) -> Deal | None:
        n = self.players
        if len(history) < 2:
            return None
        tricks = history[0]
        start = 2 + n * tricks  # the trump card's entry
        if len(history) <= start:
            return None
        dealt = _seats_cards(history[2:start], n)
        trump = history[start]
        first_play = start + 1 + n
        plays = [(movers[i], history[i]) for i in range(first_play, len(history))]
        played: list[list[int]] = [[] for _ in range(n)]
        for seat, card in plays:
            played[seat].append(card)
        forbidden = [0] * n
        self._voids(plays, forbidden)
        seen = set(dealt[player]) | {trump} | {c for _, c in plays}
        unknown = tuple(c for c in range(self.cards) if c not in seen)
        others = [s for s in range(n) if s != player]
        holders = (*others, UNDEALT)
        slots = (*(tricks - len(played[s]) for s in others), self.cards - n * tricks - 1)
        shown = (*(forbidden[s] for s in others), 0)
        hands = [list(p) for p in played]
        hands[player] = sorted(dealt[player])
        template, places = self._template(history[:2], tricks, hands, holders, history[start:])
        return Deal(unknown, holders, slots, shown, template, places)


def card_game(name: str, params: Mapping[str, Any]) -> CardGame | None:
    """The :class:`CardGame` of pyspiel game ``name`` at ``params``, or None (not supported)."""
    if name == "hearts":
        return Hearts(params)
    if name == "oh_hell":
        return OhHell(params)
    return None
