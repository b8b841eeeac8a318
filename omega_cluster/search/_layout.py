"""The arrays of the compiled trees, as shapes: what the drivers allocate and what a budget costs.

:func:`ismcts_arrays` gives the shapes and dtypes of the pool and buffers that
:func:`omega_cluster.search.fast.driver.run_batched` allocates for K searches (the fields of the
pool's records are declared here, :mod:`.fast.nodes` reads them), :func:`smm_arrays` those of
:func:`omega_cluster.search.fast.smm_driver.run_batched_sm`. The drivers build their arrays from
these shapes, so the bytes a budget takes (:func:`ismcts_bytes`, :func:`smm_bytes`) are the
allocation's own: the search configs check their ``simulations`` with them (on the smallest game,
:data:`SMALLEST_GAME`: a lower bound, since a game's shapes grow the tree), and the drivers check
the exact bytes of K searches of a game before allocating. No numba here: the configs import it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "EDGES_PER_NODE",
    "SMALLEST_GAME",
    "Arrays",
    "ismcts_arrays",
    "ismcts_bytes",
    "ismcts_table_size",
    "nbytes",
    "smm_arrays",
    "smm_bytes",
]

# fields of the compiled ISMCTS pool's records (:mod:`.fast.nodes`)
N_PLAYER, N_VISITS, N_FIRST, N_COUNT, N_LEFT, N_FIELDS = 0, 1, 2, 3, 4, 5
E_ACTION, E_VISITS, E_FRESH, E_FIELDS = 0, 1, 2, 3
F_MEAN, F_PRIOR, F_FIELDS = 0, 1, 2
H_KEY, H_PLAYER, H_NODE, H_FIELDS = 0, 1, 2, 3

EDGES_PER_NODE = 8  # the edge pool's first size, per node (a game's max_legal may be far larger)

SMALLEST_GAME = {"num_players": 2, "max_legal": 2, "state_size": 1, "max_depth": 1}
"""The smallest game a search runs on (two players, two moves, a one-word state): a budget's
bytes on it are the least any game's search takes (the configs' bound, known before the game)."""

Arrays = tuple[tuple[tuple[int, ...], type], ...]
"""``((shape, dtype), ...)``: arrays in a driver's order."""

_I64, _F64, _U64 = np.int64, np.float64, np.uint64


def nbytes(arrays: Arrays) -> int:
    """The bytes of ``arrays`` (Python ints: no overflow for absurd sizes)."""
    return sum(math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in arrays)


def ismcts_arrays(
    searches: int,
    budget: int,
    *,
    num_players: int,
    max_legal: int,
    state_size: int,
    edges_per_node: int = EDGES_PER_NODE,
) -> tuple[Arrays, Arrays]:
    """The pool (nodes, first-play values, edges, edge statistics, hash, counts, root returns)
    and the buffers (see :mod:`.fast.tree`) of ``searches`` compiled ISMCTS trees for a largest
    budget of ``budget`` simulations: at most one new node a simulation, plus the root."""
    k, s, legal, n = searches, state_size, max_legal, num_players
    m = budget + 2
    e = m * min(legal, edges_per_node)  # grown when a tree needs more (the driver's _grow)
    h = 1 << max(2, (2 * m - 1).bit_length())
    pool: Arrays = (
        ((k, m, N_FIELDS), _I64), ((k, m), _F64),
        ((k, e, E_FIELDS), _I64), ((k, e, F_FIELDS), _F64),
        ((k, h, H_FIELDS), _I64), ((k, 2), _I64), ((k, n), _F64),
    )  # fmt: skip
    bufs: Arrays = (
        ((1, s), _I64), ((k, legal), _I64), ((k, m), _I64),
        ((k, m), _I64), ((k, m + 1), _I64), ((k, n), _F64),
        ((k, n), _F64), ((1, s), _I64), ((k, s), _I64),
        ((k,), _I64), ((k, legal), _F64), ((k, s), _I64),
    )  # fmt: skip
    return pool, bufs


def ismcts_table_size(budget: int) -> int:
    """The length of the exploration tables (``explore``, ``bonus``: float64, shared by the K
    searches) for a largest budget of ``budget`` simulations: visit counts up to budget + 2,
    in a few sizes (a power of two, at least 1024)."""
    return 1 << max(10, (budget + 2).bit_length())


def ismcts_bytes(searches: int, budget: int, **game: int) -> int:
    """The bytes of :func:`ismcts_arrays` and the exploration tables (``game``: its keywords;
    default the smallest game)."""
    if not game:
        game = {key: v for key, v in SMALLEST_GAME.items() if key != "max_depth"}
    pool, bufs = ismcts_arrays(searches, budget, **game)
    return nbytes(pool) + nbytes(bufs) + 2 * 8 * ismcts_table_size(budget)


def smm_arrays(
    searches: int,
    budget: int,
    *,
    num_players: int,
    max_legal: int,
    state_size: int,
    max_depth: int,
    rule_tables: bool = False,
    hidden: bool = False,
) -> Arrays:
    """The arrays of ``searches`` compiled SM-MCTS trees (:mod:`.fast.smm`'s ``T``, in order) for
    a largest budget of ``budget`` simulations: a simulation adds a chance and a bidding node at
    most. ``max_legal``: the game's actions; ``rule_tables``: the rule keeps a strategy per
    action (Exp3, regret matching; UCB does not); ``hidden``: the game has hidden information."""
    K, n, A = searches, num_players, max_legal
    nodes, blocks = 2 * budget + 2, budget + 1
    size = 4
    while size < 2 * nodes:
        size *= 2
    full = (K, blocks, n, A)
    small = (1, 1, 1, 1)  # never read for this rule / information
    return (
        ((K, nodes, 3), _I64), ((K, nodes, n), _F64),
        ((K, blocks, n, 4), _I64), ((K, blocks, n), _F64),
        (full, _I64), (full, _F64),
        (full if rule_tables else small, _F64), (full if rule_tables else small, _F64),
        (full if hidden else small, _I64),
        ((K, size), _I64), ((K, size), _I64),
        ((K, 9), _I64),
        ((K, max_depth + 2), _I64),
        ((K, 1), _U64),
        ((K, state_size), _I64),
        ((K, state_size), _I64),
        ((K, n), _F64),
        ((K, state_size), _I64),
    )  # fmt: skip


def smm_bytes(searches: int, budget: int, **game: Any) -> int:
    """The bytes of :func:`smm_arrays` (``game``: its keywords; default the smallest game)."""
    return nbytes(smm_arrays(searches, budget, **(game or SMALLEST_GAME)))
