"""Where every tile lies, as the acting player cannot see it, over a packed state (numba): the
compiled ``MexicanTrainState.hidden_state``.

The critic leaf of the compiled search (:mod:`omega_cluster.search.fast`) writes these codes
beside each leaf's observation row: a determinized world is a full state, so the
perfect-information critic can read it. One code per tile (the ``locations`` kind of
:class:`~omega_cluster.games.encoding.HiddenSpec`), relative to ``player``: 0 — not hidden from
it (its own hand, the board, the engine, out of the set), 1 — the boneyard, ``1 + k`` — the
hand of the seat ``k`` places after it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games.mexican_train.officers._rules_jit import (
    G_N,
    S_BONE,
    S_BONE_N,
    S_HANDS,
    WORD,
)

__all__ = ["hidden_codes"]


@njit(cache=True)
def hidden_codes(ctx, S, player: int, out) -> None:
    """The codes of ``S`` for ``player`` into ``out`` (float32, one entry per tile; zeroed
    first)."""
    n = ctx[0][G_N]
    out[:] = 0.0
    for k in range(1, n):
        q = (player + k) % n
        code = np.float32(1 + k)
        for w in range(2):
            bits = S[S_HANDS + 2 * q + w]
            while bits:
                low = bits & -bits
                t = w * WORD + _bit_index(low)
                if t < out.shape[0]:
                    out[t] = code
                bits ^= low
    for i in range(S[S_BONE_N]):
        t = S[S_BONE + i]
        if t < out.shape[0]:
            out[t] = np.float32(1.0)


@njit(cache=True, inline="always")
def _bit_index(low) -> int:
    """The index of the single set bit of ``low``."""
    i = 0
    while low > 1:
        low >>= 1
        i += 1
    return i
