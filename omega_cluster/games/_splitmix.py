"""Random numbers in compiled code (numba): splitmix64 (Steele, Lea & Flood 2014) on one
``uint64`` of state (``uint64[1]``, advanced in place), so a compiled search or playout is a pure
function of its seed, whatever else runs in the process. The games' compiled kernels
(``games/*/fast.py``) and the compiled search tree (``search/fast/``) share these draws;
``omega_cluster.games.fast.SplitMixRandom`` is the same stream as a ``random.Random``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["mix64", "rand_below", "rand_float"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True)
def mix64(z: np.uint64) -> np.uint64:
    """splitmix64's finaliser: a bijection of the 64-bit words that scatters every input bit
    (the kernels' hashes of move logs and information sets are built on it)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def rand_float(rs: np.ndarray) -> float:
    """A uniform float in [0, 1) from the splitmix64 state ``rs`` (uint64[1], advanced)."""
    x = rs[0] + _GOLDEN
    rs[0] = x
    return float(mix64(x) >> _S11) * _INV_2_53


@njit(cache=True)
def rand_below(rs: np.ndarray, k: int) -> int:
    """A uniform int in ``[0, k)``: ``int(rand_float * k)`` (what ``SplitMixRandom`` draws)."""
    return int(rand_float(rs) * k)
