"""The Mexican Train rules over packed states (numba): who acts, legal moves, a step, returns and
information-set keys, each taking the game's ``ctx`` first (:func:`.state.make_ctx`).

:func:`apply` is the compiled rules' ``apply_action`` (:mod:`..officers._rules_jit`, a line-for-
line mirror of ``MexicanTrainState._apply_action``) plus the fields the fast search adds
(:mod:`.layout`): the public-log hash updated as ``MexicanTrainState`` updates it (each action,
then the round-end pips), the train lengths, the recent-action buffer (the acting seat before the
move is who made it, also within first-turn chains) and the end of the round, which leaves the
vector exactly as :func:`.state.make_pack` packs the finished Python state. Entries past a
list's count (drawn boneyard tiles, covered doubles) are zeroed, so a stepped vector equals the
packed Python state entry for entry. Nothing here allocates.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import mix64
from omega_cluster.games.mexican_train.fast.layout import (
    MAX_LOG,
    X_HASH,
    X_HIST,
    X_HN,
    X_LENGTHS,
    X_OVER,
    X_WENT_OUT,
)
from omega_cluster.games.mexican_train.officers._rules_jit import (
    G_DRAW,
    G_GO_OUT,
    G_N,
    S_BONE,
    S_BONE_N,
    S_CUR,
    S_HANDS,
    S_OD,
    S_OD_N,
    S_OUTS0,
    S_PIPS0,
    apply_action,
    legal_actions,
    mask_pips,
)
from omega_cluster.games.mexican_train.rounds import ROUND_END_SALT
from omega_cluster.games.mexican_train.tiles import HASH_MULT, NUM_SLOTS

__all__ = ["apply", "current", "end_round", "info_key", "legal", "returns"]

_MULT = np.int64(HASH_MULT)
_SALT = np.int64(ROUND_END_SALT)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_R1 = np.uint64(1)


@njit(cache=True)
def current(ctx, S) -> int:
    """The acting seat, -1 once the round is over."""
    return -1 if S[X_OVER] else S[S_CUR]


@njit(cache=True)
def legal(ctx, S, out) -> int:
    """``MexicanTrainState.legal_actions()`` into ``out`` (same order); the count (0 once over)."""
    if S[X_OVER]:
        return 0
    return legal_actions(S, ctx[0], ctx[1], ctx[2], ctx[7], out)


@njit(cache=True)
def end_round(ctx, S, went_out: int) -> None:
    """``rounds.end_round`` of the campaign's last round: pips to the totals and the hash, the
    round won, no acting seat, no recent actions."""
    G, values, P = ctx[0], ctx[6], ctx[7]
    h = S[X_HASH]
    for q in range(G[G_N]):
        pips = mask_pips(S[S_HANDS + 2 * q], S[S_HANDS + 2 * q + 1], values, P)
        h = h * _MULT + pips + _SALT
        S[S_PIPS0 + q] += pips
    S[X_HASH] = h
    if went_out >= 0:
        S[S_OUTS0 + went_out] += 1
    S[S_CUR] = -1
    S[X_OVER] = 1
    S[X_WENT_OUT] = went_out
    for i in range(2 * S[X_HN]):
        S[X_HIST + i] = 0
    S[X_HN] = 0


@njit(cache=True)
def apply(ctx, S, a: int) -> None:
    """``MexicanTrainState._apply_action(a)`` in place (``a`` legal, the round not over)."""
    G = ctx[0]
    cur = S[S_CUR]
    S[X_HASH] = S[X_HASH] * _MULT + a + 1
    for i in range(2 * MAX_LOG - 1, 1, -1):  # one pair down, most recent first (a fixed
        S[X_HIST + i] = S[X_HIST + i - 2]  # length: vectorised; the entries past X_HN are 0)
    S[X_HIST], S[X_HIST + 1] = cur, a
    S[X_HN] = min(S[X_HN] + 1, MAX_LOG)
    od_n = S[S_OD_N]
    if a < G[G_DRAW]:
        S[X_LENGTHS + a % NUM_SLOTS] += 1
    r = apply_action(S, G, ctx[1], ctx[2], ctx[3], ctx[4], ctx[5], a)
    if a == G[G_DRAW]:
        S[S_BONE + S[S_BONE_N]] = 0
    for i in range(S[S_OD_N], od_n):  # a covered double: clear the freed entry
        S[S_OD + i] = 0
    if r != -2:
        end_round(ctx, S, r)


@njit(cache=True)
def returns(ctx, S, out) -> None:
    """``MexicanTrainState.returns()``: win shares once the round is over, zeros before."""
    G = ctx[0]
    n = G[G_N]
    if not S[X_OVER]:
        for q in range(n):
            out[q] = 0.0
        return
    go_out = G[G_GO_OUT] != 0
    best = np.int64(0)
    for q in range(n):
        x = -S[S_OUTS0 + q] if go_out else S[S_PIPS0 + q]
        if q == 0 or x < best:
            best = x
    winners = 0
    for q in range(n):
        x = -S[S_OUTS0 + q] if go_out else S[S_PIPS0 + q]
        if x == best:
            winners += 1
    for q in range(n):
        x = -S[S_OUTS0 + q] if go_out else S[S_PIPS0 + q]
        out[q] = 1.0 / winners if x == best else 0.0


@njit(cache=True)
def info_key(ctx, S, player: int) -> int:
    """A 63-bit key (>= 0) of ``player``'s information set: their hand, the public-log hash and
    ``player``, as ``information_set_key`` packs them (equal Python keys, equal keys)."""
    z = mix64(np.uint64(S[X_HASH]) + np.uint64(player) * _K1)
    z = mix64(z ^ np.uint64(S[S_HANDS + 2 * player]))
    z = mix64(z ^ np.uint64(S[S_HANDS + 2 * player + 1]) * _K1)
    return int(z >> _R1)
