"""The Commander compiled (numba): Commander-vs-Commander playouts.

A Commander rollout (Commander plays every seat to the end of the round) is ISMCTS's rollout leaf,
and most of its time in Python is the longest-chain search and the move scores. This module
plays the same moves compiled (``bench/bench_officers.py`` times both): the rules
(:mod:`._rules_jit`, a mirror of :mod:`omega_cluster.games.mexican_train.state`) and the
Commander of :mod:`omega_cluster.games.mexican_train.officers.terms` (the memoised, budgeted
chain search explored in the same order, every score added term by term in the same order, ties
to the lowest action id) are mirrored line for line, so a compiled playout makes the very moves of
``play_out(state, [Commander] * n)`` and returns the same win shares
(``tests/unit/test_commander_jit.py`` checks move by move and playout by playout, for every rule
variant). Imported only when numba is installed; :meth:`Commander.playout_returns` is the way in.

The kernels live in three modules: the rules in :mod:`._rules_jit`, the longest-chain search in
:mod:`._chain_jit`, the move scores and the playout loop here. Tile masks are two int64 words of
62 bits (see :mod:`._rules_jit`). Only playouts that end within the campaign's last round run
here (the next deal draws from Python's Mersenne Twister); :class:`CompiledCommander` says so and
the caller plays in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.officers._chain_jit import (
    C_COUNT,
    C_GEN,
    C_LEFT,
    C_OVERFLOW,
    MEMO_BITS,
    best_chain,
)
from omega_cluster.games.mexican_train.officers._rules_jit import (
    G_BLANK,
    G_BUDGET,
    G_CAMPAIGN,
    G_CHAIN_RULE,
    G_DRAW,
    G_GO_OUT,
    G_MUST,
    G_N,
    G_PASS,
    G_SET,
    G_SIZE,
    G_STRICT,
    G_UNSEEN_HI,
    G_UNSEEN_LO,
    G_UNTIL,
    LOW_MASK,
    S_BOARD_HI,
    S_BOARD_LO,
    S_BONE,
    S_BONE_N,
    S_BONUS,
    S_CHAIN,
    S_CUR,
    S_DRAWN,
    S_ENDS,
    S_ENGINE_TILE,
    S_FIRST,
    S_HANDS,
    S_MARKED,
    S_OD,
    S_OD_N,
    S_OUTS0,
    S_PIPS0,
    S_TOTAL,
    WORD,
    apply_action,
    legal_actions,
    mask_pips,
    open_mask,
    popcount,
    round_returns,
    split_mask,
)
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState

__all__ = ["CompiledCommander"]


@njit(cache=True)
def _urgency(S, G, P, danger: int, player: int, urgency: np.ndarray) -> float:
    """Each opponent's danger of going out (terms._Decision.urgency) into ``urgency``; the top."""
    top = 0.0
    for q in range(G[G_N]):
        if q != player:
            size = popcount(S[S_HANDS + 2 * q], P) + popcount(S[S_HANDS + 2 * q + 1], P)
            u = min(1.0, max(0.0, (danger + 1 - size) / danger))
            urgency[q] = u
            if u > top:
                top = u
    return top


@njit(cache=True)
def _unseen(S, G, hlo: int, hhi: int) -> tuple[int, int]:
    """The tiles the acting player cannot see: not in hand, not on a train, not the engine."""
    unseen_lo = G[G_UNSEEN_LO] & ~hlo & ~S[S_BOARD_LO]
    unseen_hi = G[G_UNSEEN_HI] & ~hhi & ~S[S_BOARD_HI]
    engine_tile = S[S_ENGINE_TILE]
    if engine_tile < WORD:
        unseen_lo &= ~(1 << engine_tile)
    else:
        unseen_hi &= ~(1 << (engine_tile - WORD))
    return unseen_lo, unseen_hi


