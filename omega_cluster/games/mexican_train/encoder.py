"""Mexican Train encoder: the acting player's view of a campaign, seat-relative, plus one feature
row per legal action (tile × train, DRAW, PASS) for the action-conditioned policy.

Everything is relative to the encoding ``player``: relative seat ``k`` is absolute seat
``(player + k) % N``, trains are ordered the same way (own train first) with the Mexican train
last, so one network plays every seat, and ``max_players`` (default 8, the game's maximum) pads
the seat blocks so one network serves every table size. Inputs use only what ``player`` may know:
their own hand and the public record (trains, markers, open doubles, hand sizes, boneyard size,
scores, the recent log of who did what — a draw never names its tile); ``sample_world`` worlds of
the same information set encode identically (tested).

Observation segments (``info().observation_layout`` lists them with offsets): own hand (tile
bits), tiles on the trains this round, per-value counts of own and unseen tiles, engine, one row
per train (exists, marked, open double, must be covered first, length, own tiles matching its
end, end one-hot), one row per seat (exists, hand size, cumulative pips, rounds won, acting, first
turn pending), globals (boneyard, round, flags, table size, objective: one network plays both)
and the last ``log_length`` public actions of this round, most recent first (actor seat,
draw/pass/play, target train, tile values).

Action features: kind (play/draw/pass), the tile's values (two-hot), pips, double, target train
(relative: own, other seats, Mexican), whether it is marked or an open double being covered, its
length, the end the play leaves, own tiles matching that end, whether the play goes out (all
from precomputed tile tables) and, with ``heuristic_features`` (default), the Commander's 20
move terms (:mod:`.officers.terms`: longest own chain after the move, stranded pips, blocking
and feeding shares, doubles, ...). They cost encoding time and are worth it: the MLP does not
learn a longest-chain search from the tile bits, and a network trained on the same rows plays
stronger with them (see ``bench/bench_training.py``).

Auxiliary targets (:meth:`MexicanTrainEncoder.aux_targets`): this round's pips per relative seat
and who goes out (relative seat, or "blocked"), from the round's public :class:`RoundResult`;
:meth:`MexicanTrainEncoder.aux_target_vector` gives them flat (the record column
``aux_targets``: pips, then the one-hot class) for a decision of a finished game.

Hidden state (``info().hidden``, the records' training-only ``hidden_state`` column): every tile's
location relative to the player, from :meth:`MexicanTrainState.hidden_state`; never an input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol, cast

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import (
    AuxHeadSpec,
    EncoderError,
    EncoderInfo,
    HiddenSpec,
    LayoutBuilder,
)
from omega_cluster.games.mexican_train import OBJECTIVES, MexicanTrainState, RoundResult
from omega_cluster.games.mexican_train.officers.terms import move_features
from omega_cluster.games.mexican_train.officers.weights import TERMS, CommanderWeights
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS
from omega_cluster.games.mexican_train.views import recent_actions

__all__ = ["MexicanTrainEncoder"]

_KINDS: Final = 3  # play, draw, pass
_PIP_SCALE: Final = 0.01  # cumulative and round pips are scaled by 1/100
_LENGTH_SCALE: Final = 0.1
_COUNT_SCALE: Final = 0.25
# 1 / the typical size of each Commander term: pips ~12, chains and tile counts ~10, the rest
# 0/1 or shares. (The layout follows officers.weights.TERMS: a change there must bump `version`.)
_TERM_SCALE: Final = {
    "dump_pips": 1 / 12,
    "campaign_dump": 1 / 12,
    "endgame_dump": 1 / 12,
    "urgent_dump": 1 / 12,
    "hand_flexibility": 0.1,
    "stranded_pips": 0.01,
    "playable_tiles": 0.1,
    "doubles_kept": 0.25,
}
_TERM_SCALES: Final = np.asarray([_TERM_SCALE.get(t, 1.0) for t in TERMS], np.float32)


class _Floats(Protocol):
    """A float32 buffer written one entry at a time (a ``memoryview`` of the output array)."""

    def __setitem__(self, index: int, value: float, /) -> None: ...


class MexicanTrainEncoder:
    """Encoder for ``mexican_train`` games of one tile set (any table size up to ``max_players``)."""

    name = "mexican_train"
    game_name = "mexican_train"
    version = 3  # 2: the Commander's move terms (heuristic_features); 3: the objective one-hot

    def __init__(
        self,
        game: Game,
        *,
        max_players: int = 8,
        log_length: int = 8,
        heuristic_features: bool = True,
    ) -> None:
        if game.spec.name != self.game_name:
            raise EncoderError(f"MexicanTrainEncoder serves mexican_train, not {game.spec.name}")
        n = game.num_players
        if not n <= max_players <= 8:
            raise EncoderError(
                f"max_players={max_players} must be in [{n}, 8] (the table has {n} players)"
            )
        if not 0 <= log_length <= 64:
            raise EncoderError(f"log_length={log_length} must be in [0, 64]")
        tiles = game.tiles  # type: ignore[attr-defined]
        self.tiles = tiles
        self.double_set: int = tiles.double_set
        self.max_players = max_players
        self.log_length = log_length
        self.heuristic_features = bool(heuristic_features)
        self._danger = CommanderWeights().danger_hand_size
        self.num_tiles = t = tiles.num_tiles
        self.num_values = v = tiles.double_set + 1
        m = max_players
        s = m + 1  # train rows: relative seats 0..m-1, then the Mexican train
        self._nbytes = (t + 7) // 8
        # value_matrix[t, v] = 1 if tile t shows value v
        vm = np.zeros((t, v), np.float32)
        for i, (hi, lo) in enumerate(tiles.tiles):
            vm[i, hi] = vm[i, lo] = 1.0
        self._value_matrix = vm
        self._obs_layout(t, v, m, s)
        self._action_layout(v, s)

    # -- layouts -----------------------------------------------------------------------------
    def _obs_layout(self, t: int, v: int, m: int, s: int) -> None:
        lay = LayoutBuilder()
        self._o_hand = lay.add("hand", t, "own tiles (bit per tile index, ascending (hi, lo))")
        self._o_board = lay.add("board", t, "tiles laid on any train this round")
        self._o_hand_values = lay.add("hand_values", v, "own tiles showing value v, × 1/4")
        self._o_unseen_values = lay.add(
            "unseen_values", v, "unseen tiles (others' hands + boneyard) showing value v, × 1/4"
        )
        self._o_engine = lay.add("engine", v, "engine double of the round, one-hot")
        self._train_width = 6 + v
        self._o_trains = lay.add(
            "trains",
            s * self._train_width,
            f"{s} rows (own train, relative seats 1..{m - 1}, Mexican): exists, marked, "
            "open double, open double to cover first, length × 1/10, own tiles matching the end "
            "× 1/4, open end one-hot",
        )
        self._seat_width = 6
        self._o_seats = lay.add(
            "seats",
            m * self._seat_width,
            f"{m} rows (relative seats): exists, hand size / deal size, cumulative pips × 1/100, "
            "rounds won / rounds, acting now, first turn of the round still pending",
        )
        self._o_globals = lay.add(
            "globals",
            8 + (m - 1) + len(OBJECTIVES),
            "boneyard / tiles, round / rounds, drawn, must cover, chain, bonus (just laid a "
            f"double), own hand pips × 1/100, own hand size / deal size, players one-hot 2..{m}, "
            f"objective one-hot ({', '.join(OBJECTIVES)})",
        )
        self._o_objective = self._o_globals + 8 + (m - 1)
        self._log_width = m + _KINDS + s + v + 1
        self._o_log = lay.add(
            "log",
            self.log_length * self._log_width,
            f"last {self.log_length} actions of this round, most recent first: actor relative "
            "seat one-hot, play/draw/pass, target train (relative) one-hot, tile values, double",
        )
        self.observation_size = lay.size
        self._observation_layout = tuple(lay.segments)

    def _action_layout(self, v: int, s: int) -> None:
        lay = LayoutBuilder()
        self._a_kind = lay.add("kind", _KINDS, "play, draw, pass (one-hot)")
        self._a_values = lay.add("tile_values", v, "values shown by the tile (two-hot)")
        self._a_tile = lay.add("tile", 2, "pips / (2 × double set), is a double")
        self._a_target = lay.add("target", s, "target train: own, relative seats, Mexican")
        self._a_train = lay.add(
            "target_state", 3, "target marked, covers an open double, length × 1/10"
        )
        self._a_end = lay.add("resulting_end", v, "open end the play leaves, one-hot")
        self._a_after = lay.add(
            "after", 2, "own remaining tiles matching the resulting end × 1/4, goes out"
        )
        if self.heuristic_features:
            self._a_terms = lay.add(
                "commander_terms",
                len(TERMS),
                f"the Commander's move terms ({', '.join(TERMS)}), each divided by its scale",
            )
        self.action_feature_size = lay.size
        self._action_layout_segments = tuple(lay.segments)
        # per-tile constant part of a play row
        rows = np.zeros((self.num_tiles, lay.size), np.float32)
        rows[:, self._a_kind] = 1.0
        rows[:, self._a_values : self._a_values + v] = self._value_matrix
        for i, (hi, lo) in enumerate(self.tiles.tiles):
            rows[i, self._a_tile] = (hi + lo) / (2 * self.double_set)
            rows[i, self._a_tile + 1] = float(hi == lo)
        self._play_rows = rows

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={
                "double_set": self.double_set,
                "max_players": self.max_players,
                "log_length": self.log_length,
                "heuristic_features": self.heuristic_features,
            },
            observation_layout=self._observation_layout,
            action_layout=self._action_layout_segments,
            aux_heads=(
                AuxHeadSpec(
                    "round_pips",
                    self.max_players,
                    "regression",
                    "pips left in hand at the end of this round per relative seat × 1/100",
                ),
                AuxHeadSpec(
                    "goes_out",
                    self.max_players + 1,
                    "classification",
                    "relative seat that goes out this round; the last class: blocked round",
                ),
            ),
            hidden=HiddenSpec(
                "locations",
                self.num_tiles,
                1 + self.max_players,
                "per tile (index order): 0 own / board / engine, 1 boneyard, 1 + k the hand of "
                "relative seat k",
            ),
        )

    # -- observation ---------------------------------------------------------------------------
    def _bits(self, mask: int) -> np.ndarray:
        raw = np.frombuffer(mask.to_bytes(self._nbytes, "little"), np.uint8)
        return np.unpackbits(raw, count=self.num_tiles, bitorder="little")

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        s = _check_state(state)
        g = s.game
        n, m, t = g.num_players, self.max_players, self.num_tiles
        out = np.zeros(self.observation_size, np.float32)
        o = cast(_Floats, out.data)  # memoryview writes cost a fifth of numpy's scalar writes
        hand_mask = s.hands[player]
        out[self._o_hand : self._o_hand + t] = self._bits(hand_mask)
        out[self._o_board : self._o_board + t] = self._bits(s.board)
        tiles = self.tiles
        em = tiles.end_mask
        unseen = tiles.full_mask & ~(hand_mask | s.board | 1 << tiles.double(s.engine))
        base_hand, base_unseen = self._o_hand_values, self._o_unseen_values
        for value in range(self.num_values):
            o[base_hand + value] = (hand_mask & em[value]).bit_count() * _COUNT_SCALE
            o[base_unseen + value] = (unseen & em[value]).bit_count() * _COUNT_SCALE
        o[self._o_engine + s.engine] = 1.0
        self._encode_trains(o, s, player, n, hand_mask)
        self._encode_seats(o, s, player, n)
        deal = float(g.hand_size)
        b = self._o_globals
        o[b] = len(s.boneyard) / t
        o[b + 1] = s.round_index / g.num_rounds
        o[b + 2] = s.drawn
        o[b + 3] = bool(s.open_doubles) and g.strict_doubles
        o[b + 4] = s.chain
        o[b + 5] = s.bonus
        o[b + 6] = tiles.mask_pips(hand_mask, g.double_blank_value) * _PIP_SCALE
        o[b + 7] = hand_mask.bit_count() / deal
        o[b + 8 + n - 2] = 1.0
        o[self._o_objective + OBJECTIVES.index(g.objective)] = 1.0
        if self.log_length:
            self._encode_log(o, s, player, n, m)
        return out

    def _encode_trains(
        self, o: _Floats, s: MexicanTrainState, player: int, n: int, hand: int
    ) -> None:
        em, ends, lengths, marked = self.tiles.end_mask, s.ends, s.lengths, s.marked
        od = s.open_doubles
        width = self._train_width
        for rel in range(n + 1):
            if rel == n:
                slot, row = MEXICAN_SLOT, self._o_trains + self.max_players * width
            else:
                slot = player + rel if player + rel < n else player + rel - n
                row = self._o_trains + rel * width
            end = ends[slot]
            o[row] = 1.0
            o[row + 1] = marked >> slot & 1
            if slot in od:
                o[row + 2] = 1.0
                o[row + 3] = od[0] == slot
            o[row + 4] = lengths[slot] * _LENGTH_SCALE
            o[row + 5] = (hand & em[end]).bit_count() * _COUNT_SCALE
            o[row + 6 + end] = 1.0

    def _encode_seats(self, o: _Floats, s: MexicanTrainState, player: int, n: int) -> None:
        g = s.game
        deal, rounds = float(g.hand_size), float(g.num_rounds)
        width, hands, pips, outs = self._seat_width, s.hands, s.pip_totals, s.outs
        cur, pending = s.current, s.first_pending
        for rel in range(n):
            seat = player + rel if player + rel < n else player + rel - n
            row = self._o_seats + rel * width
            o[row] = 1.0
            o[row + 1] = hands[seat].bit_count() / deal
            o[row + 2] = pips[seat] * _PIP_SCALE
            o[row + 3] = outs[seat] / rounds
            o[row + 4] = cur == seat
            o[row + 5] = pending >> seat & 1

    def _encode_log(self, o: _Floats, s: MexicanTrainState, player: int, n: int, m: int) -> None:
        tiles = self.tiles
        draw, pas = tiles.draw_action, tiles.pass_action
        high, low = tiles.high, tiles.low
        width = self._log_width
        o_kind, o_target = m, m + _KINDS
        o_values = o_target + m + 1
        o_double = o_values + self.num_values
        row = self._o_log
        for actor, action in recent_actions(s, self.log_length):
            o[row + (actor - player) % n] = 1.0
            if action == draw:
                o[row + o_kind + 1] = 1.0
            elif action == pas:
                o[row + o_kind + 2] = 1.0
            else:
                tile, slot = divmod(action, NUM_SLOTS)
                o[row + o_kind] = 1.0
                o[row + o_target + (m if slot == MEXICAN_SLOT else (slot - player) % n)] = 1.0
                o[row + o_values + high[tile]] = 1.0
                o[row + o_values + low[tile]] = 1.0
                o[row + o_double] = high[tile] == low[tile]
            row += width

    # -- actions -------------------------------------------------------------------------------
    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        s = _check_state(state)
        n, m = s.game.num_players, self.max_players
        tiles = self.tiles
        draw, pips, em = tiles.draw_action, tiles.pips, tiles.end_mask
        ends, lengths, marked, od = s.ends, s.lengths, s.marked, s.open_doubles
        hand = s.hands[player]
        feats = np.zeros((len(legal), self.action_feature_size), np.float32)
        play_rows, play_tiles = [], []
        cols: list[int] = []
        vals: list[float] = []
        rows: list[int] = []
        for i, action in enumerate(legal):
            if action >= draw:
                feats[i, self._a_kind + 1 + (action - draw)] = 1.0
                continue
            tile, slot = divmod(action, NUM_SLOTS)
            play_rows.append(i)
            play_tiles.append(tile)
            rel = m if slot == MEXICAN_SLOT else (slot - player) % n
            new_end = pips[tile] - ends[slot]
            rest = hand & ~(1 << tile)
            rows += (i, i, i, i, i, i, i)
            cols += (
                self._a_target + rel,
                self._a_train,
                self._a_train + 1,
                self._a_train + 2,
                self._a_end + new_end,
                self._a_after,
                self._a_after + 1,
            )
            vals += (
                1.0,
                float(marked >> slot & 1),
                float(slot in od),
                lengths[slot] * _LENGTH_SCALE,
                1.0,
                (rest & em[new_end]).bit_count() * _COUNT_SCALE,
                float(rest == 0),
            )
        if play_rows:
            feats[play_rows] = self._play_rows[play_tiles]
            feats[rows, cols] = vals
        if self.heuristic_features:
            terms = move_features(s, player, legal, danger_hand_size=self._danger)
            end = self._a_terms + len(TERMS)
            feats[:, self._a_terms : end] = np.asarray(terms, np.float32) * _TERM_SCALES
        return feats

    # -- auxiliary targets -----------------------------------------------------------------------
    def aux_targets(self, result: RoundResult, player: int) -> dict[str, np.ndarray]:
        """Labels of the aux heads for a decision of ``player`` in the round ``result`` ended:
        ``round_pips`` float32[max_players] (relative seats, × 1/100, padding 0) and
        ``goes_out`` int64 scalar (relative seat, or ``max_players`` for a blocked round)."""
        n = len(result.pips)
        pips = np.zeros(self.max_players, np.float32)
        for rel in range(n):
            pips[rel] = result.pips[(player + rel) % n] * _PIP_SCALE
        out = self.max_players if result.went_out is None else (result.went_out - player) % n
        return {"round_pips": pips, "goes_out": np.asarray(out, np.int64)}

    def aux_target_vector(self, final: State, history_index: int, player: int) -> np.ndarray:
        """float32[2·max_players + 1]: the aux targets of ``player``'s decision at history entry
        ``history_index`` of the finished game ``final`` — that round's ``round_pips``, then
        ``goes_out`` one-hot (the order of ``info().aux_heads``)."""
        s = _check_state(final)
        r = s.round_of_decision(history_index)
        if r >= len(s.round_results):
            raise EncoderError(f"history index {history_index} is in round {r}, not finished yet")
        targets = self.aux_targets(s.round_results[r], player)
        out = np.zeros(2 * self.max_players + 1, np.float32)
        out[: self.max_players] = targets["round_pips"]
        out[self.max_players + int(targets["goes_out"])] = 1.0
        return out


def _check_state(state: State) -> MexicanTrainState:
    if not isinstance(state, MexicanTrainState):
        raise EncoderError(f"MexicanTrainEncoder needs a MexicanTrainState, got {type(state)}")
    return state
