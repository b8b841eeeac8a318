"""Immutable records that leave a Mexican Train state: round results, observations, constraints.

:mod:`.state` produces them; the arena, the self-play record writer (per-round credit labels:
each decision is labelled by the outcome of its own round), the encoders and the heuristic
players read them. All are frozen dataclasses, so they compare and hash by value.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DealConstraints", "MexicanTrainObservation", "RoundResult", "TrainView"]


@dataclass(frozen=True)
class RoundResult:
    """The outcome of one finished round (public once the round ends)."""

    round_index: int  # 0-based position in the campaign
    engine: int  # pip value of the engine double (12 for the first double-12 round)
    pips: tuple[int, ...]  # pips left in each player's hand (0|0 counts double_blank_value)
    went_out: int | None  # the player who played their last tile, None when blocked
    blocked: bool  # the boneyard was empty and nobody could play

    def round_winners(self, objective: str = "points") -> tuple[int, ...]:
        """The round's winners: the per-round credit label of the round's decisions.

        ``points``: the players with the fewest pips this round (campaign points are the sum of
        independent rounds, so winning rounds is what minimizes the total); ``go_out``: the player
        who went out, nobody in a blocked round.
        """
        if objective == "go_out":
            return () if self.went_out is None else (self.went_out,)
        best = min(self.pips)
        return tuple(i for i, x in enumerate(self.pips) if x == best)


@dataclass(frozen=True)
class TrainView:
    """One train as every player sees it."""

    slot: int  # action slot: 0..7 the seat owning it, 8 the Mexican train
    tiles: tuple[int, ...]  # tile indices in the order they were laid from the engine outwards
    open_end: int  # pip value a tile must match to be laid on it
    marked: bool  # the owner's marker is up: everyone may play on it (always False for Mexican)


@dataclass(frozen=True)
class MexicanTrainObservation:
    """Everything one player may know: own hand plus the whole public record.

    Equal between a state and every world ``sample_world(player, ...)`` draws from it.
    """

    player: int  # whose observation this is
    hand: int  # bit mask of the player's own tiles (tile index order of ``tiles.TileSet``)
    current_player: int  # who acts now, -1 after the end of the game
    round_index: int  # 0-based round of the campaign
    engine: int  # engine double of the current round
    trains: tuple[TrainView, ...]  # personal trains of seats 0..N-1, then the Mexican train
    open_doubles: tuple[int, ...]  # train slots ending in an uncovered double, in laying order
    hand_sizes: tuple[int, ...]  # tiles in each player's hand
    boneyard_size: int  # tiles left to draw
    drawn: bool  # the acting player has drawn during the current play
    must_cover: bool  # strict rule: the next play must cover ``open_doubles[0]``
    chain: bool  # the acting player is laying a first-turn chain on their own train
    scores: tuple[int, ...]  # cumulative pips of finished rounds
    rounds_won: tuple[int, ...]  # rounds each player won by going out
    round_results: tuple[RoundResult, ...]  # every finished round
    log: tuple[int, ...]  # the public history: every action id (a draw does not name its tile)


@dataclass(frozen=True)
class DealConstraints:
    """Public knowledge that narrows ``sample_world``: tiles each player cannot be holding.

    ``forbidden[q]`` is a bit mask of tiles seat ``q`` is known not to hold (e.g. revealed by a
    pass: a player who passed held no tile matching the trains open to them at that moment).
    ``limits[q]`` bounds how many of ``q``'s tiles lie in wider masks (see the field). Tiles
    outside every hand go to the boneyard. Belief models that weight deals are a later layer;
    this record only states hard facts.
    """

    forbidden: tuple[int, ...]  # one bit mask per seat
    #: per seat, ``(mask, at_most)`` pairs: at most ``at_most`` of the seat's tiles lie in
    #: ``mask`` (what a seat proved absent before it drew tiles it may still hold: only those
    #: later tiles can be in ``mask``). Masks nested, widest first; empty: no such facts.
    limits: tuple[tuple[tuple[int, int], ...], ...] = ()
