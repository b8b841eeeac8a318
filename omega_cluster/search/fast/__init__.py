"""The fast search path: ISMCTS as compiled code (numba) over arrays for K concurrent searches.

* :mod:`.game` — :class:`FastGame` (a game's compiled kernels, from its plugin hook
  ``fast_search``), :class:`FastLeaf` and :func:`fast_path` (does the compiled tree mirror this
  search?);
* :mod:`.tree` — the compiled tree: K searches in one pool of arrays, ``collect`` leaves /
  ``finish`` them;
* :mod:`.driver` — :func:`run_batched` (one forward pass per batch of leaves gathered across the
  K searches) and the :class:`~omega_cluster.search.result.SearchResult` adaptor;
* :mod:`.rng` — :class:`SplitMixRandom`, the compiled stream as a ``random.Random``.

Importing this package does not import numba; :mod:`.tree` and :mod:`.driver` do.
"""

from omega_cluster.search.fast.game import FastGame, FastLeaf, fast_game, fast_path
from omega_cluster.search.fast.rng import SplitMixRandom

__all__ = ["FastGame", "FastLeaf", "SplitMixRandom", "fast_game", "fast_path"]
