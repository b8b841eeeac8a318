"""The hand-written value of a Mexican Train position: :class:`HandValue` and :class:`HandWeights`.

Each seat's **points** are ``Σ weight × term`` over the named :data:`TERMS`, every term read from
what that seat sees (its own hand, the public trains, markers, hand sizes, the boneyard's size and
the finished rounds), in units of "tiles left in hand": a tile more in hand costs one point. The
value of a position is each seat's win share, the softmax of the points over the seats divided by
``scale`` (points per win: a lead of ``scale`` points makes a seat ``e`` times as likely to win as
the other). A finished game is worth its returns. The search leaf ``hand`` plays this value.

The weights are set by hand from the game, not fitted: going out wins a round, so the tiles left
count most, then what makes them easy to shed (a long chain from the own train's end, tiles that
match open ends) and what makes them hard (doubles to cover, a marker up that lets others on the
own train); pips count when a round may block or over a points campaign.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omega_cluster.games.mexican_train.ntuple import ChainLengths
from omega_cluster.games.mexican_train.officers.terms import hand_values
from omega_cluster.games.mexican_train.officers.weights import weights_from_dict
from omega_cluster.games.mexican_train.tiles import SLOTS_OF

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.game import MexicanTrainGame
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["TERMS", "HandValue", "HandWeights"]

TERMS: tuple[str, ...] = (
    "tiles",
    "pips",
    "endgame_pips",
    "chain",
    "stranded_pips",
    "playable",
    "doubles",
    "marker_up",
    "to_move",
    "smallest_opponent",
    "campaign_pips",
    "rounds_won",
)
"""The term names, in the order :meth:`HandValue.terms` lists them."""


@dataclass(frozen=True)
class HandWeights:
    """The weight of each term of :data:`TERMS` (term units in brackets) and the ``scale``."""

    tiles: float = -1.0
    """[tiles] in the seat's hand: the round goes to whoever sheds them all first."""
    pips: float = -0.03
    """[pips] in the seat's hand (0|0 counts ``double_blank_value``): what losing the round costs
    in a points campaign, and heavy tiles are the hard ones to shed."""
    endgame_pips: float = -0.05
    """[pips] in hand once the boneyard is empty: a blocked round goes to the fewest pips."""
    chain: float = 0.4
    """[tiles] in the longest chain of own tiles from the own train's end: tiles that will go
    down turn after turn whatever the others do."""
    stranded_pips: float = -0.01
    """[pips] in hand outside that chain: they need other trains' ends."""
    playable: float = 0.3
    """[tiles] in hand matching an end open to the seat now (own, Mexican, marked trains)."""
    doubles: float = -0.3
    """[doubles] in hand: each must be covered, by the seat or by whoever follows."""
    marker_up: float = -0.5
    """[0/1] the seat's marker is up: every other seat may shed tiles on its train."""
    to_move: float = 0.4
    """[0/1] the seat moves now: a tempo ahead of the seats that wait."""
    smallest_opponent: float = 0.15
    """[tiles] in the smallest opponent hand: how far the nearest rival is from going out."""
    campaign_pips: float = -0.05
    """[pips ÷ √(rounds left + 1)] the seat's cumulative pips of the finished rounds (objective
    ``points``): a lead counts more as fewer rounds remain to undo it."""
    rounds_won: float = 3.0
    """[rounds ÷ √(rounds left + 1)] rounds the seat won by going out (objective ``go_out``)."""
    scale: float = 2.0
    """[points per win] the softmax temperature: ``scale`` points more make a seat ``e`` times
    as likely to win."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"HandWeights.{f.name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"HandWeights.{f.name} must be finite, got {value!r}")
        if self.scale <= 0:
            raise ValueError(f"HandWeights.scale must be > 0 (points per win), got {self.scale!r}")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> HandWeights:
        """Build from a mapping of field names (missing ones keep their defaults)."""
        return weights_from_dict(cls, values)

    def as_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)

    def vector(self) -> tuple[float, ...]:
        """The term weights in :data:`TERMS` order."""
        return tuple(float(getattr(self, name)) for name in TERMS)


class HandValue:
    """``value(state) -> win share per seat`` from the hand-written points (module doc)."""

    def __init__(
        self, game: MexicanTrainGame, weights: HandWeights | Mapping[str, Any] | None = None
    ) -> None:
        if weights is None:
            weights = HandWeights()
        elif not isinstance(weights, HandWeights):
            weights = HandWeights.from_dict(weights)
        self.game = game
        self.weights = weights
        self._vector = weights.vector()
        self._values = hand_values(game.tiles.double_set, game.double_blank_value)
        self._chain = ChainLengths(game)

    def terms(self, state: MexicanTrainState, seat: int) -> dict[str, float]:
        """``seat``'s term values (:data:`TERMS`), from what ``seat`` sees."""
        return dict(zip(TERMS, self._terms(state, seat), strict=True))

    def _terms(self, s: MexicanTrainState, seat: int) -> tuple[float, ...]:
        g = self.game
        em = g.tiles.end_mask
        values = self._values
        hand = s.hands[seat]
        pips, m = 0, hand
        while m:
            low = m & -m
            pips += values[low.bit_length() - 1]
            m ^= low
        ends = s.ends
        reach = 0
        for x in SLOTS_OF[s.open_mask(seat)]:
            reach |= em[ends[x]]
        length, chain_pips = self._chain(ends[seat], hand)
        sizes = [h.bit_count() for q, h in enumerate(s.hands) if q != seat]
        damp = 1.0 / math.sqrt(g.num_rounds - s.round_index)  # rounds left this one included
        points = g.objective == "points"
        return (
            float(hand.bit_count()),
            float(pips),
            float(pips) if not s.boneyard else 0.0,
            float(length),
            float(pips - chain_pips),
            float((hand & reach).bit_count()),
            float((hand & g.tiles.doubles_mask).bit_count()),
            float(s.marked >> seat & 1),
            float(s.current == seat),
            float(min(sizes)),
            s.pip_totals[seat] * damp if points else 0.0,
            0.0 if points else s.outs[seat] * damp,
        )

    def points(self, state: MexicanTrainState) -> tuple[float, ...]:
        """Each seat's points, ``Σ weight × term`` from what that seat sees."""
        w = self._vector
        return tuple(
            sum(a * b for a, b in zip(w, self._terms(state, seat), strict=True))
            for seat in range(self.game.num_players)
        )

    def __call__(self, state: MexicanTrainState) -> tuple[float, ...]:
        """Win shares per seat (sum 1): softmax of points / scale; a finished game's returns."""
        if state.is_terminal():
            return tuple(state.returns())
        scale = self.weights.scale
        pts = self.points(state)
        top = max(pts)
        exps = [math.exp((p - top) / scale) for p in pts]
        total = sum(exps)
        return tuple(e / total for e in exps)
