"""The card games' compiled kernels (numba), imported only when numba is installed:

* **the world draw** — :meth:`.holdings.Holdings.draw` and :meth:`.card_games.CardGame.world` in
  one call, the world's history written out as the text pyspiel's ``deserialize_state`` reads;
  the Python path (the two methods) is its twin: the same distribution, other random numbers.
  :func:`pack` lays a :class:`~.holdings.Holdings` and its :class:`~.card_games.Deal` out in one
  ``int64`` vector (offsets in a header: one array argument costs far less to pass than a dozen)
  and one ``float64`` vector (the running sums of the splits' counts); :func:`draw_world` reads
  them.
* **the random playout** — :func:`playout` replays a history of ``hearts`` or ``oh_hell`` and plays
  uniformly random legal moves (chance outcomes uniformly, as pyspiel's are) to the end: pyspiel's
  rules (``PlayLegalActions``, the tricks, the scores) mirrored move for move, checked against
  pyspiel's legal moves and returns in the tests. Its twin is a random playout through pyspiel.
  :func:`rules` lays a game's parameters out for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_below, rand_float
from omega_cluster.games.openspiel.card_games import Deal
from omega_cluster.games.openspiel.holdings import Holdings

__all__ = ["draw_world", "pack"]

# header of the packed int64 vector: counts, then the offsets of its sections
_K, _M, _NF, _NH, _T, _START, _UNKNOWN = range(7)
_CLS_START, _CLS_CARDS, _CON, _FREE, _SLOTS, _PL_START, _PL, _TEMPLATE = range(7, 15)
_LO, _HI, _OPT_X, _OPT_NEXT = range(15, 19)
_HEADER = 19


def pack(holdings: Holdings, deal: Deal) -> tuple[np.ndarray, np.ndarray]:
    """(ints, floats) for :func:`draw_world` (module docstring)."""
    assert deal.places is not None
    classes = holdings.classes
    m = len(holdings.constrained)
    states: dict[tuple[int, tuple[int, ...]], int] = {}
    order: list[tuple[int, tuple[int, ...]]] = []
    start = (0, tuple(holdings.slots[h] for h in holdings.constrained))
    todo = [start] if m else []
    while todo:  # the states a draw can reach, numbered
        key = todo.pop()
        if key in states or key[0] == len(classes):
            continue
        states[key] = len(order)
        order.append(key)
        for x in holdings.table[key][0]:
            todo.append((key[0] + 1, tuple(a - b for a, b in zip(key[1], x, strict=True))))
    lo: list[int] = []
    hi: list[int] = []
    opt_x: list[int] = []
    opt_next: list[int] = []
    cum: list[float] = []
    for k, r in order:
        splits, sums = holdings.table[(k, r)]
        lo.append(len(cum))
        for x, total in zip(splits, sums, strict=True):
            opt_x += x
            nxt = (k + 1, tuple(a - b for a, b in zip(r, x, strict=True)))
            opt_next.append(states.get(nxt, -1))
            cum.append(total)
        hi.append(len(cum))
    free = sorted(holdings.free, key=lambda h: holdings.slots[h])  # the biggest last: no draws
    places = deal.places
    sections = [
        [0, *np.cumsum([len(c) for _, c in classes]).tolist()],
        [c for _, cards in classes for c in cards],
        holdings.constrained,
        free,
        list(holdings.slots),
        [0, *np.cumsum([len(p) for p in places]).tolist()],
        [at for p in places for at in p],
        list(deal.template),
        lo,
        hi,
        opt_x,
        opt_next,
    ]
    head = [len(classes), m, len(free), len(places), len(deal.template), states.get(start, -1),
            len(deal.unknown)]  # fmt: skip
    offsets, at = [], _HEADER
    for section in sections:
        offsets.append(at)
        at += len(section)
    ints = np.array([*head, *offsets, *(v for s in sections for v in s)], dtype=np.int64)
    return ints, np.array(cum, dtype=np.float64)


@njit(cache=True)
def _place(ints: np.ndarray, hist: np.ndarray, cursor: np.ndarray, h: int, card: int) -> None:
    """Holder ``h``'s next card: at its next place in the history (the stock has none)."""
    at = ints[ints[_PL_START] + h] + cursor[h]
    if at < ints[ints[_PL_START] + h + 1]:
        hist[ints[ints[_PL] + at]] = card
    cursor[h] += 1


