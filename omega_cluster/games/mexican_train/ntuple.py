"""Mexican Train windows for n-tuple value tables: :class:`MexicanTrainPatterns`.

Every window is seat-relative (the seat's own train, the Mexican train, "another seat's train";
opponents by where they sit after the seat) and reads only what the seat may know: its own hand,
the public trains, markers and open doubles, hand sizes, the boneyard's size, the public record
of moves (who drew or passed, never which tile was drawn) and the finished rounds' pips.

Families (each one shared table; sizes in :meth:`MexicanTrainPatterns.__init__`):

* ``pips`` — the hand's pips (0|0 counts ``double_blank_value``) by hand-size bucket and
  boneyard-size bucket: what a blocked or lost round costs;
* ``playable`` — own tiles matching an end open to the seat, how many such ends, own marker up,
  by hand-size bucket;
* ``doubles`` — doubles held and doubles playable now, by hand-size bucket;
* ``chain`` — the longest chain of own tiles from the own train's end (the officers' chain
  search) by hand size, with the pips stranded outside it;
* ``end`` — one window per train in use (symmetric ends share this table): the end's pip, whose
  train it is (own / Mexican / another seat's), its marker, whether it holds an open double (the
  one to cover next or a later one), how many own tiles match it, how many unseen tiles match it
  and the owner's hand-size bucket;
* ``opponent`` — one window per opponent: where it sits (next to play, between, last before the
  seat), its hand-size bucket, its marker and what it did on its latest turn this round (played,
  drew then played, passed), by table size;
* ``table`` — the smallest opponent hand, how many opponents have their marker up, the boneyard
  bucket, who moves now, by table size;
* ``campaign`` — the objective, the rounds left and the seat's standing (own cumulative pips, or
  rounds gone out, against the best opponent): also the bias of single-round games.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games.mexican_train.officers.terms import chain_search, hand_values
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS, SLOTS_OF
from omega_cluster.games.mexican_train.views import recent_actions
from omega_cluster.games.patterns import PatternFamily, PatternSet

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.game import MexicanTrainGame
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["ChainLengths", "MexicanTrainPatterns", "hand_bucket"]

HAND_BUCKETS = 8  # hand sizes 0-1, 2, 3, 4, 5-6, 7-9, 10-12, 13+
_HAND_BUCKET = (0, 0, 1, 2, 3, 4, 4, 5, 5, 5, 6, 6, 6)
BONE_BUCKETS = 6  # boneyard 0, 1-2, 3-5, 6-10, 11-20, 21+
_BONE_BUCKET = (0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, *([4] * 10))
PIP_BUCKETS = 20  # hand pips // 6, capped
PIP_VALUES = 13  # an end's pip 0..12 (double-9 uses 0..9)
CAP = 15  # hand sizes and chain lengths capped at 15 in ``chain``
_COUNT5 = (0, 1, 2, 3, 3)  # unseen tiles matching an end: 0, 1, 2, 3-4, 5+
CHAIN_BUDGET = 40  # chain-search expansions before the greedy fallback (officers' search)
_CACHE_LIMIT = 1 << 17  # chain answers kept per pattern set (a pure function of (end, hand))
_STANDING = (-60, -30, -15, -5, -1, 1, 5, 15, 30, 60)  # own − best opponent: 11 buckets
_OUTS = (-3, -2, -1, 0, 1, 2, 3)  # go_out objective: own outs − most opponent outs


def hand_bucket(size: int) -> int:
    """The hand-size bucket ``0 .. HAND_BUCKETS - 1`` of a hand of ``size`` tiles."""
    return _HAND_BUCKET[size] if size < 13 else 7


def _bone_bucket(size: int) -> int:
    return _BONE_BUCKET[size] if size < 21 else 5


def _bucket(value: int, edges: tuple[int, ...]) -> int:
    """The bucket of ``value`` between ascending ``edges``: the number of edges below it."""
    k = 0
    for e in edges:
        if value <= e:
            return k
        k += 1
    return k


class ChainLengths:
    """``chains(end, hand) -> (length, pips)``: the longest chain of ``hand`` laid from ``end``
    (the officers' budgeted search, :func:`~.officers.terms.chain_search`), answers cached.

    Each answer comes from a fresh search memo, so it is a function of ``(end, hand)`` alone and
    the cache changes no answer; it is emptied when it holds ``2**17`` of them.
    """

    def __init__(self, game: MexicanTrainGame) -> None:
        self._tiles = game.tiles
        self._values = hand_values(game.tiles.double_set, game.double_blank_value)
        self._cache: dict[int, tuple[int, int]] = {}

    def __call__(self, end: int, hand: int) -> tuple[int, int]:
        key = hand << 4 | end
        hit = self._cache.get(key)
        if hit is None:
            score, _ = chain_search(self._tiles, self._values, CHAIN_BUDGET)(end, hand)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            hit = self._cache[key] = (score >> 12, score & 4095)
        return hit

    def clear(self) -> None:
        self._cache.clear()


class MexicanTrainPatterns(PatternSet):
    """The windows of one Mexican Train game (see the module doc); ``extract`` in pure ints."""

    name = "mexican_train"
    version = 1

    def __init__(self, game: MexicanTrainGame) -> None:
        n = game.num_players
        if not 2 <= n <= 8 or game.max_value > PIP_VALUES - 1:
            raise ValueError(
                f"mexican_train patterns: players={n}, double_set={game.max_value} not covered; "
                f"allowed: players 2..8, double_set <= {PIP_VALUES - 1}"
            )
        self.game = game
        self.num_players = n
        super().__init__(
            [
                PatternFamily("pips", HAND_BUCKETS * PIP_BUCKETS * BONE_BUCKETS),
                PatternFamily("playable", HAND_BUCKETS * 9 * 4 * 2),
                PatternFamily("doubles", HAND_BUCKETS * 5 * 3),
                PatternFamily("chain", (CAP + 1) * (CAP + 1) * 16),
                PatternFamily("end", PIP_VALUES * 3 * 2 * 3 * 5 * 5 * HAND_BUCKETS),
                PatternFamily("opponent", 3 * HAND_BUCKETS * 2 * 4 * 7),
                PatternFamily("table", HAND_BUCKETS * 4 * BONE_BUCKETS * 3 * 7),
                PatternFamily("campaign", 2 * 5 * 11),
            ]
        )
        tiles = game.tiles
        self._values = hand_values(tiles.double_set, game.double_blank_value)
        self._tiles = tiles
        self.chain = ChainLengths(game)
        self._slots = game.train_slots()

    # -- the own hand ---------------------------------------------------------------------------

    def _own(self, s: MexicanTrainState, seat: int, hand: int, hb: int, bone: int) -> list[int]:
        """The portfolio: pips, playable, doubles and chain indices of the seat's hand."""
        tiles = self._tiles
        em, values = tiles.end_mask, self._values
        size = hand.bit_count()
        pips = 0
        m = hand
        while m:
            low = m & -m
            pips += values[low.bit_length() - 1]
            m ^= low
        off = self.offsets
        pips_i = off[0] + (hb * PIP_BUCKETS + min(pips // 6, PIP_BUCKETS - 1)) * BONE_BUCKETS + bone
        ends = s.ends
        reach = 0
        live_ends = 0
        dbl_now = 0
        dmask = tiles.doubles_mask
        for x in SLOTS_OF[s.open_mask(seat)]:
            match = hand & em[ends[x]]
            if match:
                reach |= match
                live_ends += 1
                dbl_now |= match & dmask
        marker = s.marked >> seat & 1
        playable = min(reach.bit_count(), 8)
        play_i = off[1] + ((hb * 9 + playable) * 4 + min(live_ends, 3)) * 2 + marker
        held = min((hand & dmask).bit_count(), 4)
        dbl_i = off[2] + (hb * 5 + held) * 3 + min(dbl_now.bit_count(), 2)
        length, chain_pips = self.chain(ends[seat], hand)
        stranded = min((pips - chain_pips) // 6, 15)
        chain_i = off[3] + ((min(size, CAP) * (CAP + 1)) + min(length, CAP)) * 16 + stranded
        return [pips_i, play_i, dbl_i, chain_i]

    # -- the trains -----------------------------------------------------------------------------
    def _ends(self, s: MexicanTrainState, seat: int, hand: int, sizes: list[int]) -> list[int]:
        tiles = self._tiles
        em = tiles.end_mask
        unseen = tiles.full_mask & ~hand & ~s.board & ~(1 << tiles.double(s.engine))
        ends, marked, od = s.ends, s.marked, s.open_doubles
        first = od[0] if od else -1
        base = self.offsets[4]
        out = []
        for x in self._slots:
            end = ends[x]
            if x == seat:
                kind, owner = 0, hand_bucket(sizes[x])
            elif x == MEXICAN_SLOT:
                kind, owner = 1, 0
            else:
                kind, owner = 2, hand_bucket(sizes[x])
            dbl = 1 if x == first else (2 if x in od else 0)
            held = min((hand & em[end]).bit_count(), 4)
            free = (unseen & em[end]).bit_count()
            free = _COUNT5[free] if free < 5 else 4
            i = ((((end * 3 + kind) * 2 + (marked >> x & 1)) * 3 + dbl) * 5 + held) * 5 + free
            out.append(base + i * HAND_BUCKETS + owner)
        return out

    # -- the others -----------------------------------------------------------------------------
    def _latest_turns(self, s: MexicanTrainState) -> list[int]:
        """Per seat, its latest turn in this round: 0 unseen, 1 played, 2 drew (then played or
        is still playing), 3 passed (the last ``3 × players`` moves are looked at)."""
        n = self.num_players
        draw, pas = self._tiles.draw_action, self._tiles.pass_action
        code = [0] * n
        done = [False] * n
        for actor, a in recent_actions(s, 3 * n):
            if done[actor]:
                continue
            c = code[actor]
            if a == draw:  # the draw of the latest turn (it played or passed after it)
                code[actor], done[actor] = (3 if c == 3 else 2), True
            elif c:
                done[actor] = True  # a play or pass of an older turn: the latest one is read
            else:
                code[actor] = 3 if a == pas else 1
        return code

    def _others(self, s: MexicanTrainState, seat: int, sizes: list[int], bone: int) -> list[int]:
        n = self.num_players
        table = n - 2
        off = self.offsets
        marked = s.marked
        latest = self._latest_turns(s)
        out = []
        smallest, markers = 99, 0
        for k in range(1, n):
            q = (seat + k) % n
            where = 0 if k == 1 else (2 if k == n - 1 else 1)
            size, up = sizes[q], marked >> q & 1
            smallest = min(smallest, size)
            markers += up
            i = ((where * HAND_BUCKETS + hand_bucket(size)) * 2 + up) * 4 + latest[q]
            out.append(off[5] + i * 7 + table)
        cur = s.current
        mover = 0 if cur == seat or cur < 0 else (1 if cur == (seat + 1) % n else 2)
        i = ((hand_bucket(smallest) * 4 + min(markers, 3)) * BONE_BUCKETS + bone) * 3 + mover
        out.append(off[6] + i * 7 + table)
        out.append(off[7] + self._standing(s, seat))
        return out

    def _standing(self, s: MexicanTrainState, seat: int) -> int:
        g = self.game
        left = min(g.num_rounds - s.round_index - 1, 4) if not s.over else 0
        if g.objective == "points":
            mine = s.pip_totals[seat]
            best = min(x for q, x in enumerate(s.pip_totals) if q != seat)
            return (0 * 5 + left) * 11 + _bucket(mine - best, _STANDING)
        mine = s.outs[seat]
        most = max(x for q, x in enumerate(s.outs) if q != seat)
        return (1 * 5 + left) * 11 + _bucket(mine - most, _OUTS) + 2

    def extract(self, state: MexicanTrainState, seat: int) -> np.ndarray:  # type: ignore[override]
        """The indices of ``seat``'s windows: 4 portfolio, one per train in use, one per
        opponent, ``table`` and ``campaign`` (``2 × players + 6`` in all)."""
        hand = state.hands[seat]
        sizes = [m.bit_count() for m in state.hands]
        bone = _bone_bucket(len(state.boneyard))
        out = self._own(state, seat, hand, hand_bucket(sizes[seat]), bone)
        out += self._ends(state, seat, hand, sizes)
        out += self._others(state, seat, sizes, bone)
        return np.array(out, dtype=np.int64)


assert NUM_SLOTS == MEXICAN_SLOT + 1
