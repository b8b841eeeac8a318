"""Compiled kernels of OpenSpiel's k-in-a-row board games (``connect_four``, ``tic_tac_toe``):
the ``fast_search`` hook of the adapter's plugin, so that their searches run on the compiled tree.

Through the adapter every simulation of a search steps a ``pyspiel`` state and the search tree
runs in Python; these two games are small enough to be rules over two bit masks, so
:func:`for_game` hands the service a :class:`~omega_cluster.games.fast.FastGame` for them (and
``None`` with the reason for every other ``openspiel:`` game, which keeps the Python loop). Each
kernel mirrors pyspiel's rules and the adapter (``docs/kernels.md``): the legal moves ascending,
the returns pyspiel's (+1 / -1, 0 for a draw), the information set the move history (as
pyspiel's information-state string: one key for both seats), the determinization the state
itself (no draw), a random playout as ``RandomPlayer`` plays it, and the encoder the adapter's
(:class:`~.encoder.OpenSpielEncoder`: pyspiel's observation tensor, the action id one-hot).
``check_kernels`` in the conformance suite holds them to pyspiel move for move.

The packed state (int64): seat 0's stones, seat 1's stones (bit ``row * columns + column``, row
0 pyspiel's first row of the tensor: Connect Four's bottom, tic-tac-toe's top), the moves made,
the winner (-1: none yet) and a hash of the moves (the information set). Importing this module
imports numba, which the service asks for only when a search needs the kernels.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import mix64, rand_float
from omega_cluster.games.fast import OVER, FastGame

__all__ = ["for_game"]

STONES, MOVES, WINNER, LOG, SIZE = 0, 2, 3, 4, 5  # seat p's stones at STONES + p
# ctx[0]: rows, columns, in a row to win, gravity (1: a move is a column, the stone drops),
# then the observation plane of seat 0's stones, of seat 1's stones and of the empty cells
ROWS, COLS, K, GRAVITY, PLANE0, PLANE1, PLANE_EMPTY = range(7)
_K = np.uint64(0x9E3779B97F4A7C15)
# pyspiel's tensor planes: Connect Four (seat 0 "x", seat 1 "o", empty), tic-tac-toe (empty,
# nought: seat 1, cross: seat 0)
_GAMES = {"connect_four": (1, (0, 1, 2)), "tic_tac_toe": (0, (2, 1, 0))}


@njit(cache=True)
def current(ctx: Any, s: np.ndarray) -> int:
    """Who moves next (seat 0 first, then in turn), or OVER after a win or on a full board."""
    p = ctx[0]
    if s[WINNER] >= 0 or s[MOVES] == p[ROWS] * p[COLS]:
        return OVER
    return s[MOVES] % 2


@njit(cache=True)
def legal(ctx: Any, s: np.ndarray, out: np.ndarray) -> int:
    """The legal moves ascending: the columns not full (gravity), else the empty cells."""
    p = ctx[0]
    rows, cols = p[ROWS], p[COLS]
    filled = s[STONES] | s[STONES + 1]
    count = 0
    if p[GRAVITY]:
        top = (rows - 1) * cols
        for c in range(cols):
            if not (filled >> (top + c)) & 1:
                out[count] = c
                count += 1
        return count
    for cell in range(rows * cols):
        if not (filled >> cell) & 1:
            out[count] = cell
            count += 1
    return count


@njit(cache=True)
def _run(stones: int, row: int, col: int, dr: int, dc: int, rows: int, cols: int) -> int:
    """How many of ``stones`` follow (row, col) in direction (dr, dc), the cell not counted."""
    n = 0
    r, c = row + dr, col + dc
    while 0 <= r < rows and 0 <= c < cols and (stones >> (r * cols + c)) & 1:
        n += 1
        r += dr
        c += dc
    return n


@njit(cache=True)
def apply(ctx: Any, s: np.ndarray, action: int) -> None:
    """The acting seat's stone on ``action`` (dropped to the lowest free row of that column with
    gravity); a line of ``K`` through it wins."""
    p = ctx[0]
    rows, cols = p[ROWS], p[COLS]
    seat = s[MOVES] % 2
    filled = s[STONES] | s[STONES + 1]
    if p[GRAVITY]:
        row, col = 0, action
        while (filled >> (row * cols + col)) & 1:
            row += 1
    else:
        row, col = action // cols, action % cols
    stones = s[STONES + seat] | (np.int64(1) << (row * cols + col))
    s[STONES + seat] = stones
    s[MOVES] += 1
    s[LOG] = np.int64(mix64(np.uint64(s[LOG]) * _K + np.uint64(action + 1)))
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        line = 1 + _run(stones, row, col, dr, dc, rows, cols)
        line += _run(stones, row, col, -dr, -dc, rows, cols)
        if line >= p[K]:
            s[WINNER] = seat
            return


@njit(cache=True)
def returns(ctx: Any, s: np.ndarray, out: np.ndarray) -> None:
    """pyspiel's returns: +1 to the winner, -1 to the loser, 0 to both for a draw."""
    w = s[WINNER]
    out[0] = 0.0 if w < 0 else (1.0 if w == 0 else -1.0)
    out[1] = -out[0]


