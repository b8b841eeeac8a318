"""Compiled ISMCTS building blocks (numba): random numbers, the information-set table, UCT, backup.

Imported only when numba is installed (:mod:`omega_cluster.search._ismcts_compiled` decides). A
game's compiled search loop (:mod:`omega_cluster.search._ismcts_leduc`) strings these together
with its own compiled rules; everything here is game-agnostic and mirrors the pure-Python tree of
:mod:`omega_cluster.search._ismcts_tree` for plain UCT (Kocsis & Szepesvári 2006; SO-ISMCTS,
Cowling, Powley & Whitehouse 2012): untried candidates first in random order, then
``mean + c·sqrt(ln N)/sqrt(n)`` from the same tables, ties broken uniformly at random, running
means of the acting player's return, the root summing every player's return.

The tree lives in flat arrays (:class:`Arrays`): a node is an index with its acting player, its
visit count and a contiguous run of edges (action, visits, mean); information-set keys map to
nodes through an open-addressing hash table (linear probing, keys >= 0, -1 marks a free slot).
Random numbers come from splitmix64 (Steele, Lea & Flood 2014) on one ``uint64`` of state, so a
search is a pure function of its seed, whatever else runs in the process.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "Arrays",
    "backup",
    "find",
    "new_node",
    "rand_below",
    "rand_float",
    "select",
]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_HASH = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 as a signed int64 (Fibonacci hash)
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
    """A uniform int in ``[0, k)``."""
    return int(rand_float(rs) * k)


class Arrays:
    """The flat arrays of one compiled tree (built in Python, filled by the compiled loop)."""

    def __init__(self, max_nodes: int, max_edges: int) -> None:
        size = 1
        while size < 2 * max_nodes:
            size *= 2
        self.keys = np.full(size, -1, np.int64)  # hash table: information-set key per slot
        self.slots = np.zeros(size, np.int64)  # hash table: node index per slot
        self.node = np.zeros((max_nodes, 5), np.int64)  # player, visits, first edge, edges, untried
        self.action = np.zeros(max_edges, np.int64)  # per edge: the action
        self.visits = np.zeros(max_edges, np.int64)  # per edge: selections
        self.mean = np.zeros(max_edges, np.float64)  # per edge: running mean for the player
        self.untried = np.zeros(max_edges, np.int64)  # per node run: edge offsets never selected
        self.counts = np.zeros(2, np.int64)  # nodes used, edges used


# node columns
PLAYER, VISITS, FIRST, EDGES, UNTRIED = 0, 1, 2, 3, 4


@njit(cache=True)
def find(keys: np.ndarray, slots: np.ndarray, key: int) -> int:
    """The slot of ``key`` in the hash table, or of the free slot where it would go."""
    mask = keys.size - 1
    h = np.int64(key) * _HASH
    i = (h ^ (h >> 29)) & mask
    while True:
        k = keys[i]
        if k == key or k == -1:
            return int(i)
        i = (i + 1) & mask


@njit(cache=True)
def new_node(
    node: np.ndarray,
    action: np.ndarray,
    untried: np.ndarray,
    counts: np.ndarray,
    player: int,
    legal: np.ndarray,
    k: int,
) -> int:
    """Append a node for ``player`` with candidates ``legal[:k]``; returns its index."""
    index, first = counts[0], counts[1]
    if index >= node.shape[0] or first + k > action.size:
        raise ValueError("compiled ISMCTS: tree arrays full")
    node[index, PLAYER] = player
    node[index, VISITS] = 0
    node[index, FIRST] = first
    node[index, EDGES] = k
    node[index, UNTRIED] = k
    for j in range(k):
        action[first + j] = legal[j]
        untried[first + j] = j
    counts[0] = index + 1
    counts[1] = first + k
    return index


@njit(cache=True)
def select(
    node: np.ndarray,
    visits: np.ndarray,
    mean: np.ndarray,
    untried: np.ndarray,
    index: int,
    explore: np.ndarray,
    inv_sqrt: np.ndarray,
    rs: np.ndarray,
) -> int:
    """UCT: an untried candidate at random, else the best score (random among ties). Returns
    the chosen edge (an index into the edge arrays) and counts the visit."""
    first, left = node[index, FIRST], node[index, UNTRIED]
    if left > 0:
        j = rand_below(rs, left) if left > 1 else 0
        pick = untried[first + j]
        untried[first + j] = untried[first + left - 1]
        node[index, UNTRIED] = left - 1
        edge = first + pick
    else:
        e = explore[node[index, VISITS]]
        best = -np.inf
        edge = first
        ties = 0
        for j in range(first, first + node[index, EDGES]):
            score = mean[j] + e * inv_sqrt[visits[j]]
            if score > best:
                best = score
                edge = j
                ties = 1
            elif score == best:
                ties += 1
                if rand_float(rs) * ties < 1.0:
                    edge = j
    node[index, VISITS] += 1
    visits[edge] += 1
    return edge


@njit(cache=True)
def backup(
    node: np.ndarray,
    visits: np.ndarray,
    mean: np.ndarray,
    path_nodes: np.ndarray,
    path_edges: np.ndarray,
    depth: int,
    values: np.ndarray,
    total: np.ndarray,
) -> None:
    """Running means of the acting player's value along the path; the root sums every value."""
    for d in range(depth):
        edge = path_edges[d]
        v = values[node[path_nodes[d], PLAYER]]
        mean[edge] += (v - mean[edge]) / visits[edge]
    for p in range(values.size):
        total[p] += values[p]