@njit(cache=True)
def draw_world(
    ints: np.ndarray, floats: np.ndarray, seed: int, hist: np.ndarray, text: np.ndarray
) -> int:
    """One world: its history in ``hist`` and, one entry a line, its text in ``text``; returns
    the text's length. Walks the splits of each class with their share of the count, deals
    each class's cards by a partial Fisher-Yates shuffle, then splits the pool."""
    rs = np.empty(1, np.uint64)
    rs[0] = np.uint64(seed)
    n_classes, m, n_free, n_holders = ints[_K], ints[_M], ints[_NF], ints[_NH]
    template = ints[_TEMPLATE]
    length = ints[_T]
    for i in range(length):
        hist[i] = ints[template + i]
    cursor = np.zeros(n_holders, np.int64)
    pool = np.empty(ints[_UNKNOWN], np.int64)
    n_pool = 0
    state = ints[_START]
    for k in range(n_classes):
        c0 = ints[ints[_CLS_START] + k]
        n = ints[ints[_CLS_START] + k + 1] - c0
        scratch = ints[ints[_CLS_CARDS] + c0 : ints[_CLS_CARDS] + c0 + n].copy()
        at = 0
        if m > 0:
            lo, hi = ints[ints[_LO] + state], ints[ints[_HI] + state]
            u = rand_float(rs) * floats[hi - 1]
            o = lo
            while o < hi - 1 and floats[o] <= u:
                o += 1
            for j in range(m):
                h = ints[ints[_CON] + j]
                for _ in range(ints[ints[_OPT_X] + o * m + j]):
                    r = at + rand_below(rs, n - at)
                    card = scratch[r]
                    scratch[r] = scratch[at]
                    scratch[at] = card
                    at += 1
                    _place(ints, hist, cursor, h, card)
            state = ints[ints[_OPT_NEXT] + o]
        for i in range(at, n):
            pool[n_pool] = scratch[i]
            n_pool += 1
    at = 0
    for f in range(n_free):
        h = ints[ints[_FREE] + f]
        last = f == n_free - 1
        for _ in range(ints[ints[_SLOTS] + h]):
            r = at if last else at + rand_below(rs, n_pool - at)
            card = pool[r]
            pool[r] = pool[at]
            pool[at] = card
            at += 1
            _place(ints, hist, cursor, h, card)
    size = 0
    for i in range(length):  # the text: decimal entries, one a line
        if i:
            text[size] = 10
            size += 1
        v = hist[i]
        digits = 1
        while v >= 10**digits:
            digits += 1
        for d in range(digits - 1, -1, -1):
            text[size + d] = 48 + v % 10
            v //= 10
        size += digits
    return size


# -- the random playout -------------------------------------------------------------------------
HEARTS, OH_HELL = 0, 1
# the rules vector: the game, then its parameters
_GAME, _N, _SUITS, _RANKS = range(4)
# hearts: flags
_PASS_CARDS, _NO_PTS_FIRST, _ANY_CLUB, _JD_BONUS, _AVOID_BONUS, _MUST_BREAK, _QS_BREAKS = range(
    4, 11
)
_HEARTS_INSTEAD_OF_QS = 11
# oh_hell: parameters
_TRICKS_FIXED, _OFF_BID_PENALTY, _POINTS_PER_TRICK = range(4, 7)
_SUIT_MASK = 12  # both: per suit, its cards as a bit mask (4 entries)
_RULES = 16

_HEARTS_SUIT, _QS, _JD, _CLUBS2 = 2, 43, 37, 0

# the playout's state vector: scalars, then per-player and per-card sections
(_PHASE, _CUR, _DEALT, _PLAYED, _LED, _WSUIT, _WRANK, _WIN, _TPOINTS, _BROKEN, _PASS_DIR,
 _PASSES, _TRICKS, _DEALER, _TRUMP, _BIDS) = range(16)  # fmt: skip
_POINTS, _WON, _BID, _NPASSED = 16, 23, 30, 37  # per player (7 at most)
_TRICK_WIN, _TRICK_PTS = 44, 62  # per trick (hearts: 13)
_PASSED = 80  # hearts: 4 x 3 passed cards
_HOLDER = 92  # per card: its holder, -1 none, -2 not dealt yet
_HAND = _HOLDER + 52  # per player: the cards it holds, a bit mask
_STATE = _HAND + 7
# phases
_P_PASS_DIR, _P_DEAL, _P_PASS, _P_PLAY, _P_OVER, _P_TRICKS, _P_DEALER, _P_BID = range(8)


