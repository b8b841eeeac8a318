"""What a game's fast path hands the compiled search: :class:`FastGame`, and the random numbers
its kernels draw (splitmix64).

A game with a fast path (its plugin hook ``fast_search``: ``(game) -> (FastGame | None,
reason)``) gives its state as one int64 vector and its rules, determinizations, rollouts and
encoder as numba kernels over it; the compiled ISMCTS of :mod:`omega_cluster.search.fast` runs
them for many searches at once. The type lives here, below the search layer, so that the game
packages can build it (games may not import the search). Random numbers inside the kernels come
from :func:`rand_float` / :func:`rand_below`: splitmix64 (Steele, Lea & Flood 2014) on one
``uint64[1]`` state — the same generator as the compiled search's, so a search is a pure
function of its seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

__all__ = ["FastGame", "rand_below", "rand_float"]


@dataclass(frozen=True)
class FastGame:
    """A game's compiled kernels (see the module doc; each kernel takes ``ctx`` first)."""

    name: str
    num_players: int
    num_actions: int  # the game's fixed action space
    max_legal: int  # most legal actions at any decision
    state_size: int  # length of a packed state (np.int64 vector)
    ctx: tuple  # constant arrays every kernel reads (a tuple numba can take)
    pack: Callable[[Any], np.ndarray]  # Python: a State -> its packed vector (exact copy)
    current: Any  # current(ctx, S) -> int: acting player, -1 when the searched horizon is over
    legal: Any  # legal(ctx, S, out) -> int: the legal actions in legal_actions() order
    apply: Any  # apply(ctx, S, action) -> None: in place, no checks
    returns: Any  # returns(ctx, S, out: float64[:]) -> None: per-player returns once over
    info_key: Any  # info_key(ctx, S, player) -> int64: equal information sets, equal keys
    sample_world: Any  # sample_world(ctx, S, player, rs: uint64[1], out: int64[:]) -> None
    rollouts: dict  # leaf name -> (rctx, kernel(rctx, ctx, S, rs, out: float64[:]) -> bool)
    obs_size: int  # the network leaf (0 / None when the game has no compiled encoder)
    feat_size: int
    ectx: tuple | None
    encode: Any  # encode(ectx, ctx, S, player, legal, n, obs, feats) -> None


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True)
def rand_float(rs: np.ndarray) -> float:
    """A uniform float in [0, 1) from the splitmix64 state ``rs`` (uint64[1], advanced)."""
    x = rs[0] + _GOLDEN
    rs[0] = x
    z = (x ^ (x >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return float(z >> _S11) * _INV_2_53


@njit(cache=True)
def rand_below(rs: np.ndarray, k: int) -> int:
    """A uniform int in ``[0, k)`` (``int(rand_float * k)``, as Python's ``int(rng.random() * k)``)."""
    return int(rand_float(rs) * k)
