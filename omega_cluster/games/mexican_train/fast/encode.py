"""The Mexican Train network encoder compiled (numba): :func:`encode` writes, from a packed state
(:mod:`.layout`), exactly the floats :class:`~omega_cluster.games.mexican_train.encoder.
MexicanTrainEncoder` writes — ``encode_observation(state, player)`` and ``encode_actions(state,
player, legal)`` — so the fast search feeds the network the very inputs the Python path does.

:func:`make_encoder_ctx` turns one encoder (its options and segment offsets, its per-tile play
rows) and its game (the rule settings the compiled Commander reads) into ``ectx``, a tuple of
constant arrays plus the chain search's memos and scratch arrays (reused by every call). Each float is
computed as the Python encoder computes it: the same float64 arithmetic, then one rounding to
float32 on the store; the Commander's move terms (``heuristic_features``) are rounded to float32
first and then multiplied by their float32 scales, as ``np.asarray(terms, np.float32) *
_TERM_SCALES`` does. The terms are :mod:`.terms`' (the compiled Commander's kernels, :mod:`..
officers._commander_jit`, and the longest-chain search of :mod:`.chain`, the officers' search in
a faster layout): the search runs with the same budget, called in the same order as
``terms.move_features`` calls it, so budgeted (greedy) chains come out the same too. It first
uses a small memo (:data:`_SMALL_MEMO` slots, in cache across leaves); a decision that fills it
three quarters full is searched again in one of 65,536 slots (the officers' size; its own
overflow, where results could differ, the 60-expansion budget keeps far away, as the tests
check).

The recent-action buffer of the packed state holds ``(actor, action)`` pairs most recent first:
entry ``i`` is ``S[X_HIST + 2 i]`` (the actor's seat) and ``S[X_HIST + 2 i + 1]`` (the action).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games.api import Game
from omega_cluster.games.mexican_train.encoder import _TERM_SCALES, MexicanTrainEncoder
from omega_cluster.games.mexican_train.fast.bits import ctz, popcount
from omega_cluster.games.mexican_train.fast.chain import chain_table, new_memo
from omega_cluster.games.mexican_train.fast.layout import (
    MAX_LOG,
    X_ENGINE,
    X_HIST,
    X_HN,
    X_LENGTHS,
    X_ROUND,
)
from omega_cluster.games.mexican_train.fast.terms import mask_pips, matching, terms
from omega_cluster.games.mexican_train.game import OBJECTIVES
from omega_cluster.games.mexican_train.officers import _rules_jit as R
from omega_cluster.games.mexican_train.officers._chain_jit import MEMO_BITS
from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander, _unseen
from omega_cluster.games.mexican_train.officers.terms import DEFAULT_CHAIN_BUDGET
from omega_cluster.games.mexican_train.officers.weights import TERMS
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS

__all__ = ["encode", "make_encoder_ctx", "supported"]

# -- the encoder's settings and segment offsets: one int64 vector E ------------------------------
E_SIZE = 27
(
    E_M, E_T, E_V, E_LOG, E_HEUR, E_DEAL, E_ROUNDS,
    E_O_HAND, E_O_BOARD, E_O_HV, E_O_UV, E_O_ENGINE,
    E_O_TRAINS, E_TRAIN_W, E_O_SEATS, E_SEAT_W, E_O_GLOBALS, E_O_OBJ, E_O_LOG, E_LOG_W,
    E_A_KIND, E_A_TARGET, E_A_TRAIN, E_A_END, E_A_AFTER, E_A_TERMS, E_DANGER,
) = range(E_SIZE)  # fmt: skip
# The objective one-hot follows OBJECTIVES; the compiled rules flag go_out (G_GO_OUT) = index 1.
assert OBJECTIVES == ("points", "go_out")

_SMALL_MEMO = 512  # chain-memo slots tried first (overflow at 383 entries: rare, then the large)
_KINDS = 3  # play, draw, pass (the encoder's log rows and action kinds)
_PIP_SCALE = 0.01
_LENGTH_SCALE = 0.1
_COUNT_SCALE = 0.25


def supported(encoder: Any, game: Game) -> str | None:
    """Why :func:`encode` cannot stand in for ``encoder`` on ``game``'s states, or ``None``."""
    if type(encoder) is not MexicanTrainEncoder:
        return f"the compiled encoder mirrors MexicanTrainEncoder, not {type(encoder).__name__}"
    if game.spec.name != "mexican_train":
        return f"the compiled encoder serves mexican_train, not {game.spec.name}"
    if encoder.double_set != game.tiles.double_set:  # type: ignore[attr-defined]
        return (
            f"the encoder is for the double-{encoder.double_set} set, the game plays "
            f"double-{game.tiles.double_set}"  # type: ignore[attr-defined]
        )
    if encoder.max_players < game.num_players:
        return f"encoder max_players={encoder.max_players} < the table's {game.num_players}"
    if encoder.log_length > MAX_LOG:
        return f"encoder log_length={encoder.log_length} > the packed state's {MAX_LOG}"
    return None


