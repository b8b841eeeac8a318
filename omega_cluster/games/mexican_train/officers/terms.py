"""The Commander's heuristic terms: one feature vector per legal move, from bit masks only.

:func:`move_features` reads the acting player's hand mask, the train ends, markers, open doubles,
hand sizes and the tiles still unseen (neither in hand nor on the board) from the read-only
:class:`~omega_cluster.games.mexican_train.MexicanTrainState` API and returns, for every legal
action, the features named in :data:`~omega_cluster.games.mexican_train.officers.weights.TERMS`. No state is
cloned: the hand after a move is ``hand ^ (1 << tile)`` and the train end after it is
``pips[tile] - end`` (:mod:`omega_cluster.games.mexican_train.tiles`), which is what makes the
Commander cheap enough to serve as an ISMCTS rollout policy.

Only what the player may know is read: their own hand, the public trains and markers, hand sizes
and the board (every laid tile is public). The hand-flexibility term is the longest chain of hand
tiles that can be laid one after another from the open end of the player's own train — a
longest-trail search over the tiles as edges between pip values, memoised on ``(end, mask)`` and
capped by a node budget (beyond it the search follows only the heaviest tile at each step), so
large hands in 2-player games stay fast.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from omega_cluster.games.mexican_train.state import SLOTS_OF
from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT, NUM_SLOTS, TileSet, tile_set

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainState

__all__ = [
    "DEFAULT_CHAIN_BUDGET",
    "chain_search",
    "hand_values",
    "move_features",
    "move_scores",
]

DEFAULT_CHAIN_BUDGET = 60  # chain-search expansions per decision before the greedy fallback
_PIP_BITS = 12  # chain score = length << 12 | pips: compare (length, pips) as one int


@cache
def hand_values(double_set: int, double_blank_value: int) -> tuple[int, ...]:
    """Pips each tile counts in hand at the end of a round (0|0 counts ``double_blank_value``)."""
    pips = tile_set(double_set).pips
    return (double_blank_value, *pips[1:])


ChainFunction = Callable[[int, int], tuple[int, int]]
"""``best(end, mask) -> (score, chain_mask)``: see :func:`chain_search`."""


def chain_search(tiles: TileSet, values: Sequence[int], budget: int) -> ChainFunction:
    """The longest chain from an open end through a hand: ``best(end, mask) -> (score, chain)``.

    ``score`` packs the chain's length and pips (longer first, then heavier); ``chain`` is the
    mask of its tiles. The memo lives as long as the returned function (one decision, so the
    result is a function of the position alone); after ``budget`` expansions each further step
    follows only the heaviest matching tile.
    """
    end_mask, pips = tiles.end_mask, tiles.pips
    memo: dict[int, tuple[int, int]] = {}
    memo_get = memo.get
    left = [budget]
    step = 1 << _PIP_BITS

    def best(end: int, mask: int) -> tuple[int, int]:
        key = mask << 4 | end  # ends are <= 12 < 16
        hit = memo_get(key)
        if hit is not None:
            return hit
        options = mask & end_mask[end]
        if not options:
            memo[key] = (0, 0)
            return (0, 0)
        left[0] -= 1
        if left[0] < 0:  # out of budget: follow the heaviest tile only
            options = 1 << (options.bit_length() - 1)
        best_score, best_chain = -1, 0
        while options:
            bit = options & -options
            options ^= bit
            t = bit.bit_length() - 1
            score, chain = best(pips[t] - end, mask ^ bit)
            score += step + values[t]
            if score > best_score:
                best_score, best_chain = score, chain | bit
        result = memo[key] = (best_score, best_chain)
        return result

    return best


def _urgencies(sizes: Sequence[int], player: int, danger: int) -> list[float]:
    """Per seat: 1.0 with one tile left, falling linearly to 0 above ``danger`` tiles."""
    return [
        0.0 if q == player else min(1.0, max(0.0, (danger + 1 - size) / danger))
        for q, size in enumerate(sizes)
    ]


class _Decision:
    """What every move of one decision shares (hand, ends, chains, urgencies, …)."""

    __slots__ = (
        "base_chain",
        "base_score",
        "best",
        "campaign",
        "endgame",
        "hand",
        "hand_pips",
        "open_slots",
        "own_marked",
        "per_value",
        "reach_all",
        "reach_without",
        "top_urgency",
        "unseen",
        "urgency",
    )  # fmt: skip

    def __init__(
        self, state: MexicanTrainState, player: int, danger_hand_size: int, chain_budget: int
    ) -> None:
        g = state.game
        tiles = g.tiles
        em = tiles.end_mask
        values = hand_values(tiles.double_set, g.double_blank_value)
        self.hand = hand = state.hand(player)
        ends = state.ends
        self.urgency = _urgencies(state.hand_sizes, player, danger_hand_size)
        self.top_urgency = max(self.urgency)
        self.unseen = tiles.full_mask & ~hand & ~state.board & ~(1 << tiles.double(state.engine))
        self.per_value = 1.0 / (tiles.double_set + 1)  # a value appears on double_set + 1 tiles
        self.open_slots = open_slots = state.open_mask(player)
        reach_all = 0
        for x in SLOTS_OF[open_slots]:
            reach_all |= em[ends[x]]
        self.reach_all = reach_all
        self.reach_without = _reach_without(em, ends, open_slots)
        self.best = chain_search(tiles, values, chain_budget)
        self.base_score, self.base_chain = self.best(ends[player], hand)
        self.hand_pips = tiles.mask_pips(hand, g.double_blank_value)
        self.own_marked = float(state.marked >> player & 1)
        # pips left in hand only decide a single round when it blocks; over a points campaign
        # they add up whoever goes out
        self.campaign = float(g.objective == "points" and g.num_rounds > 1)
        self.endgame = float(state.boneyard_size == 0)


def move_features(
    state: MexicanTrainState,
    player: int,
    legal: Sequence[int],
    *,
    danger_hand_size: int,
    chain_budget: int = DEFAULT_CHAIN_BUDGET,
) -> list[tuple[float, ...]]:
    """The feature vector (``TERMS`` order) of each action in ``legal``, in the same order."""
    g = state.game
    tiles = g.tiles
    em, pips, high, low = tiles.end_mask, tiles.pips, tiles.high, tiles.low
    dmask, draw = tiles.doubles_mask, tiles.draw_action
    values = hand_values(tiles.double_set, g.double_blank_value)
    d = _Decision(state, player, danger_hand_size, chain_budget)
    hand, base_score, base_chain, best = d.hand, d.base_score, d.base_chain, d.best
    hand_pips, reach_all, open_slots = d.hand_pips, d.reach_all, d.open_slots
    ends, marked, open_doubles = state.ends, state.marked, state.open_doubles
    own_end = ends[player]
    out: list[tuple[float, ...]] = []
    for a in legal:
        if a >= draw:  # DRAW or PASS: the hand stays as it is
            out.append(
                (0.0, 0.0, 0.0, 0.0, float(base_score >> _PIP_BITS),
                 float(hand_pips - (base_score & 4095)),
                 float((hand & reach_all).bit_count()), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                 0.0, 0.0, float((hand & dmask).bit_count()), 0.0,
                 float(a == draw), float(a != draw))
            )  # fmt: skip
            continue
        t, s = divmod(a, NUM_SLOTS)
        bit = 1 << t
        rest = hand ^ bit
        v = values[t]
        new_end = pips[t] - ends[s]
        if s == player:
            score, _ = best(new_end, rest)
        elif base_chain & bit:
            score, _ = best(own_end, rest)
        else:  # the best chain does not use this tile, so it is still the best one
            score = base_score
        reach = (d.reach_without[s] | em[new_end]) if open_slots >> s & 1 else reach_all
        share = (d.unseen & em[new_end]).bit_count() * d.per_value
        opponent = s != player and s != MEXICAN_SLOT
        shared = s == MEXICAN_SLOT or (opponent and marked >> s & 1)
        is_double = high[t] == low[t] and rest != 0
        can_cover = bool(rest & em[new_end])
        out.append(
            (float(v), v * d.campaign, v * d.endgame, v * d.top_urgency,
             float(score >> _PIP_BITS), float(hand_pips - v - (score & 4095)),
             float((rest & reach).bit_count()),
             float(s == player), d.own_marked if s == player else 0.0,
             float(s == MEXICAN_SLOT), float(opponent),
             d.urgency[s] * (1.0 - share) if opponent else 0.0,
             share if shared else 0.0, float(s in open_doubles),
             float(is_double and can_cover), float(is_double and not can_cover),
             float((rest & dmask).bit_count()), float(rest == 0), 0.0, 0.0)
        )  # fmt: skip
    return out


def move_scores(
    state: MexicanTrainState,
    player: int,
    legal: Sequence[int],
    weights: Sequence[float],
    *,
    danger_hand_size: int,
    chain_budget: int = DEFAULT_CHAIN_BUDGET,
) -> list[float]:
    """``Σ weight × feature`` of each action in ``legal``, without building the feature vectors.

    The Commander's hot path (it is the rollout policy of ISMCTS): the same features as
    :func:`move_features`, added term by term in ``TERMS`` order, so every score is the very
    float ``Σ w·f`` over the vector gives (a term whose feature is 0 adds ±0.0, so it is left
    out); ``tests/unit/test_officers.py`` checks they agree. It spares the Commander's rollouts
    building a vector per action.
    """
    g = state.game
    tiles = g.tiles
    em, pips, high, low = tiles.end_mask, tiles.pips, tiles.high, tiles.low
    dmask, draw = tiles.doubles_mask, tiles.draw_action
    values = hand_values(tiles.double_set, g.double_blank_value)
    d = _Decision(state, player, danger_hand_size, chain_budget)
    hand, base_score, base_chain, best = d.hand, d.base_score, d.base_chain, d.best
    hand_pips, reach_all, open_slots = d.hand_pips, d.reach_all, d.open_slots
    ends, marked, open_doubles = state.ends, state.marked, state.open_doubles
    own_end = ends[player]
    (w0, w1, w2, w3, w4, w5, w6, w7, w8, w9,
     w10, w11, w12, w13, w14, w15, w16, w17, w18, w19) = weights  # fmt: skip
    out: list[float] = []
    for a in legal:
        if a >= draw:  # DRAW or PASS: only terms 4, 5, 6, 16 and 18 or 19
            total = w4 * (base_score >> _PIP_BITS) + w5 * (hand_pips - (base_score & 4095))
            total += w6 * (hand & reach_all).bit_count()
            total += w16 * (hand & dmask).bit_count()
            out.append(total + (w18 if a == draw else w19))
            continue
        t, s = divmod(a, NUM_SLOTS)
        bit = 1 << t
        rest = hand ^ bit
        v = values[t]
        new_end = pips[t] - ends[s]
        if s == player:
            score, _ = best(new_end, rest)
        elif base_chain & bit:
            score, _ = best(own_end, rest)
        else:
            score = base_score
        reach = (d.reach_without[s] | em[new_end]) if open_slots >> s & 1 else reach_all
        total = w0 * v + w1 * (v * d.campaign) + w2 * (v * d.endgame)
        total += w3 * (v * d.top_urgency)
        total += w4 * (score >> _PIP_BITS)
        total += w5 * (hand_pips - v - (score & 4095))
        total += w6 * (rest & reach).bit_count()
        if s == player:
            total += w7
            total += w8 * d.own_marked
        elif s == MEXICAN_SLOT:
            total += w9
        share = (d.unseen & em[new_end]).bit_count() * d.per_value
        if s != player and s != MEXICAN_SLOT:  # an opponent's train
            total += w10
            total += w11 * (d.urgency[s] * (1.0 - share))
            if marked >> s & 1:
                total += w12 * share
        elif s == MEXICAN_SLOT:
            total += w12 * share
        if s in open_doubles:
            total += w13
        if high[t] == low[t] and rest != 0:
            total += w14 if rest & em[new_end] else w15
        total += w16 * (rest & dmask).bit_count()
        if rest == 0:
            total += w17
        out.append(total)
    return out


def _reach_without(em: Sequence[int], ends: Sequence[int], open_slots: int) -> list[int]:
    """Per train slot: tiles matching the ends of the open trains other than that slot."""
    slots = SLOTS_OF[open_slots]
    out = [0] * NUM_SLOTS
    for s in slots:
        m = 0
        for x in slots:
            if x != s:
                m |= em[ends[x]]
        out[s] = m
    return out