@njit(cache=True)
def _reach(
    S, em, open_slots: int, without_lo: np.ndarray, without_hi: np.ndarray
) -> tuple[int, int]:
    """Tiles matching the end of any open train (returned), and per open train slot those
    matching the other open trains' ends (into ``without_*``: terms._reach_without)."""
    reach_lo, reach_hi = 0, 0
    for x in range(NUM_SLOTS):
        if open_slots >> x & 1:
            e = S[S_ENDS + x]
            reach_lo |= em[e, 0]
            reach_hi |= em[e, 1]
    for s in range(NUM_SLOTS):
        if open_slots >> s & 1:
            for x in range(NUM_SLOTS):
                if x != s and open_slots >> x & 1:
                    e = S[S_ENDS + x]
                    without_lo[s] |= em[e, 0]
                    without_hi[s] |= em[e, 1]
    return reach_lo, reach_hi


@njit(cache=True)
def _act(S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal) -> int:
    """Commander.act for the acting player (terms.move_scores, strict ties to the lowest id)."""
    k = legal_actions(S, G, em, dm, P, legal)
    if k == 1:
        return legal[0]
    player = S[S_CUR]
    ctl[C_GEN] += 1  # a fresh memo and budget: one chain search per decision
    ctl[C_LEFT] = G[G_BUDGET]
    ctl[C_COUNT] = 0
    hlo, hhi = S[S_HANDS + 2 * player], S[S_HANDS + 2 * player + 1]
    urgency = np.zeros(NUM_SLOTS)
    top_urgency = _urgency(S, G, P, D[player], player, urgency)
    unseen_lo, unseen_hi = _unseen(S, G, hlo, hhi)
    per_value = 1.0 / (G[G_SET] + 1)
    open_slots = open_mask(S, G, player)
    without_lo = np.zeros(NUM_SLOTS, np.int64)
    without_hi = np.zeros(NUM_SLOTS, np.int64)
    reach_lo, reach_hi = _reach(S, em, open_slots, without_lo, without_hi)
    own_end = S[S_ENDS + player]
    base_score, base_lo, base_hi = best_chain(
        own_end, hlo, hhi, em, pips, values, P, keys, vals, stamp, ctl
    )
    hand_pips = mask_pips(hlo, hhi, values, P)
    own_marked = float(S[S_MARKED] >> player & 1)
    campaign = float(G[G_CAMPAIGN])
    endgame = 1.0 if S[S_BONE_N] == 0 else 0.0
    marked = S[S_MARKED]
    od_mask = 0
    for j in range(S[S_OD_N]):
        od_mask |= 1 << S[S_OD + j]
    w = W[player]  # each seat's own weights
    (w0, w1, w2, w3, w4, w5, w6, w7, w8, w9) = (w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9])  # fmt: skip
    (w10, w11, w12, w13, w14, w15, w16, w17, w18, w19) = (w[10], w[11], w[12], w[13], w[14], w[15], w[16], w[17], w[18], w[19])  # fmt: skip
    draw = G[G_DRAW]
    best_action, best_total = legal[0], -np.inf
    for i in range(k):
        a = legal[i]
        if a >= draw:
            total = w4 * (base_score >> 12) + w5 * (hand_pips - (base_score & 4095))
            total += w6 * (popcount(hlo & reach_lo, P) + popcount(hhi & reach_hi, P))
            total += w16 * (popcount(hlo & dm[0], P) + popcount(hhi & dm[1], P))
            total = total + (w18 if a == draw else w19)
        else:
            t = a // NUM_SLOTS
            s = a - t * NUM_SLOTS
            if t < WORD:
                blo, bhi = 1 << t, 0
            else:
                blo, bhi = 0, 1 << (t - WORD)
            rlo, rhi = hlo ^ blo, hhi ^ bhi
            v = values[t]
            new_end = pips[t] - S[S_ENDS + s]
            if s == player:
                score = best_chain(new_end, rlo, rhi, em, pips, values, P, keys, vals, stamp, ctl)[
                    0
                ]
            elif (base_lo & blo) or (base_hi & bhi):
                score = best_chain(own_end, rlo, rhi, em, pips, values, P, keys, vals, stamp, ctl)[
                    0
                ]
            else:
                score = base_score
            if open_slots >> s & 1:
                rch_lo = without_lo[s] | em[new_end, 0]
                rch_hi = without_hi[s] | em[new_end, 1]
            else:
                rch_lo, rch_hi = reach_lo, reach_hi
            total = w0 * v + w1 * (v * campaign) + w2 * (v * endgame)
            total += w3 * (v * top_urgency)
            total += w4 * (score >> 12)
            total += w5 * (hand_pips - v - (score & 4095))
            total += w6 * (popcount(rlo & rch_lo, P) + popcount(rhi & rch_hi, P))
            if s == player:
                total += w7
                total += w8 * own_marked
            elif s == MEXICAN_SLOT:
                total += w9
            share = (
                popcount(unseen_lo & em[new_end, 0], P) + popcount(unseen_hi & em[new_end, 1], P)
            ) * per_value
            if s != player and s != MEXICAN_SLOT:
                total += w10
                total += w11 * (urgency[s] * (1.0 - share))
                if marked >> s & 1:
                    total += w12 * share
            elif s == MEXICAN_SLOT:
                total += w12 * share
            if od_mask >> s & 1:
                total += w13
            empty = rlo == 0 and rhi == 0
            if high[t] == low[t] and not empty:
                if (rlo & em[new_end, 0]) or (rhi & em[new_end, 1]):
                    total += w14
                else:
                    total += w15
            total += w16 * (popcount(rlo & dm[0], P) + popcount(rhi & dm[1], P))
            if empty:
                total += w17
        if total > best_total:
            best_action, best_total = a, total
    return best_action


