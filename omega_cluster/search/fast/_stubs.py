"""Compiled stand-ins for the kernels a search does not use (no rollout, no encoder, no chance
nodes, no hidden state): module-level so the specialized tree can import them (:mod:`.specialize`); never called."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

__all__ = ["STUBS"]


@njit(cache=True)
def no_rollout(rctx: Any, ctx: Any, s: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    return False


@njit(cache=True)
def no_encode(ectx: Any, ctx: Any, s: np.ndarray, player: int, legal: np.ndarray, n: int,
              obs: np.ndarray, feats: np.ndarray) -> None:  # fmt: skip
    return None


@njit(cache=True)
def no_chance(ctx: Any, s: np.ndarray, rs: np.ndarray) -> None:
    return None


@njit(cache=True)
def no_hidden(ctx: Any, s: np.ndarray, player: int, out: np.ndarray) -> None:
    return None


STUBS = (no_rollout, no_encode, no_chance, no_hidden)
