"""Heads-up Leduc poker's compiled kernels for the fast search
(:class:`~omega_cluster.games.fast.FastGame`).

The packed state (int64) holds the fields of
:class:`~omega_cluster.games.leduc_poker.LeducPokerState` for two seats — who acts (the Python
codes: a seat, -1 chance, -2 over), the deck mask, both cards, the board, the stakes, raises and
calls of the round, the folded mask, each seat's chips in, the public code (one base-32 digit per
bet or board card), the winners and the opening seat — and the kernels replay its rules: deals,
bets, the showdown and its payoff arithmetic, the information-set key (the same integer as
``information_set_key``), ``sample_world`` (the opponent's card redrawn from the unseen ones,
as the Python clone-and-swap draws it), chance by ``sample_chance``'s rule, a uniform random
rollout (the ``RandomPlayer``'s draws) and the encoder of
:class:`~omega_cluster.games.leduc_poker.encoder.LeducPokerEncoder`. Covered: two players without
``action_mapping`` or ``suit_isomorphism`` (the public code of more seats outgrows 64 bits).
Imported only when numba is installed (the plugin hook ``fast_search`` loads it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_float
from omega_cluster.games.fast import FastGame

__all__ = ["for_game", "pack"]

CUR, DECK, P0, P1, BOARD, STAKES, RAISES, CALLS, FOLDED, A0, A1, PUB, WINNERS, START = range(14)
SLOTS = 14
_CHANCE, _TERMINAL = -1, -2  # the Python codes of ``_cur``
FOLD, CALL, RAISE = 0, 1, 2
_CARDS = 6
_CHIP_SCALE = 1.0 / 13.0
_SLOT_COUNT = 4  # betting slots a round (3N - 2)
# encoder offsets: seat 2, card 3, board 3, pair 1, round1 12, round2 12, chips 2, folded 2
O_CARD, O_BOARD, O_PAIR, O_R1, O_R2, O_CHIPS, O_FOLDED, OBS_SIZE = 2, 5, 8, 9, 21, 33, 35, 37


def pack(state: Any) -> np.ndarray:
    """The packed copy of a heads-up ``LeducPokerState`` (read through its fields)."""
    s = np.zeros(SLOTS, np.int64)
    s[CUR], s[DECK] = state._cur, state._deck
    s[P0], s[P1] = state._private
    s[BOARD], s[STAKES], s[RAISES] = state._board, state._stakes, state._raises
    s[CALLS], s[FOLDED] = state._calls, state._folded
    s[A0], s[A1] = state._ante
    s[PUB], s[WINNERS], s[START] = state._pub, state._winners, state.game.starting_player
    return s


@njit(cache=True)
def current(ctx: Any, s: np.ndarray) -> int:
    cur = s[CUR]
    if cur >= 0:
        return cur
    return -2 if cur == _CHANCE else -1


@njit(cache=True)
def _resolve(ctx: Any, s: np.ndarray) -> None:
    rank = ctx[0]
    s[CUR] = _TERMINAL
    folded = s[FOLDED]
    if folded:
        s[WINNERS] = 2 if folded == 1 else 1  # the seat that did not fold
        return
    r0, r1 = rank[s[BOARD], s[P0]], rank[s[BOARD], s[P1]]
    s[WINNERS] = 1 if r0 > r1 else 2 if r1 > r0 else 3


@njit(cache=True)
def apply(ctx: Any, s: np.ndarray, a: int) -> None:
    """One deal or bet, as ``LeducPokerState._apply_action`` (two players)."""
    cur = s[CUR]
    if cur == _CHANCE:
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
        _resolve(ctx, s)
    elif ready and a != RAISE:
        s[RAISES] = 0
        s[CALLS] = 0
        s[CUR] = _CHANCE
    else:
        s[CUR] = 1 - cur


@njit(cache=True)
def returns(ctx: Any, s: np.ndarray, out: np.ndarray) -> None:
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
        out[0] = ((100 - a0) + share) - 100
        out[1] = ((100 - a1) + share) - 100


@njit(cache=True)
def legal(ctx: Any, s: np.ndarray, out: np.ndarray) -> int:
    """The acting seat's legal actions, ascending; returns how many."""
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
def info_key(ctx: Any, s: np.ndarray, p: int) -> int:
    """``LeducPokerState.information_set_key(p)`` for two players."""
    code = ((s[PUB] << 1 | (1 if s[CUR] == _CHANCE else 0)) << 2) | s[WINNERS]
    return code * 7 + s[P0 + p] + 1


