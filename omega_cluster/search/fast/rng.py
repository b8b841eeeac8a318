"""A ``random.Random`` whose stream is the compiled search's: splitmix64 on one 64-bit state.

The compiled tree (:mod:`.tree`) draws from splitmix64 (``omega_cluster.games._splitmix``). A search
handed a :class:`SplitMixRandom` runs the compiled tree on that very stream, starting at the
generator's state and leaving the generator where the tree stopped, so the Python path and the
fast path fed one seed draw the same numbers in the same order — what the equality tests rely on.
Any other ``random.Random`` seeds the tree with ``getrandbits(64)`` (a function of the seed, but
not the Python path's numbers).
"""

from __future__ import annotations

import random

__all__ = ["SplitMixRandom"]

_MASK = (1 << 64) - 1


class SplitMixRandom(random.Random):
    """``random()`` from splitmix64 (Steele, Lea & Flood 2014); integers below ``n`` as
    ``int(random() * n)``, as the compiled kernels draw them (``rand_below``)."""

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK
        super().__init__(0)

    def random(self) -> float:
        self.state = x = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0)

    def _randbelow(self, n: int) -> int:
        return int(self.random() * n)

    def getrandbits(self, k: int) -> int:
        bits = 0
        for _ in range((k + 52) // 53):
            bits = bits << 53 | int(self.random() * 9007199254740992.0)
        return bits >> (((k + 52) // 53) * 53 - k)
