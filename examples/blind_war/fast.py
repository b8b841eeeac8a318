"""Blind War's compiled kernels: the game's rules over a packed state, for the compiled search.

The plugin's ``fast_search`` hook (:func:`for_game`) hands the service a
:class:`~omega_cluster.games.fast.FastGame` (the protocol: ``docs/kernels.md``); with it, the
ISMCTS search of this game runs compiled (``omega_cluster.search.fast``) wherever the built-in
games' does, and its Python loop everywhere else. Each kernel is the Python rule of
:mod:`.game` over the packed state, drawing its random numbers as the Python code draws them from
a ``random.Random`` (one ``random()`` per draw, ``int(random() * n)`` below ``n``), so the two
agree move for move and search for search (``check_kernels`` in the conformance suite;
``tests/unit/test_user_game_kernels.py``). Importing this module imports numba, which the
service asks for only when it needs the kernels.

The packed state (int64): the leader, the number of cards on the table, a mask of the cards of
finished tricks, a hash of the public move log, then per seat its hand (a mask: bit ``c - 1``
for card ``c``, so a set bit is the action that plays it), the table in play order (action ids,
-1 past its end) and the tricks won.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import mix64, rand_below, rand_float
from omega_cluster.games.fast import OVER, FastGame

from .encoder import BlindWarEncoder
from .game import BlindWarGame, BlindWarState

__all__ = ["for_game", "pack"]

LEADER, TABLE_LEN, GONE, LOG, HANDS = range(5)  # then the table and the tricks (see _offsets)
_K = np.uint64(0x9E3779B97F4A7C15)


def _offsets(n: int) -> tuple[int, int, int]:
    """Where the table and the tricks start, and the packed state's length, for ``n`` seats."""
    return HANDS + n, HANDS + 2 * n, HANDS + 3 * n


@njit(cache=True)
def _logged(log: int, action: int) -> int:
    """The move log's hash with ``action`` appended."""
    return np.int64(mix64(np.uint64(log) * _K + np.uint64(action + 1)))


def pack(state: BlindWarState) -> np.ndarray:
    """The packed copy of ``state`` (see the module doc)."""
    n = len(state.hands)
    table, tricks, size = _offsets(n)
    s = np.zeros(size, np.int64)
    s[LEADER], s[TABLE_LEN] = state.leader, len(state.table)
    played = len(state.history) - len(state.table)
    log = 0
    for i, action in enumerate(state.history):
        log = int(_logged(log, action))
        if i < played:
            s[GONE] |= 1 << action
    s[LOG] = log
    for q in range(n):
        s[HANDS + q] = sum(1 << (c - 1) for c in state.hands[q])
        s[tricks + q] = state.tricks[q]
        s[table + q] = state.table[q] - 1 if q < len(state.table) else -1
    return s


@njit(cache=True)
def current(ctx: Any, s: np.ndarray) -> int:
    """Who plays next (``BlindWarState.current_players``), or OVER."""
    n = ctx[0][0]
    if s[HANDS + s[LEADER]] == 0 and s[TABLE_LEN] == 0:
        return OVER
    return (s[LEADER] + s[TABLE_LEN]) % n


@njit(cache=True)
def legal(ctx: Any, s: np.ndarray, out: np.ndarray) -> int:
    """The acting player's cards, ascending (``legal_actions``)."""
    hand = s[HANDS + current(ctx, s)]
    count, card = 0, 0
    while hand:
        if hand & 1:
            out[count] = card
            count += 1
        hand >>= 1
        card += 1
    return count


@njit(cache=True)
def apply(ctx: Any, s: np.ndarray, action: int) -> None:
    """Play card ``action + 1`` (``BlindWarState._apply_action``); the last card of a trick
    gives it to the highest card, who leads the next."""
    n = ctx[0][0]
    table = HANDS + n
    player = (s[LEADER] + s[TABLE_LEN]) % n
    s[HANDS + player] &= ~(np.int64(1) << action)
    s[table + s[TABLE_LEN]] = action
    s[TABLE_LEN] += 1
    s[LOG] = _logged(s[LOG], action)
    if s[TABLE_LEN] < n:
        return
    best = 0
    for i in range(1, n):
        if s[table + i] > s[table + best]:
            best = i
    winner = (s[LEADER] + best) % n
    s[HANDS + 2 * n + winner] += 1
    s[LEADER] = winner
    for i in range(n):
        s[GONE] |= np.int64(1) << s[table + i]
        s[table + i] = -1
    s[TABLE_LEN] = 0