def make_encoder_ctx(encoder: MexicanTrainEncoder, game: Game) -> tuple:
    """The constant arrays :func:`encode` reads for ``encoder`` on ``game`` (see the module doc):
    ``(E, G, em, dm, pips, high, low, values, P, play_rows, scales, tab, small, large, scratch_f,
    scratch_i)``: ``tab`` and the two memos are :mod:`.chain`'s, the scratch arrays what one
    decision's terms use (nothing allocates per leaf)."""
    reason = supported(encoder, game)
    if reason is not None:
        raise ValueError(reason)
    danger = int(encoder._danger)
    cc = CompiledCommander(game, [0.0] * len(TERMS), danger, DEFAULT_CHAIN_BUDGET)  # type: ignore[arg-type]
    e = np.zeros(E_SIZE, np.int64)
    e[E_M], e[E_T], e[E_V] = encoder.max_players, encoder.num_tiles, encoder.num_values
    e[E_LOG], e[E_HEUR] = encoder.log_length, encoder.heuristic_features
    e[E_DEAL], e[E_ROUNDS] = game.hand_size, game.num_rounds  # type: ignore[attr-defined]
    e[E_O_HAND], e[E_O_BOARD] = encoder._o_hand, encoder._o_board
    e[E_O_HV], e[E_O_UV], e[E_O_ENGINE] = (
        encoder._o_hand_values,
        encoder._o_unseen_values,
        encoder._o_engine,
    )
    e[E_O_TRAINS], e[E_TRAIN_W] = encoder._o_trains, encoder._train_width
    e[E_O_SEATS], e[E_SEAT_W] = encoder._o_seats, encoder._seat_width
    e[E_O_GLOBALS], e[E_O_LOG], e[E_LOG_W] = encoder._o_globals, encoder._o_log, encoder._log_width
    e[E_O_OBJ] = encoder._o_objective
    e[E_A_KIND], e[E_A_TARGET], e[E_A_TRAIN] = encoder._a_kind, encoder._a_target, encoder._a_train
    e[E_A_END], e[E_A_AFTER] = encoder._a_end, encoder._a_after
    e[E_A_TERMS] = encoder._a_terms if encoder.heuristic_features else -1
    e[E_DANGER] = danger
    play_rows = np.array(encoder._play_rows, np.float32)  # copies: ectx shares nothing
    scales = np.array(_TERM_SCALES, np.float32)
    tab = chain_table(cc.em, cc.pips, cc.values)
    small, large = new_memo(_SMALL_MEMO), new_memo(1 << MEMO_BITS)
    scratch_f = np.zeros(NUM_SLOTS + len(scales))  # urgency per slot, then one move's terms
    scratch_i = np.zeros(2 * NUM_SLOTS, np.int64)  # tiles reaching the other open ends, per slot
    return (
        e, cc.G, cc.em, cc.dm, cc.pips, cc.high, cc.low, cc.values, cc.P, play_rows, scales,
        tab, small, large, scratch_f, scratch_i,
    )  # fmt: skip


# -- observation ----------------------------------------------------------------------------------
@njit(cache=True)
def _tile_bits(lo: int, hi: int, nt: int, obs: np.ndarray, base: int) -> None:
    """One float per tile index of the two-word mask ``(lo, hi)``: 1.0 where the bit is set
    (tiles past ``nt`` are never in a mask)."""
    while lo:
        obs[base + ctz(lo)] = 1.0
        lo &= lo - 1
    while hi:
        obs[base + R.WORD + ctz(hi)] = 1.0
        hi &= hi - 1


