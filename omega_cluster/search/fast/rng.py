"""A ``random.Random`` whose stream is the compiled search's: splitmix64 on one 64-bit state.

The compiled tree (:mod:`.tree`) draws from splitmix64 (``omega_cluster.games._splitmix``). A search
handed a :class:`SplitMixRandom` runs the compiled tree on that very stream, starting at the
generator's state and leaving the generator where the tree stopped, so the Python path and the
fast path fed one seed draw the same numbers in the same order — what the equality tests rely on.
Any other ``random.Random`` seeds the tree with ``getrandbits(64)`` (a function of the seed, but
not the Python path's numbers). The class lives with the kernels' contract
(:mod:`omega_cluster.games.fast`), where the conformance suite draws from it too.
"""

from __future__ import annotations

from omega_cluster.games.fast import SplitMixRandom

__all__ = ["SplitMixRandom"]