def rules(name: str, params: Mapping[str, Any]) -> np.ndarray:
    """The rules vector of :func:`playout` for pyspiel game ``name`` at ``params``."""
    out = np.zeros(_RULES, np.int64)
    if name == "hearts":
        out[:4] = [HEARTS, 4, 4, 13]
        keys = ("pass_cards", "no_pts_on_first_trick", "can_lead_any_club", "jd_bonus",
                "avoid_all_tricks_bonus", "must_break_hearts", "qs_breaks_hearts",
                "can_lead_hearts_instead_of_qs")  # fmt: skip
        out[4:12] = [int(bool(params[k])) for k in keys]
    else:
        table = ("players", "num_suits", "num_cards_per_suit")
        out[:4] = [OH_HELL, *(int(params[k]) for k in table)]
        out[4:7] = [int(params["num_tricks_fixed"]), int(bool(params["off_bid_penalty"])),
                    int(params["points_per_trick"])]  # fmt: skip
    suits, ranks = int(out[_SUITS]), int(out[_RANKS])
    for suit in range(suits):
        out[_SUIT_MASK + suit] = sum(1 << (rank * suits + suit) for rank in range(ranks))
    return out


@njit(cache=True)
def _max_tricks(r: np.ndarray) -> int:
    return (r[_SUITS] * r[_RANKS] - 1) // r[_N]


@njit(cache=True)
def _start(r: np.ndarray, st: np.ndarray) -> None:
    st[:] = 0
    st[_HOLDER : _HOLDER + r[_SUITS] * r[_RANKS]] = -2
    st[_CUR] = -1
    st[_PHASE] = _P_PASS_DIR if r[_GAME] == HEARTS else _P_TRICKS
    if r[_GAME] == HEARTS:
        st[_BROKEN] = 1 - r[_MUST_BREAK]
    for p in range(r[_N]):
        st[_BID + p] = -1


@njit(cache=True)
def _points(r: np.ndarray, card: int) -> int:
    if card % 4 == _HEARTS_SUIT:
        return 1
    if card == _QS:
        return 13
    if card == _JD and r[_JD_BONUS]:
        return -10
    return 0


@njit(cache=True)
def _chance(r: np.ndarray, st: np.ndarray, out: np.ndarray) -> int:
    """The chance outcomes here (uniform in both games), in ``out``; their number."""
    phase, k = st[_PHASE], 0
    if phase == _P_PASS_DIR:
        for d in range(4 if r[_PASS_CARDS] else 1):
            out[k] = d
            k += 1
    elif phase == _P_TRICKS:
        if r[_TRICKS_FIXED] > 0:
            out[0] = r[_TRICKS_FIXED]
            return 1
        for t in range(1, _max_tricks(r) + 1):
            out[k] = t
            k += 1
    elif phase == _P_DEALER:
        for p in range(r[_N]):
            out[k] = p
            k += 1
    else:  # a card dealt
        for c in range(r[_SUITS] * r[_RANKS]):
            if st[_HOLDER + c] == -2:
                out[k] = c
                k += 1
    return k


@njit(cache=True)
def _legal(r: np.ndarray, st: np.ndarray, out: np.ndarray) -> int:
    """The acting player's legal actions (ascending, as pyspiel's) in ``out``; their
    number. Chance nodes: :func:`_chance`."""
    phase, cur, n = st[_PHASE], st[_CUR], r[_N]
    cards = r[_SUITS] * r[_RANKS]
    k = 0
    if phase == _P_BID:
        total, last = 0, True
        for p in range(n):
            if p != cur and st[_BID + p] < 0:
                last = False
            total += max(0, st[_BID + p])
        for b in range(st[_TRICKS] + 1):
            if not last or b + total != st[_TRICKS]:
                out[k] = cards + b
                k += 1
        return k
    mask = _card_mask(r, st)
    for c in range(cards):
        if mask >> c & 1:
            out[k] = c
            k += 1
    return k