@njit(cache=True)
def _obs_tiles(E, G, em, S, hlo, hhi, obs) -> None:
    """Own hand and board bits, per-value counts of own and unseen tiles, the engine."""
    nt = E[E_T]
    _tile_bits(hlo, hhi, nt, obs, E[E_O_HAND])
    _tile_bits(S[R.S_BOARD_LO], S[R.S_BOARD_HI], nt, obs, E[E_O_BOARD])
    ulo, uhi = _unseen(S, G, hlo, hhi)
    for v in range(E[E_V]):
        obs[E[E_O_HV] + v] = matching(hlo, hhi, em, v) * _COUNT_SCALE
        obs[E[E_O_UV] + v] = matching(ulo, uhi, em, v) * _COUNT_SCALE
    obs[E[E_O_ENGINE] + S[X_ENGINE]] = 1.0


@njit(cache=True)
def _obs_trains(E, G, em, S, player, hlo, hhi, obs) -> None:
    """One row per train: own, the other seats in turn order, then the Mexican train."""
    n, width = G[R.G_N], E[E_TRAIN_W]
    od_n = S[R.S_OD_N]
    for rel in range(n + 1):
        if rel == n:
            slot, row = MEXICAN_SLOT, E[E_O_TRAINS] + E[E_M] * width
        else:
            slot = player + rel if player + rel < n else player + rel - n
            row = E[E_O_TRAINS] + rel * width
        end = S[R.S_ENDS + slot]
        obs[row] = 1.0
        obs[row + 1] = S[R.S_MARKED] >> slot & 1
        for j in range(od_n):
            if S[R.S_OD + j] == slot:
                obs[row + 2] = 1.0
                obs[row + 3] = 1.0 if S[R.S_OD] == slot else 0.0
        obs[row + 4] = S[X_LENGTHS + slot] * _LENGTH_SCALE
        obs[row + 5] = matching(hlo, hhi, em, end) * _COUNT_SCALE
        obs[row + 6 + end] = 1.0


@njit(cache=True)
def _obs_seats(E, G, S, player, obs) -> None:
    """One row per relative seat: hand size, cumulative pips, rounds won, acting, first turn."""
    n, width = G[R.G_N], E[E_SEAT_W]
    deal, rounds = float(E[E_DEAL]), float(E[E_ROUNDS])
    for rel in range(n):
        seat = player + rel if player + rel < n else player + rel - n
        row = E[E_O_SEATS] + rel * width
        size = popcount(S[R.S_HANDS + 2 * seat]) + popcount(S[R.S_HANDS + 2 * seat + 1])
        obs[row] = 1.0
        obs[row + 1] = size / deal
        obs[row + 2] = S[R.S_PIPS0 + seat] * _PIP_SCALE
        obs[row + 3] = S[R.S_OUTS0 + seat] / rounds
        obs[row + 4] = 1.0 if S[R.S_CUR] == seat else 0.0
        obs[row + 5] = S[R.S_FIRST] >> seat & 1


@njit(cache=True)
def _obs_globals(E, G, values, S, hlo, hhi, obs) -> None:
    """Boneyard, round, the turn flags, own hand pips and size, the table size and objective
    one-hots (the objective from the game's constants: ``G_GO_OUT`` is its index)."""
    b = E[E_O_GLOBALS]
    obs[b] = S[R.S_BONE_N] / E[E_T]
    obs[b + 1] = S[X_ROUND] / E[E_ROUNDS]
    obs[b + 2] = S[R.S_DRAWN]
    obs[b + 3] = 1.0 if S[R.S_OD_N] > 0 and G[R.G_STRICT] != 0 else 0.0
    obs[b + 4] = S[R.S_CHAIN]
    obs[b + 5] = S[R.S_BONUS]
    obs[b + 6] = mask_pips(hlo, hhi, values) * _PIP_SCALE
    obs[b + 7] = (popcount(hlo) + popcount(hhi)) / float(E[E_DEAL])
    obs[b + 8 + G[R.G_N] - 2] = 1.0
    obs[E[E_O_OBJ] + (1 if G[R.G_GO_OUT] != 0 else 0)] = 1.0