@njit(cache=True)
def returns(ctx: Any, s: np.ndarray, out: np.ndarray) -> None:
    """The win shared by the players with the most tricks (``BlindWarState.returns``)."""
    n = ctx[0][0]
    tricks = HANDS + 2 * n
    most, winners = 0, 0
    for q in range(n):
        most = max(most, s[tricks + q])
    for q in range(n):
        winners += s[tricks + q] == most
    for q in range(n):
        out[q] = 1.0 / winners if s[tricks + q] == most else 0.0


@njit(cache=True)
def info_key(ctx: Any, s: np.ndarray, player: int) -> int:
    """A 64-bit hash of ``information_set_key``: the seat, its hand and the move log."""
    z = mix64(np.uint64(s[LOG]) + np.uint64(player + 1) * _K)
    return np.int64(mix64(z ^ np.uint64(s[HANDS + player])))


@njit(cache=True)
def sample_world(ctx: Any, s: np.ndarray, player: int, rs: np.ndarray, out: np.ndarray) -> None:
    """``BlindWarState.sample_world``: the cards ``player`` has not seen, ascending, shuffled
    as ``random.shuffle`` shuffles them, dealt in seat order to the other hands (sizes kept)."""
    n, deck = ctx[0][0], ctx[0][1]
    out[:] = s
    seen = s[HANDS + player] | s[GONE]
    for i in range(s[TABLE_LEN]):
        seen |= np.int64(1) << s[HANDS + n + i]
    unseen = np.empty(deck, np.int64)
    size = 0
    for card in range(deck):
        if not (seen >> card) & 1:
            unseen[size] = card
            size += 1
    for i in range(size - 1, 0, -1):
        j = rand_below(rs, i + 1)
        unseen[i], unseen[j] = unseen[j], unseen[i]
    taken = 0
    for q in range(n):
        if q == player:
            continue
        hand, held = 0, s[HANDS + q]
        while held:
            held &= held - 1
            hand |= np.int64(1) << unseen[taken]
            taken += 1
        out[HANDS + q] = hand


@njit(cache=True)
def random_rollout(rctx: Any, ctx: Any, s: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    """Uniform random play to the end (a ``RandomPlayer`` at every seat: ``legal[int(random()
    * len(legal))]``)."""
    moves = np.empty(ctx[0][2], np.int64)
    while current(ctx, s) != OVER:
        count = legal(ctx, s, moves)
        apply(ctx, s, moves[int(rand_float(rs) * count)])
    returns(ctx, s, out)
    return True


@njit(cache=True)
def encode(ectx: Any, ctx: Any, s: np.ndarray, player: int, legal_: np.ndarray, n_legal: int,
           obs: np.ndarray, feats: np.ndarray) -> None:  # fmt: skip
    """:class:`~.encoder.BlindWarEncoder` (``ectx``: its segments' offsets and the deck)."""
    hand_at, gone_at, table_at, best_at, position_at, tricks_at, deck = ectx
    n, tricks_per_game = ctx[0][0], ctx[0][2]
    for card in range(deck):
        if (s[HANDS + player] >> card) & 1:
            obs[hand_at + card] = 1.0
        if (s[GONE] >> card) & 1:
            obs[gone_at + card] = 1.0
    best = -1
    for i in range(s[TABLE_LEN]):
        card = s[HANDS + n + i]
        obs[table_at + card] = 1.0
        best = max(best, card)
    if best >= 0:
        obs[best_at + best] = 1.0
    obs[position_at + s[TABLE_LEN]] = 1.0
    for k in range(n):
        obs[tricks_at + k] = s[HANDS + 2 * n + (player + k) % n] / tricks_per_game
    for j in range(n_legal):
        feats[j, legal_[j]] = 1.0
        feats[j, deck] = 1.0 if legal_[j] > best else 0.0


def for_game(game: BlindWarGame) -> tuple[FastGame | None, str | None]:
    """Blind War's :class:`FastGame` (the plugin hook ``fast_search``) for any of its
    parameters. The compiled encoder is :class:`~.encoder.BlindWarEncoder`'s: the service uses
    it for a network whose encoder encodes as the plugin's (a hook of one argument)."""
    n, deck, hand = game.num_players, game.params["deck"], game.params["hand"]
    enc = BlindWarEncoder(game)
    segments = (enc._hand, enc._gone, enc._table, enc._best, enc._position, enc._tricks, deck)
    return FastGame(
        name=game.spec.name, num_players=n, num_actions=deck, max_legal=hand,
        state_size=_offsets(n)[2], ctx=(np.array([n, deck, hand], np.int64),), pack=pack,
        current=current, legal=legal, apply=apply, returns=returns, info_key=info_key,
        sample_world=sample_world, rollouts={"random_rollout": ((0,), random_rollout)},
        obs_size=enc.observation_size, feat_size=enc.action_feature_size, ectx=segments,
        encode=encode,
    ), None  # fmt: skip
