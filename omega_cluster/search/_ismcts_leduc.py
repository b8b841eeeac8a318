"""Compiled ISMCTS for heads-up Leduc poker (numba): the rules and the whole search loop.

The pure-Python search spends ~7 µs a simulation on Leduc, nearly all of it in interpreter
overhead (the game's steps, keys and determinizations, and the selection loop; see
:mod:`omega_cluster.search.ismcts`). Here the same search — SO-ISMCTS with plain UCT and one
uniform random rollout per new leaf — runs as one compiled loop over a state of sixteen ints,
with the tree of :mod:`omega_cluster.search._ismcts_jit`. Imported only when numba is installed;
:mod:`omega_cluster.search._ismcts_compiled` decides when it applies (two players, OpenSpiel's
default parameters, a UCT configuration it mirrors) and turns its output into the usual
:class:`~omega_cluster.search.result.SearchResult`.

The rules are those of :mod:`omega_cluster.games.leduc_poker` for two players without action
mapping or suit isomorphism (card ids 0..5, rank = id // 2), the information-set key is the same
integer as :meth:`~omega_cluster.games.leduc_poker.LeducPokerState.information_set_key`, and a
determinization redraws the opponent's card from the four or five the searcher cannot see, as
the Python ``sample_world`` does. ``tests/unit/test_ismcts_compiled.py`` checks the compiled
steps, keys and returns against the Python game and the search's figures against the Python
search.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np
from numba import njit

from omega_cluster.search._ismcts_jit import backup, find, new_node, rand_below, select

__all__ = ["SLOTS", "encode", "search"]

# state layout (int64[SLOTS])
CUR, DECK, P0, P1, BOARD, STAKES, RAISES, CALLS, FOLDED, A0, A1, PUB, WINNERS, START = range(14)
SLOTS = 16
CHANCE, TERMINAL = -1, -2
FOLD, CALL, RAISE = 0, 1, 2
_FULL_DECK = (1 << 6) - 1


def encode(state: object) -> np.ndarray:
    """The compiled state of a heads-up ``LeducPokerState`` (read through its fields)."""
    s = np.zeros(SLOTS, np.int64)
    private = state._private  # type: ignore[attr-defined]
    ante = state._ante  # type: ignore[attr-defined]
    s[CUR] = state._cur  # type: ignore[attr-defined]
    s[DECK] = state._deck  # type: ignore[attr-defined]
    s[P0], s[P1] = private
    s[BOARD] = state._board  # type: ignore[attr-defined]
    s[STAKES] = state._stakes  # type: ignore[attr-defined]
    s[RAISES] = state._raises  # type: ignore[attr-defined]
    s[CALLS] = state._calls  # type: ignore[attr-defined]
    s[FOLDED] = state._folded  # type: ignore[attr-defined]
    s[A0], s[A1] = ante
    s[PUB] = state._pub  # type: ignore[attr-defined]
    s[WINNERS] = state._winners  # type: ignore[attr-defined]
    s[START] = state.game.starting_player  # type: ignore[attr-defined]
    return s


@njit(cache=True)
def _resolve(s: np.ndarray, rank: np.ndarray) -> None:
    s[CUR] = TERMINAL
    folded = s[FOLDED]
    if folded:
        s[WINNERS] = 2 if folded == 1 else 1  # the seat that did not fold
        return
    r0, r1 = rank[s[BOARD], s[P0]], rank[s[BOARD], s[P1]]
    s[WINNERS] = 1 if r0 > r1 else 2 if r1 > r0 else 3


@njit(cache=True)
def step(s: np.ndarray, a: int, rank: np.ndarray) -> None:
    """One deal or bet, as ``LeducPokerState._apply_action`` (two players)."""
    cur = s[CUR]
    if cur == CHANCE:
        s[DECK] ^= 1 << a
        if s[P0] < 0:
            s[P0] = a
        elif s[P1] < 0:
            s[P1] = a
            s[CUR] = s[START]
        else:
            s[BOARD] = a
            s[PUB] = s[PUB] << 5 | (4 + a)
            s[CUR] = s[START]
        return
    s[PUB] = s[PUB] << 5 | (a + 1)
    calls, raises = s[CALLS], s[RAISES]
    if a == CALL:
        s[A0 + cur] = s[STAKES]
        calls += 1
    elif a == RAISE:
        s[STAKES] += 4 if s[BOARD] >= 0 else 2
        s[A0 + cur] = s[STAKES]
        raises += 1
        calls = 0
    else:
        s[FOLDED] |= 1 << cur
    s[CALLS], s[RAISES] = calls, raises
    remaining = 1 if s[FOLDED] else 2
    ready = calls == remaining if raises == 0 else calls == remaining - 1
    if remaining == 1 or (ready and s[BOARD] >= 0):
        _resolve(s, rank)
    elif ready and a != RAISE:
        s[RAISES] = 0
        s[CALLS] = 0
        s[CUR] = CHANCE
    else:
        s[CUR] = 1 - cur


@njit(cache=True)
def returns(s: np.ndarray, out: np.ndarray) -> None:
    """Chips won by each seat at the end (``_resolve_two``'s arithmetic)."""
    a0, a1 = s[A0], s[A1]
    pot = a0 + a1
    w = s[WINNERS]
    if w == 1:
        out[0], out[1] = float(pot - a0), -float(a1)
    elif w == 2:
        out[0], out[1] = -float(a0), float(pot - a1)
    else:
        share = pot / 2
        out[0], out[1] = share - a0, share - a1


@njit(cache=True)
def legal_actions(s: np.ndarray, out: np.ndarray) -> int:
    """The acting seat's legal actions, ascending, into ``out``; returns how many."""
    k = 0
    if s[STAKES] > s[A0 + s[CUR]]:
        out[0] = FOLD
        k = 1
    out[k] = CALL
    k += 1
    if s[RAISES] < 2:
        out[k] = RAISE
        k += 1
    return k


@njit(cache=True)
def information_set_key(s: np.ndarray, p: int) -> int:
    """``LeducPokerState.information_set_key(p)`` for two players."""
    code = ((s[PUB] << 1 | (1 if s[CUR] == CHANCE else 0)) << 2) | s[WINNERS]
    return code * 7 + s[P0 + p] + 1


@njit(cache=True)
def _popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def _deal_random(s: np.ndarray, rs: np.ndarray, rank: np.ndarray) -> None:
    """A chance deal: every card left in the deck equally likely."""
    deck = s[DECK]
    j = rand_below(rs, _popcount(deck))
    for c in range(6):
        if deck >> c & 1:
            if j == 0:
                step(s, c, rank)
                return
            j -= 1


@njit(cache=True)
def sample_world(root: np.ndarray, player: int, world: np.ndarray, rs: np.ndarray) -> None:
    """A determinization for ``player``: the opponent's card redrawn from the unseen ones."""
    world[:] = root
    own, board = root[P0 + player], root[BOARD]
    seen = 1 << own
    if board >= 0:
        seen |= 1 << board
    j = rand_below(rs, 6 - _popcount(seen))
    for c in range(6):
        if not seen >> c & 1:
            if j == 0:
                world[P0 + 1 - player] = c
                world[DECK] = _FULL_DECK ^ seen ^ (1 << c)
                return
            j -= 1


@njit(cache=True)
def _rollout(s: np.ndarray, rs: np.ndarray, rank: np.ndarray, legal: np.ndarray) -> None:
    """Uniform random play to the end (the RolloutEvaluator with a RandomPlayer)."""
    while True:
        cur = s[CUR]
        if cur == TERMINAL:
            return
        if cur == CHANCE:
            _deal_random(s, rs, rank)
        else:
            k = legal_actions(s, legal)
            step(s, legal[rand_below(rs, k)], rank)


@njit(cache=True)
def search(
    root: np.ndarray,
    player: int,
    budget: int,
    rank: np.ndarray,
    explore: np.ndarray,
    inv_sqrt: np.ndarray,
    rs: np.ndarray,
    keys: np.ndarray,
    slots: np.ndarray,
    node: np.ndarray,
    action: np.ndarray,
    visits: np.ndarray,
    mean: np.ndarray,
    untried: np.ndarray,
    counts: np.ndarray,
    total: np.ndarray,
    histogram: np.ndarray,
) -> int:
    """``budget`` simulations from ``root`` (``player`` to act); returns the leaves expanded.

    Fills the tree arrays (node 0 is the root), the root's summed values ``total`` and the
    depth ``histogram``; the caller reads the root's edges.
    """
    # kept whole: the compiled loop in one place, to read beside the Python loop it reproduces
    world = np.empty_like(root)
    legal = np.empty(3, np.int64)
    values = np.zeros(2, np.float64)
    path_nodes = np.empty(histogram.size, np.int64)
    path_edges = np.empty(histogram.size, np.int64)
    k = legal_actions(root, legal)
    key = information_set_key(root, player) * 2 + player
    slot = find(keys, slots, key)
    keys[slot] = key
    slots[slot] = new_node(node, action, untried, counts, player, legal, k)
    leaves = 0
    for _ in range(budget):
        sample_world(root, player, world, rs)
        depth = 0
        while True:
            cur = world[CUR]
            if cur == TERMINAL:
                returns(world, values)
                break
            if cur == CHANCE:
                _deal_random(world, rs, rank)
                continue
            key = information_set_key(world, cur) * 2 + cur
            slot = find(keys, slots, key)
            if keys[slot] == -1:  # a new information set: expand, then one random rollout
                k = legal_actions(world, legal)
                keys[slot] = key
                slots[slot] = new_node(node, action, untried, counts, cur, legal, k)
                leaves += 1
                _rollout(world, rs, rank, legal)
                returns(world, values)
                break
            index = slots[slot]
            edge = select(node, visits, mean, untried, index, explore, inv_sqrt, rs)
            path_nodes[depth] = index
            path_edges[depth] = edge
            depth += 1
            step(world, action[edge], rank)
        backup(node, visits, mean, path_nodes, path_edges, depth, values, total)
        histogram[depth] += 1
    return leaves


def for_game(game: Any) -> tuple[ModuleType | None, str | None]:
    """This kernel for ``game`` (Leduc's plugin hook ``compiled_search``), or ``None`` and the
    reason it does not cover the game's parameters."""
    if game.num_players != 2 or game.action_mapping or game.suit_isomorphism:
        return None, (
            "the leduc_poker kernel covers 2 players without action_mapping or "
            f"suit_isomorphism; got {game.params}"
        )
    return sys.modules[__name__], None


def tables(game: Any) -> np.ndarray:
    """Leduc's showdown ranks ``[board][card]`` as an array, kept on the game."""
    ranks = getattr(game, "_compiled_ranks", None)
    if ranks is None:
        ranks = np.array(game._hand_rank, np.int64)
        game._compiled_ranks = ranks
    return ranks
