"""The fast path: a uniformly random playout of Mexican Train inside one tight function.

Rollouts are the inner loop of every search that uses them, so this loop keeps the whole round in
local variables (masks, lists, tuples from :mod:`.tiles`) and calls no method per step. It follows
the rules of :mod:`.state` exactly — ``MexicanTrainState.legal_plays`` / ``legal_actions`` /
``_apply_action`` / ``stuck`` are mirrored line for line, for every variant — and consumes one
``rng.random()`` per decision, picking ``legal[int(rng.random() * len(legal))]`` from the same
sorted legal list. So it produces the identical history and returns as the generic loop
``while not s.is_terminal(): legal = s.legal_actions(); s.apply_action(legal[int(rng.random() *
len(legal))])`` with the same ``random.Random`` (tested in ``tests/unit/test_mexican_train.py``).
Round ends (scoring, the next deal) go through the state's own ``end_round``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from omega_cluster.games.mexican_train.tiles import HASH_MULT, MASK64, MEXICAN_BIT, SLOTS_OF

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["random_playout"]


def random_playout(
    state: MexicanTrainState, rng: random.Random, *, until_round_end: bool = False
) -> None:
    """Play uniformly random legal actions until the game (or the current round) ends."""
    while not state.over:
        _play_round(state, rng.random)
        if until_round_end:
            return


def _play_round(state: MexicanTrainState, rnd: Callable[[], float]) -> None:
    g = state.game
    tiles = g.tiles
    em, pips, high, low_ = tiles.end_mask, tiles.pips, tiles.high, tiles.low
    dmask = tiles.doubles_mask
    draw, pas = tiles.draw_action, tiles.pass_action
    strict, must_play = g.strict_doubles, g.must_play
    until_playable, chain_rule = g.draw_until_playable, g.first_turn_chain
    n = g.num_players
    history = state.history
    append = history.append
    hands, boneyard, ends, lengths = state.hands, state.boneyard, state.ends, state.lengths
    marked, od, cur = state.marked, state.open_doubles, state.current
    drawn, bonus, chain = state.drawn, state.bonus, state.chain
    first_pending, board, h = state.first_pending, state.board, state.log_hash
    went_out: int | None = None
    while True:
        # ---- legal actions (MexicanTrainState.legal_plays + legal_actions) ----
        hand = hands[cur]
        acts: list[int] = []
        if chain:
            slots: tuple[int, ...] = (cur,)
        elif od and strict:
            d = od[0]
            m = hand & em[ends[d]]
            while m:
                b = m & -m
                acts.append((b.bit_length() - 1) * 9 + d)
                m ^= b
            if bonus:
                hand &= dmask
                slots = SLOTS_OF[(1 << cur) | MEXICAN_BIT | marked]
            else:
                slots = ()
        else:
            om = (1 << cur) | MEXICAN_BIT | marked
            if od:  # lenient: uncovered doubles are open to everyone
                for s in od:
                    om |= 1 << s
            slots = SLOTS_OF[om]
        for s in slots:
            m = hand & em[ends[s]]
            while m:
                b = m & -m
                acts.append((b.bit_length() - 1) * 9 + s)
                m ^= b
        if len(acts) > 1:
            acts.sort()
        if chain:
            acts.append(pas)
        elif acts:
            if not must_play:
                if drawn:
                    acts.append(pas)
                elif boneyard:
                    acts.append(draw)
        elif boneyard and (not drawn or until_playable):
            acts.append(draw)
        else:
            acts.append(pas)
        a = acts[int(rnd() * len(acts))]
        # ---- apply (MexicanTrainState._apply_action + play + end_turn) ----
        append(a)
        h = (h * HASH_MULT + a + 1) & MASK64
        if a == draw:
            hands[cur] |= 1 << boneyard.pop()
            drawn = True
        elif a == pas:
            if not chain:
                marked |= 1 << cur
            first_pending &= ~(1 << cur)
            drawn = bonus = chain = False
            cur = (cur + 1) % n
        else:
            t, s = divmod(a, 9)
            bit = 1 << t
            hand = hands[cur] ^ bit
            hands[cur] = hand
            board |= bit
            ends[s] = pips[t] - ends[s]
            lengths[s] += 1
            if s == cur:
                marked &= ~(1 << s)
            if od and s in od:
                od = tuple(x for x in od if x != s)
            if not hand:
                went_out = cur
                break
            in_chain = chain or (s == cur and chain_rule and bool(first_pending >> cur & 1))
            if high[t] == low_[t]:
                od = (*od, s)
                bonus, drawn, chain = True, False, in_chain
            elif in_chain:
                bonus, chain = False, True
            else:
                first_pending &= ~(1 << cur)
                drawn = bonus = chain = False
                cur = (cur + 1) % n
        if boneyard:
            continue
        # ---- blocked? (MexicanTrainState.stuck) ----
        held = 0
        for m in hands:
            held |= m
        if od and strict:
            if held & em[ends[od[0]]]:
                continue
            if bonus:
                dbl = hands[cur] & dmask
                if any(dbl & em[ends[s]] for s in SLOTS_OF[(1 << cur) | MEXICAN_BIT | marked]):
                    continue
            break
        reach = em[ends[8]]
        for s in range(n):
            reach |= em[ends[s]]
        if not held & reach:
            break
    state.marked, state.open_doubles, state.current = marked, od, cur
    state.drawn, state.bonus, state.chain = drawn, bonus, chain
    state.first_pending, state.board, state.log_hash = first_pending, board, h
    state.end_round(went_out)
