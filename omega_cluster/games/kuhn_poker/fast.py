"""Kuhn poker's compiled kernels for the fast search (:class:`~omega_cluster.search.fast.game.FastGame`).

The packed state (int64) holds the fields of :class:`~omega_cluster.games.kuhn_poker.KuhnPokerState`
— who acts (the Python codes: a seat, -1 chance, -2 over), the deck and betting masks, the
betting code, the cards and their owners — and the kernels replay its rules: the deal, pass/bet,
OpenSpiel's end rule and payoff, the information-set key (the same integer as
``information_set_key``), ``sample_world`` (the redeal of :func:`omega_cluster.games._poker.redeal`:
a Fisher–Yates shuffle of the cards the player does not hold, drawn as ``random.shuffle`` draws),
chance by ``sample_chance``'s rule, a uniform random rollout (the ``RandomPlayer``'s draws) and
the encoder of :class:`~omega_cluster.games.kuhn_poker.encoder.KuhnPokerEncoder`.
Imported only when numba is installed (the plugin hook ``fast_search`` loads it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_below, rand_float
from omega_cluster.games.api import State
from omega_cluster.games.fast import FastGame
from omega_cluster.games.kuhn_poker import KuhnPokerState

__all__ = ["for_game", "pack"]

CUR, N, DECK, BETS, NACTS, FIRST, MASK, DEALT, CARDS = range(9)  # then OWNER at CARDS + n
_CHANCE, _TERMINAL = -1, -2  # the Python codes of ``_cur``


def pack(state: State) -> np.ndarray:
    """The packed copy of ``state`` (its fields, see the module doc)."""
    assert isinstance(state, KuhnPokerState)
    n = state._n
    s = np.zeros(CARDS + 2 * n + 1, np.int64)
    s[CUR], s[N], s[DECK], s[BETS] = state._cur, n, state._deck, state._bets
    s[NACTS], s[FIRST], s[MASK] = state._nacts, state._first_bettor, state._bet_mask
    s[DEALT] = sum(1 for c in state._cards if c >= 0)
    s[CARDS : CARDS + n] = state._cards
    s[CARDS + n : CARDS + 2 * n + 1] = state._owner
    return s


@njit(cache=True)
def current(ctx: Any, s: np.ndarray) -> int:
    cur = s[CUR]
    if cur >= 0:
        return cur
    return -2 if cur == _CHANCE else -1


@njit(cache=True)
def legal(ctx: Any, s: np.ndarray, out: np.ndarray) -> int:
    out[0] = 0
    out[1] = 1
    return 2


@njit(cache=True)
def apply(ctx: Any, s: np.ndarray, a: int) -> None:
    n = s[N]
    if s[CUR] == _CHANCE:
        seat = s[DEALT]
        s[CARDS + seat] = a
        s[CARDS + n + a] = seat
        s[DECK] &= ~(1 << a)
        s[DEALT] = seat + 1
        s[CUR] = 0 if seat == n - 1 else _CHANCE
        return
    player = s[CUR]
    s[BETS] = s[BETS] << 1 | a
    s[NACTS] += 1
    if a == 1:
        s[MASK] |= 1 << player
        if s[FIRST] < 0:
            s[FIRST] = player
    fb, nacts = s[FIRST], s[NACTS]
    if (fb < 0 and nacts == n) or (fb >= 0 and nacts == n + fb):
        s[CUR] = _TERMINAL
    else:
        s[CUR] = nacts % n


@njit(cache=True)
def returns(ctx: Any, s: np.ndarray, out: np.ndarray) -> None:
    """``KuhnPokerState._finish``'s payoff: the best card among the bettors (all, if none bet)."""
    n, mask = s[N], s[MASK]
    own = CARDS + n
    winner = -1
    if s[FIRST] < 0:
        winner = s[own + n] if s[own + n] >= 0 else s[own + n - 1]
    else:
        for c in range(n, -1, -1):
            o = s[own + c]
            if o >= 0 and (mask >> o) & 1:
                winner = o
                break
    pot = n
    for p in range(n):
        pot += (mask >> p) & 1
    for p in range(n):
        stake = 2.0 if (mask >> p) & 1 else 1.0
        out[p] = pot - stake if p == winner else -stake