@njit(cache=True)
def _card_mask(r: np.ndarray, st: np.ndarray) -> int:
    """The acting player's legal cards (a pass or a play) as a bit mask: pyspiel's
    ``PassLegalActions`` / ``PlayLegalActions``."""
    hand = st[_HAND + st[_CUR]]
    if st[_PHASE] == _P_PASS:
        return hand
    n, played = r[_N], st[_PLAYED]
    if played % n:  # follow suit if possible
        mask = hand & r[_SUIT_MASK + st[_LED]]
        if mask:
            return mask
    if r[_GAME] == HEARTS:
        hearts = r[_SUIT_MASK + _HEARTS_SUIT]
        if played == 0:  # the two of clubs leads (any club, with can_lead_any_club)
            return (1 << _CLUBS2) | (hand & r[_SUIT_MASK] if r[_ANY_CLUB] else 0)
        if r[_NO_PTS_FIRST] and played < n:
            mask = hand & ~(hearts | (1 << _QS))
            if mask:
                return mask
        if played % n == 0:
            mask = hand if st[_BROKEN] else hand & ~hearts
            if r[_HEARTS_INSTEAD_OF_QS] and mask == 1 << _QS:
                mask = 0
            if mask:
                return mask
    return hand


@njit(cache=True)
def _pick(mask: int, rs: np.ndarray) -> int:
    """One of the cards of ``mask``, uniformly."""
    count, rest = 0, mask
    while rest:
        rest &= rest - 1
        count += 1
    for _ in range(rand_below(rs, count)):
        mask &= mask - 1
    low, at = mask & -mask, 0
    for step in (32, 16, 8, 4, 2, 1):
        if low >> step:
            low >>= step
            at += step
    return at


@njit(cache=True)
def _apply(r: np.ndarray, st: np.ndarray, a: int) -> None:
    """Apply action or chance outcome ``a`` (pyspiel's ``DoApplyAction``)."""
    phase, n = st[_PHASE], r[_N]
    hearts = r[_GAME] == HEARTS
    if phase == _P_PASS_DIR:
        st[_PASS_DIR] = a
        st[_PHASE] = _P_DEAL
    elif phase == _P_TRICKS:
        st[_TRICKS] = a
        st[_PHASE] = _P_DEALER
    elif phase == _P_DEALER:
        st[_DEALER] = a
        st[_PHASE] = _P_DEAL
    elif phase == _P_DEAL:
        dealt = st[_DEALT]
        st[_DEALT] = dealt + 1
        if hearts:
            st[_HOLDER + a] = dealt % 4
            st[_HAND + dealt % 4] |= 1 << a
            if dealt + 1 == 52:
                if st[_PASS_DIR] == 0:
                    st[_PHASE] = _P_PLAY
                    st[_CUR] = st[_HOLDER + _CLUBS2]
                else:
                    st[_PHASE] = _P_PASS
                    st[_CUR] = 0
        elif dealt < n * st[_TRICKS]:
            st[_HOLDER + a] = dealt % n
            st[_HAND + dealt % n] |= 1 << a
        else:  # the trump card
            st[_HOLDER + a] = -1
            st[_TRUMP] = a
            st[_PHASE] = _P_BID
            st[_CUR] = (st[_DEALER] + 1) % n
    elif phase == _P_PASS:
        cur = st[_CUR]
        st[_PASSED + 3 * cur + st[_NPASSED + cur]] = a
        st[_NPASSED + cur] += 1
        st[_HOLDER + a] = -1
        st[_HAND + cur] &= ~(1 << a)
        if st[_NPASSED + cur] == 3:
            st[_CUR] = cur + 1
        if st[_CUR] == 4:
            for p in range(4):
                for j in range(3):
                    card, to = st[_PASSED + 3 * p + j], (p + st[_PASS_DIR]) % 4
                    st[_HOLDER + card] = to
                    st[_HAND + to] |= 1 << card
            st[_PHASE] = _P_PLAY
            st[_CUR] = st[_HOLDER + _CLUBS2]
    elif phase == _P_BID:
        st[_BID + st[_CUR]] = a - r[_SUITS] * r[_RANKS]
        st[_CUR] = (st[_CUR] + 1) % n
        st[_BIDS] += 1
        if st[_BIDS] == n:
            st[_PHASE] = _P_PLAY
    else:
        _play(r, st, a)