@njit(cache=True)
def _obs_log(E, G, high, low, S, player, obs) -> None:
    """The last ``log_length`` actions of the round, most recent first (``_encode_log``)."""
    n, m, width = G[R.G_N], E[E_M], E[E_LOG_W]
    draw = G[R.G_DRAW]
    o_kind, o_target = m, m + _KINDS
    o_values = o_target + m + 1
    o_double = o_values + E[E_V]
    row = E[E_O_LOG]
    for i in range(min(S[X_HN], E[E_LOG])):
        actor, action = S[X_HIST + 2 * i], S[X_HIST + 2 * i + 1]
        obs[row + (actor - player + n) % n] = 1.0
        if action == draw:
            obs[row + o_kind + 1] = 1.0
        elif action == draw + 1:
            obs[row + o_kind + 2] = 1.0
        else:
            tile = action // NUM_SLOTS
            slot = action - tile * NUM_SLOTS
            obs[row + o_kind] = 1.0
            rel = m if slot == MEXICAN_SLOT else (slot - player + n) % n
            obs[row + o_target + rel] = 1.0
            obs[row + o_values + high[tile]] = 1.0
            obs[row + o_values + low[tile]] = 1.0
            obs[row + o_double] = 1.0 if high[tile] == low[tile] else 0.0
        row += width


# -- actions --------------------------------------------------------------------------------------
@njit(cache=True)
def _actions(E, G, em, pips, play_rows, S, player, hlo, hhi, legal, n_legal, feats) -> None:
    """The rows of ``encode_actions`` without the Commander's terms: kind, tile, target train,
    the end the play leaves, own tiles matching it, whether it goes out."""
    n, m = G[R.G_N], E[E_M]
    draw = G[R.G_DRAW]
    a_target, a_train, a_end, a_after = E[E_A_TARGET], E[E_A_TRAIN], E[E_A_END], E[E_A_AFTER]
    width = play_rows.shape[1]
    for i in range(n_legal):
        a = legal[i]
        if a >= draw:
            feats[i, E[E_A_KIND] + 1 + (a - draw)] = 1.0
            continue
        t = a // NUM_SLOTS
        s = a - t * NUM_SLOTS
        for j in range(width):
            feats[i, j] = play_rows[t, j]
        rlo, rhi = (hlo & ~(1 << t), hhi) if t < R.WORD else (hlo, hhi & ~(1 << (t - R.WORD)))
        rel = m if s == MEXICAN_SLOT else (s - player + n) % n
        new_end = pips[t] - S[R.S_ENDS + s]
        feats[i, a_target + rel] = 1.0
        feats[i, a_train] = S[R.S_MARKED] >> s & 1
        for j in range(S[R.S_OD_N]):
            if S[R.S_OD + j] == s:
                feats[i, a_train + 1] = 1.0
        feats[i, a_train + 2] = S[X_LENGTHS + s] * _LENGTH_SCALE
        feats[i, a_end + new_end] = 1.0
        feats[i, a_after] = matching(rlo, rhi, em, new_end) * _COUNT_SCALE
        feats[i, a_after + 1] = 1.0 if rlo == 0 and rhi == 0 else 0.0


# -- the kernel -----------------------------------------------------------------------------------
@njit(cache=True)
def encode(ectx, ctx, S, player, legal, n, obs, feats) -> None:
    """``encode_observation(state, player)`` into ``obs`` and ``encode_actions(state, player,
    legal[:n])`` into ``feats[:n]`` (both zeroed by the caller). ``ctx`` (the rules' constants)
    is not read: everything comes from ``ectx`` (:func:`make_encoder_ctx`)."""
    (E, G, em, _, pips, high, low, values, _, play_rows, _, _, _, _, _, _) = ectx
    hlo, hhi = S[R.S_HANDS + 2 * player], S[R.S_HANDS + 2 * player + 1]
    _obs_tiles(E, G, em, S, hlo, hhi, obs)
    _obs_trains(E, G, em, S, player, hlo, hhi, obs)
    _obs_seats(E, G, S, player, obs)
    _obs_globals(E, G, values, S, hlo, hhi, obs)
    if E[E_LOG] > 0:
        _obs_log(E, G, high, low, S, player, obs)
    _actions(E, G, em, pips, play_rows, S, player, hlo, hhi, legal, n, feats)
    if E[E_HEUR] != 0 and n > 0:
        terms(ectx, S, player, legal, n, feats, E[E_DANGER], E[E_A_TERMS])
