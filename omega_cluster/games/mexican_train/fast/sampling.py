"""Determinizations over packed states (numba): :func:`sample_world` re-deals what one player
cannot see, as :func:`omega_cluster.games.mexican_train.sampling.sample_world` does without
constraints.

The unseen tiles are those ``player`` cannot see — not in their hand, not on a train, not the
engine double (read from the public record, never from the other hands): laid out in ascending
order (as the Python sampler sorts its pool), shuffled by Fisher–Yates with splitmix64
(:func:`omega_cluster.games.fast.rand_below`, the formula ``int(u * (i + 1))`` of the Python
sampler over a different generator), then dealt as the Python sampler deals: each other seat in
seat order takes its public hand size from the end of the pool, the rest is the boneyard in the
shuffled order. A uniform re-deal, drawing what the Python sampler draws: handed the same stream (a
``SplitMixRandom``), both deal the same world.

A root that carries the public deductions (``X_DEAL``: the groups :func:`.state.constrain` packed,
``deduce=true``) is dealt as the Python sampler deals under :class:`DealConstraints`: group by
group, each taking its tiles by a partial Fisher–Yates over the unseen tiles it may hold
(ascending), restarting on a dead end, then the boneyard shuffled — the same draws, so the same
world from the same stream; after ``MAX_TRIES`` dead ends it raises, as the Python sampler does.
Everything public (the record, its hash, hand and boneyard sizes) is untouched.
"""

from __future__ import annotations

from numba import njit

from omega_cluster.games._splitmix import rand_below, rand_float
from omega_cluster.games.api import ConstraintError
from omega_cluster.games.mexican_train.fast.bits import ctz, popcount
from omega_cluster.games.mexican_train.fast.layout import (
    GROUP_WORDS,
    STATE_SIZE,
    X_DEAL,
    X_GROUPS,
    X_GROUPS_N,
    X_OVER,
)
from omega_cluster.games.mexican_train.officers._rules_jit import (
    G_N,
    G_UNSEEN_HI,
    G_UNSEEN_LO,
    S_BOARD_HI,
    S_BOARD_LO,
    S_BONE,
    S_BONE_N,
    S_ENGINE_TILE,
    S_HANDS,
    S_SIZE,
    WORD,
)
from omega_cluster.games.mexican_train.sampling import MAX_TRIES

__all__ = ["sample_world"]


@njit(cache=True)
def sample_world(ctx, S, player: int, rs, out) -> None:
    """A world from ``player``'s information set in ``S`` written into ``out`` (``S`` unchanged)."""
    G = ctx[0]
    # the Python sampler first draws the world's chance seed for the next rounds
    # (getrandbits(62): two draws of the stream); none are searched here, but the draws keep the
    # two samplers on one stream
    rand_float(rs)
    rand_float(rs)
    for i in range(STATE_SIZE):
        out[i] = S[i]
    if S[X_OVER]:
        return
    lo = G[G_UNSEEN_LO] & ~S[S_HANDS + 2 * player] & ~S[S_BOARD_LO]
    hi = G[G_UNSEEN_HI] & ~S[S_HANDS + 2 * player + 1] & ~S[S_BOARD_HI]
    e = S[S_ENGINE_TILE]
    if e < WORD:
        lo &= ~(1 << e)
    else:
        hi &= ~(1 << (e - WORD))
    if S[X_DEAL]:
        _constrained_deal(G, S, player, rs, out, lo, hi)
        return
    k = _ascending(lo, hi, out, S_BONE)  # the pool, in the boneyard's entries of ``out``
    _shuffle(out, S_BONE, k, rs)
    for q in range(G[G_N]):
        if q != player:
            size = popcount(S[S_HANDS + 2 * q]) + popcount(S[S_HANDS + 2 * q + 1])
            hlo, hhi = 0, 0
            for _ in range(size):
                k -= 1
                t = out[S_BONE + k]
                out[S_BONE + k] = 0
                if t < WORD:
                    hlo |= 1 << t
                else:
                    hhi |= 1 << (t - WORD)
            out[S_HANDS + 2 * q], out[S_HANDS + 2 * q + 1] = hlo, hhi
    out[S_BONE_N] = k


@njit(cache=True)
def _ascending(lo: int, hi: int, out, at: int) -> int:
    """The tiles of the mask ``(lo, hi)`` in ascending order into ``out[at:]``; their count."""
    k = 0
    while lo:
        out[at + k] = ctz(lo)
        lo &= lo - 1
        k += 1
    while hi:
        out[at + k] = WORD + ctz(hi)
        hi &= hi - 1
        k += 1
    return k


@njit(cache=True)
def _shuffle(out, at: int, k: int, rs) -> None:
    """Fisher–Yates over ``out[at:at + k]``, drawing as the Python sampler does."""
    for i in range(k - 1, 0, -1):
        j = rand_below(rs, i + 1)
        t = out[at + i]
        out[at + i] = out[at + j]
        out[at + j] = t


@njit(cache=True)
def _constrained_deal(G, S, player: int, rs, out, lo: int, hi: int) -> None:
    """The unseen tiles ``(lo, hi)`` dealt group by group (``S``'s packed groups), as
    ``sampling._constrained_deal`` deals them; the boneyard's entries of ``out`` serve as the
    scratch list of each group's allowed tiles."""
    groups = S[X_GROUPS_N]
    for _ in range(MAX_TRIES):
        for q in range(G[G_N]):
            if q != player:
                out[S_HANDS + 2 * q], out[S_HANDS + 2 * q + 1] = 0, 0
        left_lo, left_hi = lo, hi
        dealt = True
        for g in range(groups):
            at = X_GROUPS + GROUP_WORDS * g
            q, count = S[at], S[at + 1]
            size = _ascending(left_lo & ~S[at + 2], left_hi & ~S[at + 3], out, S_BONE)
            if size < count:
                dealt = False
                break
            mlo, mhi = 0, 0
            for i in range(count):  # a partial Fisher–Yates: ``count`` uniform distinct tiles
                j = i + rand_below(rs, size - i)
                t = out[S_BONE + j]
                out[S_BONE + j] = out[S_BONE + i]
                out[S_BONE + i] = t
                if t < WORD:
                    mlo |= 1 << t
                else:
                    mhi |= 1 << (t - WORD)
            out[S_HANDS + 2 * q] |= mlo
            out[S_HANDS + 2 * q + 1] |= mhi
            left_lo &= ~mlo
            left_hi &= ~mhi
        if dealt:
            k = _ascending(left_lo, left_hi, out, S_BONE)
            for i in range(S_BONE + k, S_SIZE):  # what the scratch lists left past the boneyard
                out[i] = 0
            _shuffle(out, S_BONE, k, rs)
            out[S_BONE_N] = k
            return
    raise ConstraintError("mexican_train: no deal of the unseen tiles satisfies the deductions")