@njit(cache=True)
def _play(r: np.ndarray, st: np.ndarray, card: int) -> None:
    n, suits = r[_N], r[_SUITS]
    hearts = r[_GAME] == HEARTS
    seat, t = st[_CUR], st[_PLAYED]
    suit, rank = card % suits, card // suits
    st[_HOLDER + card] = -1
    st[_HAND + seat] &= ~(1 << card)
    if t % n == 0:
        st[_LED], st[_WSUIT], st[_WRANK], st[_WIN] = suit, suit, rank, seat
        st[_TPOINTS] = _points(r, card) if hearts else 0
    else:
        if hearts:
            st[_TPOINTS] += _points(r, card)
        if suit == st[_WSUIT]:
            if rank > st[_WRANK]:
                st[_WRANK], st[_WIN] = rank, seat
        elif not hearts and suit == st[_TRUMP] % suits:
            st[_WSUIT], st[_WRANK], st[_WIN] = suit, rank, seat
    if hearts and (suit == _HEARTS_SUIT or (card == _QS and r[_QS_BREAKS])):
        st[_BROKEN] = 1
    t += 1
    st[_PLAYED] = t
    if t % n == 0:
        win = st[_WIN]
        st[_CUR] = win
        st[_WON + win] += 1
        if hearts:
            st[_POINTS + win] += st[_TPOINTS]
            st[_TRICK_WIN + t // n - 1] = win
            st[_TRICK_PTS + t // n - 1] = st[_TPOINTS]
    else:
        st[_CUR] = (seat + 1) % n
    if t == (52 if hearts else n * st[_TRICKS]):
        st[_PHASE] = _P_OVER


@njit(cache=True)
def _returns(r: np.ndarray, st: np.ndarray, out: np.ndarray) -> None:
    """pyspiel's returns at the end (``ComputeScore``, ``Returns``)."""
    n = r[_N]
    if r[_GAME] == HEARTS:
        points = st[_POINTS : _POINTS + 4].copy()
        shooter, moon = -1, True
        for i in range(13):
            p = st[_TRICK_PTS + i]
            if p != 0 and p != -10:
                if shooter == -1:
                    shooter = st[_TRICK_WIN + i]
                elif shooter != st[_TRICK_WIN + i]:
                    moon = False
                    break
        if moon:
            for i in range(4):
                points[i] += -26 if i == shooter else 26
        if r[_AVOID_BONUS] and not moon:
            for i in range(4):
                if st[_WON + i] == 0:
                    points[i] += -5
        for i in range(4):
            out[i] = 26 - points[i]
        return
    ppt = r[_POINTS_PER_TRICK]
    for p in range(n):
        won, bid = st[_WON + p], st[_BID + p]
        if r[_OFF_BID_PENALTY]:
            out[p] = ppt * won + 10 if won == bid else -(ppt * abs(won - bid))
        else:
            out[p] = ppt * won + (10 if won == bid else 0)


@njit(cache=True)
def replay(r: np.ndarray, history: np.ndarray, st: np.ndarray) -> None:
    """The state after ``history`` in ``st``."""
    _start(r, st)
    for a in history:
        _apply(r, st, a)


@njit(cache=True)
def legal_after(r: np.ndarray, history: np.ndarray, out: np.ndarray) -> int:
    """The legal actions (chance outcomes at a chance node) after ``history``, in ``out``;
    their number, 0 at the end (the tests hold them to pyspiel's)."""
    st = np.empty(_STATE, np.int64)
    replay(r, history, st)
    phase = st[_PHASE]
    if phase == _P_OVER:
        return 0
    if phase in (_P_PASS_DIR, _P_TRICKS, _P_DEALER, _P_DEAL):
        return _chance(r, st, out)
    return _legal(r, st, out)


@njit(cache=True)
def playout(
    r: np.ndarray, history: np.ndarray, seed: int, moves: np.ndarray, returns: np.ndarray
) -> int:
    """Replay ``history``, then play uniformly random legal moves and chance outcomes to the
    end: the entries in ``moves`` (returns their number), the final returns in ``returns``."""
    rs = np.empty(1, np.uint64)
    rs[0] = np.uint64(seed)
    st = np.empty(_STATE, np.int64)
    replay(r, history, st)
    options = np.empty(64, np.int64)
    k = 0
    while st[_PHASE] != _P_OVER:
        phase = st[_PHASE]
        if phase in (_P_PASS, _P_PLAY):
            a = _pick(_card_mask(r, st), rs)
        else:
            if phase == _P_BID:
                count = _legal(r, st, options)
            else:
                count = _chance(r, st, options)
            a = options[rand_below(rs, count)]
        moves[k] = a
        k += 1
        _apply(r, st, a)
    _returns(r, st, returns)
    return k