@njit(cache=True)
def _playout(S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal, out):
    """Commander at every seat to the end of the round; False if the memo overflowed (the
    caller then plays in Python: an exact mirror or nothing)."""
    while True:
        a = _act(S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal)
        if ctl[C_OVERFLOW]:
            return False
        r = apply_action(S, G, em, dm, pips, high, low, a)
        if r != -2:
            round_returns(S, G, values, P, r, out)
            return True


@njit(cache=True)
def _act_once(S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal) -> int:
    a = _act(S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal)
    return -1 if ctl[C_OVERFLOW] else a


class CompiledCommander:
    """A Commander (its weights, danger threshold and chain budget) compiled for one game.

    ``weights`` (TERMS order) and ``danger`` are one Commander's, or one per seat: playouts
    between Commanders of different weights (the games of ``omega-cluster tune``).

    :meth:`act` and :meth:`playout_returns` answer exactly as the Python Commander does (or
    ``None`` where this module cannot: a campaign with rounds still to deal, a memo overflow).
    """

    def __init__(
        self,
        game: MexicanTrainGame,
        weights: Sequence[float] | Sequence[Sequence[float]],
        danger: int | Sequence[int],
        budget: int,
    ) -> None:
        tiles = game.tiles
        self.game = game
        self.n = game.num_players
        self.last_round = game.num_rounds - 1
        nt = tiles.num_tiles
        self.em = np.array([split_mask(m) for m in tiles.end_mask], dtype=np.int64)
        self.dm = np.array(split_mask(tiles.doubles_mask), dtype=np.int64)
        self.pips = np.array(tiles.pips, dtype=np.int64)
        self.high = np.array(tiles.high, dtype=np.int64)
        self.low = np.array(tiles.low, dtype=np.int64)
        values = list(tiles.pips)
        values[0] = game.double_blank_value  # hand_values: 0|0 counts double_blank_value
        self.values = np.zeros(2 * WORD, dtype=np.int64)
        self.values[:nt] = values
        self.P = np.array([bin(i).count("1") for i in range(1 << 16)], dtype=np.int64)
        w = np.array(weights, dtype=np.float64)
        self.W = np.ascontiguousarray(np.broadcast_to(w, (self.n, w.shape[-1])))
        self.D = np.array(np.broadcast_to(np.array(danger, dtype=np.int64), (self.n,)))
        full_lo, full_hi = split_mask(tiles.full_mask)
        g = np.zeros(G_SIZE, dtype=np.int64)
        g[G_N] = self.n
        g[G_STRICT] = game.strict_doubles
        g[G_MUST] = game.must_play
        g[G_UNTIL] = game.draw_until_playable
        g[G_CHAIN_RULE] = game.first_turn_chain
        g[G_GO_OUT] = game.objective == "go_out"
        g[G_BLANK] = game.double_blank_value
        g[G_CAMPAIGN] = game.objective == "points" and game.num_rounds > 1
        g[G_DRAW], g[G_PASS] = tiles.draw_action, tiles.pass_action
        g[G_BUDGET] = budget
        g[G_UNSEEN_LO], g[G_UNSEEN_HI], g[G_SET] = full_lo, full_hi, tiles.double_set
        self.G = g
        size = 1 << MEMO_BITS
        self.keys = np.zeros((size, 3), dtype=np.int64)
        self.vals = np.zeros((size, 3), dtype=np.int64)
        self.stamp = np.full(size, -1, dtype=np.int64)
        self.ctl = np.zeros(4, dtype=np.int64)
        self.legal = np.zeros(4 * nt + 4, dtype=np.int64)
        self.out = np.zeros(self.n, dtype=np.float64)
        self._double = tiles.double

    def supports(self, state: MexicanTrainState) -> bool:
        """The state's playout ends within this module's reach (the campaign's last round)."""
        return state.round_index == self.last_round and not state.over

    def pack(self, state: MexicanTrainState) -> np.ndarray:
        S = np.zeros(S_TOTAL, dtype=np.int64)
        S[S_CUR] = state.current
        S[S_MARKED] = state.marked
        S[S_BOARD_LO], S[S_BOARD_HI] = split_mask(state.board)
        S[S_BONUS], S[S_DRAWN], S[S_CHAIN] = state.bonus, state.drawn, state.chain
        S[S_FIRST] = state.first_pending
        od = state.open_doubles
        S[S_OD_N] = len(od)
        S[S_OD : S_OD + len(od)] = od
        S[S_ENDS : S_ENDS + NUM_SLOTS] = state.ends
        for q, h in enumerate(state.hands):
            S[S_HANDS + 2 * q], S[S_HANDS + 2 * q + 1] = h & LOW_MASK, h >> WORD
        bone = state.boneyard
        S[S_BONE_N] = len(bone)
        S[S_BONE : S_BONE + len(bone)] = bone
        S[S_PIPS0 : S_PIPS0 + self.n] = state.pip_totals
        S[S_OUTS0 : S_OUTS0 + self.n] = state.outs
        S[S_ENGINE_TILE] = self._double(state.engine)
        return S

    def _args(self) -> tuple[np.ndarray, ...]:
        return (
            self.G, self.em, self.dm, self.pips, self.high, self.low, self.values, self.P,
            self.W, self.D, self.keys, self.vals, self.stamp, self.ctl, self.legal,
        )  # fmt: skip

    def act(self, state: MexicanTrainState) -> int | None:
        """The Commander's move for the acting player (``None``: the memo overflowed)."""
        self.ctl[C_OVERFLOW] = 0
        a = int(_act_once(self.pack(state), *self._args()))
        return None if a < 0 else a

    def playout_returns(self, state: MexicanTrainState) -> tuple[float, ...] | None:
        """Win shares after Commander plays every seat from ``state`` (left unchanged) to the
        end; ``None`` when that cannot run here (see :meth:`supports`)."""
        if not self.supports(state):
            return None
        self.ctl[C_OVERFLOW] = 0
        if not _playout(self.pack(state), *self._args(), self.out):  # type: ignore[call-arg]
            return None
        return tuple(self.out.tolist())