@njit(cache=True)
def info_key(ctx: Any, s: np.ndarray, player: int) -> int:
    return s[BETS] * (s[N] + 2) + s[CARDS + player] + 1


@njit(cache=True)
def chance(ctx: Any, s: np.ndarray, rs: np.ndarray) -> None:
    """A deal drawn by ``sample_chance``'s rule over ``chance_outcomes`` (the cards left)."""
    n, deck = s[N], s[DECK]
    p = 1.0 / (n + 1 - s[DEALT])
    u = rand_float(rs)
    last = -1
    for c in range(n + 1):
        if (deck >> c) & 1:
            last = c
            u -= p
            if u < 0.0:
                apply(ctx, s, c)
                return
    apply(ctx, s, last)


@njit(cache=True)
def sample_world(ctx: Any, s: np.ndarray, player: int, rs: np.ndarray, out: np.ndarray) -> None:
    """The opponents' dealt cards redrawn from the cards ``player`` does not hold."""
    out[:] = s
    n, dealt = s[N], s[DEALT]
    own = s[CARDS + player]
    pool = np.empty(n + 1, np.int64)
    size = 0
    for c in range(n + 1):
        if c != own:
            pool[size] = c
            size += 1
    for i in range(size - 1, 0, -1):  # random.shuffle
        j = rand_below(rs, i + 1)
        pool[i], pool[j] = pool[j], pool[i]
    for c in range(n + 1):
        out[CARDS + n + c] = -1
    deck = (1 << (n + 1)) - 1
    for seat in range(dealt):
        if seat == player and own >= 0:
            card = own
        else:
            size -= 1
            card = pool[size]
        out[CARDS + seat] = card
        out[CARDS + n + card] = seat
        deck &= ~(1 << card)
    out[DECK] = deck


@njit(cache=True)
def random_rollout(rctx: Any, ctx: Any, s: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    """Uniform random play to the end (a ``RandomPlayer`` at every seat)."""
    while True:
        cur = current(ctx, s)
        if cur == -1:
            returns(ctx, s, out)
            return True
        if cur == -2:
            chance(ctx, s, rs)
        else:
            apply(ctx, s, int(rand_float(rs) * 2))


@njit(cache=True)
def encode(ectx: Any, ctx: Any, s: np.ndarray, player: int, legal_: np.ndarray, n_legal: int,
           obs: np.ndarray, feats: np.ndarray) -> None:  # fmt: skip
    """``KuhnPokerEncoder``: seat, own card, the betting slots; action ids one-hot."""
    n = s[N]
    obs[player] = 1.0
    card = s[CARDS + player]
    if card >= 0:
        obs[n + card] = 1.0
    base, nacts, bets = n + n + 1, s[NACTS], s[BETS]
    for k in range(nacts):
        bet = (bets >> (nacts - 1 - k)) & 1
        obs[base + 2 * k + bet] = 1.0
    for j in range(n_legal):
        feats[j, legal_[j]] = 1.0


def for_game(game: Any) -> tuple[FastGame | None, str | None]:
    """Kuhn poker's ``FastGame`` (the plugin hook ``fast_search``), for any player count."""
    from omega_cluster.games.kuhn_poker.fast_hidden import hidden_codes

    n = game.num_players
    return FastGame(
        name="kuhn_poker", num_players=n, num_actions=2, max_legal=2,
        state_size=CARDS + 2 * n + 1, ctx=(np.zeros(1, np.int64),), pack=pack,
        current=current, legal=legal, apply=apply, returns=returns, info_key=info_key,
        sample_world=sample_world, rollouts={"random_rollout": ((0,), random_rollout)},
        obs_size=n + n + 1 + 2 * (2 * n - 1), feat_size=2, ectx=(0,), encode=encode,
        chance=chance, hidden=hidden_codes, hidden_size=n + 1,
    ), None  # fmt: skip