@njit(cache=True)
def info_key(ctx: Any, s: np.ndarray, player: int) -> int:
    """A 64-bit hash of the moves so far: the adapter's information set is pyspiel's
    information-state string, the move history (one key for both seats; a transposition is
    another node, as on the Python loop)."""
    return s[LOG]


@njit(cache=True)
def sample_world(ctx: Any, s: np.ndarray, player: int, rs: np.ndarray, out: np.ndarray) -> None:
    """Perfect information: the world is the state (no random number drawn)."""
    out[:] = s


@njit(cache=True)
def random_rollout(rctx: Any, ctx: Any, s: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    """Uniform random play to the end (``RandomPlayer``: ``legal[int(random() * len(legal))]``)."""
    moves = np.empty(ctx[0][ROWS] * ctx[0][COLS], np.int64)
    while current(ctx, s) != OVER:
        count = legal(ctx, s, moves)
        apply(ctx, s, moves[int(rand_float(rs) * count)])
    returns(ctx, s, out)
    return True


@njit(cache=True)
def encode(ectx: Any, ctx: Any, s: np.ndarray, player: int, legal_: np.ndarray, n_legal: int,
           obs: np.ndarray, feats: np.ndarray) -> None:  # fmt: skip
    """:class:`~.encoder.OpenSpielEncoder`: pyspiel's observation tensor (one plane per cell
    state, the same for both seats) and the action id one-hot."""
    p = ctx[0]
    cells = p[ROWS] * p[COLS]
    for cell in range(cells):
        if (s[STONES] >> cell) & 1:
            plane = p[PLANE0]
        elif (s[STONES + 1] >> cell) & 1:
            plane = p[PLANE1]
        else:
            plane = p[PLANE_EMPTY]
        obs[plane * cells + cell] = 1.0
    for j in range(n_legal):
        feats[j, legal_[j]] = 1.0


def _pack(ctx: tuple[np.ndarray], state: Any) -> np.ndarray:
    """The packed copy of an adapter state of the game of ``ctx``: its moves replayed."""
    s = np.array([0, 0, 0, -1, 0], np.int64)
    for action in state.history:
        apply(ctx, s, int(action))
    return s


def _context(game: Any) -> tuple[np.ndarray]:
    gravity, planes = _GAMES[game.params["name"]]
    pg = game.pyspiel_game.get_parameters()
    rows, cols, k = (pg["rows"], pg["columns"], pg["x_in_row"]) if gravity else (3, 3, 3)
    return (np.array([rows, cols, k, gravity, *planes], np.int64),)


def for_game(game: Any) -> tuple[FastGame | None, str | None]:
    """The kernels of ``openspiel:connect_four`` and ``openspiel:tic_tac_toe`` (the plugin hook
    ``fast_search``); ``None`` and the reason for any other game or parameters."""
    name = game.params["name"]
    if name not in _GAMES:
        return None, (f"openspiel:{name} has no compiled search (compiled: "
                      f"{', '.join(f'openspiel:{g}' for g in _GAMES)})")  # fmt: skip
    pg = game.pyspiel_game.get_parameters()
    if pg.get("egocentric_obs_tensor", False):
        return None, f"the compiled openspiel:{name} covers egocentric_obs_tensor=false only"
    ctx = _context(game)
    rows, cols = int(ctx[0][ROWS]), int(ctx[0][COLS])
    if rows * cols > 62:
        return None, f"the compiled openspiel:{name} covers boards of at most 62 cells"
    legal_max = cols if ctx[0][GRAVITY] else rows * cols
    return FastGame(
        name=game.spec.name, num_players=2, num_actions=game.spec.num_actions,
        max_legal=legal_max, state_size=SIZE, ctx=ctx, pack=partial(_pack, ctx), current=current, legal=legal,
        apply=apply, returns=returns, info_key=info_key, sample_world=sample_world,
        rollouts={"random_rollout": ((0,), random_rollout)}, obs_size=3 * rows * cols,
        feat_size=game.spec.num_actions, ectx=(0,), encode=encode,
    ), None  # fmt: skip