@njit(cache=True)
def chance(ctx: Any, s: np.ndarray, rs: np.ndarray) -> None:
    """A deal by ``sample_chance``'s rule over the cards left (``chance_outcomes`` order)."""
    deck = s[DECK]
    left = 0
    for c in range(_CARDS):
        left += (deck >> c) & 1
    p = 1.0 / left
    u = rand_float(rs)
    last = -1
    for c in range(_CARDS):
        if (deck >> c) & 1:
            last = c
            u -= p
            if u < 0.0:
                apply(ctx, s, c)
                return
    apply(ctx, s, last)


@njit(cache=True)
def sample_world(ctx: Any, s: np.ndarray, player: int, rs: np.ndarray, out: np.ndarray) -> None:
    """The opponent's card redrawn from the cards ``player`` cannot see (a decision node)."""
    out[:] = s
    own, board = s[P0 + player], s[BOARD]
    seen = 1 << own
    if board >= 0:
        seen |= 1 << board
    unseen = _CARDS - 1 - (1 if board >= 0 else 0)
    j = int(rand_float(rs) * unseen)
    for c in range(_CARDS):
        if not (seen >> c) & 1:
            if j == 0:
                out[P0 + 1 - player] = c
                out[DECK] = ((1 << _CARDS) - 1) ^ seen ^ (1 << c)
                return
            j -= 1


@njit(cache=True)
def random_rollout(rctx: Any, ctx: Any, s: np.ndarray, rs: np.ndarray, out: np.ndarray) -> bool:
    """Uniform random play to the end (a ``RandomPlayer`` at every seat)."""
    buf = rctx[0]
    while True:
        cur = current(ctx, s)
        if cur == -1:
            returns(ctx, s, out)
            return True
        if cur == -2:
            chance(ctx, s, rs)
        else:
            k = legal(ctx, s, buf)
            apply(ctx, s, buf[int(rand_float(rs) * k)])


@njit(cache=True)
def encode(ectx: Any, ctx: Any, s: np.ndarray, player: int, legal_: np.ndarray, n_legal: int,
           obs: np.ndarray, feats: np.ndarray) -> None:  # fmt: skip
    """``LeducPokerEncoder`` for two seats: seat, card and board ranks, pair, both rounds'
    betting, chips in and folded per relative seat; action ids one-hot."""
    obs[player] = 1.0
    card, board = s[P0 + player], s[BOARD]
    if card >= 0:
        obs[O_CARD + card // 2] = 1.0
    if board >= 0:
        obs[O_BOARD + board // 2] = 1.0
        obs[O_PAIR] = 1.0 if (card >= 0 and card // 2 == board // 2) else 0.0
    digits = np.empty(16, np.int64)
    count, pub = 0, s[PUB]
    while pub:
        digits[count] = pub & 31
        pub >>= 5
        count += 1
    base, slot = O_R1, 0
    for i in range(count - 1, -1, -1):  # most significant (oldest) first
        d = digits[i]
        if d >= 4:  # the board card: round 2 starts
            base, slot = O_R2, 0
            continue
        obs[base + 3 * slot + d - 1] = 1.0
        slot += 1
    for rel in range(2):
        seat = (player + rel) % 2
        obs[O_CHIPS + rel] = s[A0 + seat] * _CHIP_SCALE
        obs[O_FOLDED + rel] = (s[FOLDED] >> seat) & 1
    for j in range(n_legal):
        feats[j, legal_[j]] = 1.0


def for_game(game: Any) -> tuple[FastGame | None, str | None]:
    """Leduc's ``FastGame`` (the plugin hook ``fast_search``), or None and the reason."""
    if game.num_players != 2 or game.action_mapping or game.suit_isomorphism:
        return None, (
            "the compiled leduc_poker covers 2 players without action_mapping or "
            f"suit_isomorphism; got {game.params}"
        )
    ranks = np.array(game._hand_rank, np.int64)
    return FastGame(
        name="leduc_poker", num_players=2, num_actions=3, max_legal=3, state_size=SLOTS,
        ctx=(ranks,), pack=pack, current=current, legal=legal, apply=apply, returns=returns,
        info_key=info_key, sample_world=sample_world,
        rollouts={"random_rollout": ((np.zeros(3, np.int64),), random_rollout)},
        obs_size=OBS_SIZE, feat_size=3, ectx=(0,), encode=encode, chance=chance,
    ), None  # fmt: skip
