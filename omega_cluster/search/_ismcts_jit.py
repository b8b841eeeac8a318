"""Random numbers of the compiled search (numba): splitmix64, kept in
:mod:`omega_cluster.games._splitmix` so that the games' compiled kernels, below the search in
the layers, draw from the same generator; re-exported here for the search side. The compiled
tree itself is :mod:`omega_cluster.search.fast.tree`.
"""

from __future__ import annotations

from omega_cluster.games._splitmix import rand_below, rand_float

__all__ = ["rand_below", "rand_float"]
