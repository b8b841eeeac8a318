"""Read-only views of a Mexican Train state: the API heuristic players and encoders read.

:class:`StateViews` is a mixin of :class:`~omega_cluster.games.mexican_train.state.MexicanTrainState`
(it owns no fields): hands, train ends and lengths, markers, hand sizes, the boneyard size, the
tiles of each train (rebuilt from the public history), per-round outcomes and the labelling of
history entries by round, and the :class:`MexicanTrainObservation` of a player; and who made each
recent move of the round (:func:`recent_actions`, the log the encoder shows). Nothing here
changes the state; the rules live in :mod:`.state`.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, cast

from omega_cluster.games.api import HistoryEntry
from omega_cluster.games.mexican_train.records import (
    MexicanTrainObservation,
    RoundResult,
    TrainView,
)
from omega_cluster.games.mexican_train.tiles import NUM_SLOTS, TileSet

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.game import MexicanTrainGame
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["StateViews", "recent_actions", "replay_actors"]


class StateViews:
    """Read-only accessors shared by every Mexican Train state (a mixin without fields)."""

    __slots__ = ()

    game: MexicanTrainGame
    history: list[HistoryEntry]
    board: int
    boneyard: list[int]
    chain: bool
    current: int
    drawn: bool
    engine: int
    ends: list[int]
    hands: list[int]
    lengths: list[int]
    marked: int
    open_doubles: tuple[int, ...]
    outs: tuple[int, ...]
    pip_totals: tuple[int, ...]
    round_index: int
    round_results: tuple[RoundResult, ...]
    round_starts: tuple[int, ...]

    # -- outcome ------------------------------------------------------------------------------
    def scores(self) -> tuple[float, ...]:
        """Cumulative pips per player (for both objectives; see ``rounds_won`` for go_out)."""
        return tuple(float(x) for x in self.pip_totals)

    def rounds_won(self) -> tuple[int, ...]:
        """Rounds each player won by going out (the ``go_out`` objective's count)."""
        return self.outs

    def round_of_decision(self, index: int) -> int:
        """The round that history entry ``index`` belongs to."""
        if not 0 <= index < len(self.history):
            raise IndexError(f"history index {index} outside 0..{len(self.history) - 1}")
        return bisect_right(self.round_starts, index) - 1

    @property
    def decision_rounds(self) -> tuple[int, ...]:
        """For every history entry, the round it belongs to (to label decisions per round)."""
        starts, out = self.round_starts, []
        for r, start in enumerate(starts):
            stop = starts[r + 1] if r + 1 < len(starts) else len(self.history)
            out.extend([r] * (stop - start))
        return tuple(out)

    # -- read-only views for players and encoders -----------------------------------------------
    @property
    def tiles(self) -> TileSet:
        """The set's tables: pips, end masks, doubles mask, tile names."""
        return self.game.tiles

    @property
    def current_player(self) -> int:
        return self.current

    def hand(self, player: int) -> int:
        """Bit mask of ``player``'s tiles (a player may only look at their own)."""
        return self.hands[player]

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(m.bit_count() for m in self.hands)

    @property
    def boneyard_size(self) -> int:
        return len(self.boneyard)

    def unseen_mask(self, player: int) -> int:
        """Tiles ``player`` cannot see: the other hands and the boneyard."""
        seen = self.hands[player] | self.board | 1 << self.game.tiles.double(self.engine)
        return self.game.tiles.full_mask & ~seen

    @property
    def must_cover(self) -> bool:
        """Strict rule with an open double: the next play must cover ``open_doubles[0]``."""
        return bool(self.open_doubles) and self.game.strict_doubles

    def train_end(self, slot: int) -> int:
        return self.ends[slot]

    def train_length(self, slot: int) -> int:
        return self.lengths[slot]

    def is_marked(self, slot: int) -> bool:
        return bool(self.marked >> slot & 1)

    def train_tiles(self, slot: int) -> tuple[int, ...]:
        """Tiles laid on a train this round, from the engine outwards (scans the history)."""
        return self.all_train_tiles()[slot]

    def all_train_tiles(self) -> tuple[tuple[int, ...], ...]:
        draw = self.game.tiles.draw_action
        trains: list[list[int]] = [[] for _ in range(NUM_SLOTS)]
        for a in cast("list[int]", self.history)[self.round_starts[-1] :]:
            if a < draw:
                trains[a % NUM_SLOTS].append(a // NUM_SLOTS)
        return tuple(tuple(t) for t in trains)

    def decode_action(self, action: int) -> tuple[int, int] | None:
        """``(tile, train_slot)`` of a play, ``None`` for DRAW / PASS."""
        return self.game.tiles.decode_action(action)

    # -- information --------------------------------------------------------------------------
    def observation(self, player: int) -> MexicanTrainObservation:
        g = self.game
        trains = self.all_train_tiles()
        views = tuple(
            TrainView(s, trains[s], self.ends[s], bool(self.marked >> s & 1))
            for s in g.train_slots()
        )
        return MexicanTrainObservation(
            player=player,
            hand=self.hands[player],
            current_player=self.current,
            round_index=self.round_index,
            engine=self.engine,
            trains=views,
            open_doubles=self.open_doubles,
            hand_sizes=self.hand_sizes,
            boneyard_size=len(self.boneyard),
            drawn=self.drawn,
            must_cover=bool(self.open_doubles) and g.strict_doubles,
            chain=self.chain,
            scores=self.pip_totals,
            rounds_won=self.outs,
            round_results=self.round_results,
            log=tuple(cast("list[int]", self.history)),
        )


def recent_actions(s: MexicanTrainState, count: int) -> list[tuple[int, int]]:
    """The last ``count`` ``(actor, action)`` pairs of the current round, most recent first.

    Who made each move is public but not stored; it follows from the turn structure. Without
    first-turn chains it is read backwards from the acting seat in O(count): a draw or a double
    keeps the turn (a double grants another play), a pass or any other play hands it to the next
    seat. With chains the round is replayed forwards (a chain's own-train plays keep the turn).
    """
    hist = s.history
    start = s.round_starts[-1]
    if s.over or count == 0 or start >= len(hist):
        return []
    g = s.game
    n = g.num_players
    tiles = g.tiles
    draw, pas, high, low = tiles.draw_action, tiles.pass_action, tiles.high, tiles.low
    if g.first_turn_chain:
        return replay_actors(s, start, count)
    out: list[tuple[int, int]] = []
    nxt = s.current
    i = len(hist) - 1
    while i >= start and len(out) < count:
        a = hist[i]
        assert isinstance(a, int)
        if a == draw:
            actor = nxt
        elif a == pas:
            actor = nxt - 1 if nxt else n - 1
        else:
            tile = a // NUM_SLOTS
            actor = nxt if high[tile] == low[tile] else (nxt - 1 if nxt else n - 1)
        out.append((actor, a))
        nxt = actor
        i -= 1
    return out


def replay_actors(s: MexicanTrainState, start: int, count: int) -> list[tuple[int, int]]:
    """Forward replay of the turn structure of the current round (used with first-turn chains)."""
    g = s.game
    n = g.num_players
    tiles = g.tiles
    cur, pending, chain = s.round_index % n, (1 << n) - 1, False
    chains = g.first_turn_chain
    pairs: list[tuple[int, int]] = []
    for a in s.history[start:]:
        assert isinstance(a, int)
        pairs.append((cur, a))
        if a == tiles.draw_action:
            continue
        if a == tiles.pass_action:
            ended = True
        else:
            tile, slot = divmod(a, NUM_SLOTS)
            in_chain = chain or (chains and slot == cur and bool(pending >> cur & 1))
            if tiles.high[tile] == tiles.low[tile]:
                chain, ended = in_chain, False
            else:
                chain, ended = in_chain, not in_chain
        if ended:
            pending &= ~(1 << cur)
            chain = False
            cur = (cur + 1) % n
    pairs.reverse()
    return pairs[:count]
