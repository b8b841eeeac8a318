"""Kuhn poker's hidden codes over a packed state (numba): the compiled
``KuhnPokerState.hidden_state``, the critic leaf's input on the fast search path.

One code per card of the ``N + 1``-card deck, relative to ``player``: 0 — its own card, 1 — not
dealt, ``1 + k`` — the card of the seat ``k`` places after it (the ``locations`` kind of
:class:`~omega_cluster.games.encoding.HiddenSpec`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games.kuhn_poker.fast import CARDS, N

__all__ = ["hidden_codes"]


@njit(cache=True)
def hidden_codes(ctx: Any, s: np.ndarray, player: int, out: np.ndarray) -> None:
    """The codes of ``s`` for ``player`` into ``out`` (float32[N + 1])."""
    n = s[N]
    out[:] = 1.0
    for q in range(n):
        card = s[CARDS + q]
        if card >= 0:
            out[card] = 0.0 if q == player else np.float32(1 + (q - player) % n)
