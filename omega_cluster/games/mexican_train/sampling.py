"""Determinizations for Mexican Train: ``sample_world`` re-deals what one player cannot see.

Called through :meth:`MexicanTrainState.sample_world` by ISMCTS (Cowling, Powley & Whitehouse
2012) many thousand times per decision, so the unconstrained path is one clone, one inlined
Fisher–Yates shuffle of the unseen tiles and a few mask builds.

What ``player`` cannot see: the other hands (their sizes are public) and the boneyard order; the
future rounds' deals too, so the world gets a fresh chance seed. ``player``'s hand and the public
record are untouched, so the observation and ``information_set_key(player)`` are unchanged.

:class:`DealConstraints` (tiles a seat is known not to hold, and at most how many of its tiles
lie in wider masks) are honoured by a simple sequential deal: each hand is split into groups of
tiles by when they joined it (:func:`_slot_groups`), the most constrained groups first, each
drawing uniformly among the unseen tiles it may hold, restarting on a dead end
(``ConstraintError`` after ``max_tries``). It is not exactly uniform over
consistent deals.

A :class:`~.belief_worlds.BeliefDeal` (the hard facts plus a belief over each tile's holder, the
search players' ``belief=network``) goes through the same deal: the groups, their sizes and what
each may hold stay the same, and each group takes its tiles by successive draws weighted by the
tiles' odds of lying in that hand rather than in the boneyard (Efraimidis & Spirakis' keys), so
the belief changes which tiles fill each place and never a public fact. The first half of the
tries are weighted; should they all end in a dead end, the rest deal uniformly.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from omega_cluster.games.api import ConstraintError, RngLike, as_rng
from omega_cluster.games.mexican_train.belief_worlds import BeliefDeal
from omega_cluster.games.mexican_train.records import DealConstraints

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["MAX_TRIES", "deal_groups", "sample_world"]

MAX_TRIES = 200  # dead ends before a constrained deal gives up (the compiled deal's too)


def sample_world(
    state: MexicanTrainState,
    player: int,
    rng: RngLike,
    constraints: DealConstraints | BeliefDeal | None = None,
    *,
    max_tries: int = MAX_TRIES,
) -> MexicanTrainState:
    """A state drawn from ``player``'s information set (see the module docstring)."""
    rnd_gen = rng if type(rng) is random.Random else as_rng(rng)
    world = state.clone()
    world.chance_seed = rnd_gen.getrandbits(62)
    if world.over:
        return world
    if isinstance(constraints, BeliefDeal):
        n = world.game.num_players
        if constraints.player != player:
            raise ConstraintError(
                f"mexican_train: a belief held by player {constraints.player} cannot deal "
                f"player {player}'s world (its codes are relative to its holder)"
            )
        facts = constraints.facts or DealConstraints((0,) * n)
        _constrained_deal(world, player, rnd_gen, facts, max_tries, constraints.odds(n))
        return world
    if constraints is not None:
        _constrained_deal(world, player, rnd_gen, constraints, max_tries)
        return world
    hands = world.hands
    pool = world.boneyard
    for q, m in enumerate(hands):
        if q != player:
            while m:
                low = m & -m
                pool.append(low.bit_length() - 1)
                m ^= low
    pool.sort()  # canonical order: the same rng gives the same world in one information set
    rnd = rnd_gen.random
    for i in range(len(pool) - 1, 0, -1):  # Fisher–Yates, inlined (see deal())
        j = int(rnd() * (i + 1))
        pool[i], pool[j] = pool[j], pool[i]
    for q, m in enumerate(hands):
        if q != player:
            k = m.bit_count()
            new = 0
            for _ in range(k):
                new |= 1 << pool.pop()
            hands[q] = new
    return world


def _constrained_deal(
    world: MexicanTrainState,
    player: int,
    rnd_gen: random.Random,
    constraints: DealConstraints,
    max_tries: int,
    odds: dict[int, list[float]] | None = None,
) -> None:
    """Deal the unseen tiles to the other seats and the boneyard so that every constraint
    holds: a sequential deal, most constrained group first, retried up to ``max_tries`` times
    (with ``odds``, a belief's per seat and tile: the first half of the tries weighted)."""
    unseen, groups = deal_groups(world, player, constraints)
    others = [q for q in range(world.game.num_players) if q != player]
    mask_tiles = world.game.tiles.mask_tiles
    rnd = rnd_gen.random
    for attempt in range(max_tries):
        left = unseen
        dealt = dict.fromkeys(others, 0)
        weighted = odds is not None and 2 * attempt < max_tries
        for q, avoid, count in groups:
            allowed = list(mask_tiles(left & ~avoid))
            size = len(allowed)
            if size < count:
                break
            m = 0
            if weighted:
                assert odds is not None
                for t in _weighted_pick(allowed, count, odds[q], rnd):
                    m |= 1 << t
            else:
                for i in range(count):  # a partial Fisher–Yates: ``count`` uniform distinct tiles
                    j = i + int(rnd() * (size - i))
                    allowed[i], allowed[j] = allowed[j], allowed[i]
                    m |= 1 << allowed[i]
            dealt[q] |= m
            left &= ~m
        else:
            for q, m in dealt.items():
                world.hands[q] = m
            boneyard = list(mask_tiles(left))
            for i in range(len(boneyard) - 1, 0, -1):  # Fisher–Yates, inlined (see deal())
                j = int(rnd() * (i + 1))
                boneyard[i], boneyard[j] = boneyard[j], boneyard[i]
            world.boneyard = boneyard
            return
    raise ConstraintError(
        f"mexican_train: no deal of the {unseen.bit_count()} unseen tiles satisfies the "
        f"constraints for player {player}'s world after {max_tries} tries"
    )


def deal_groups(
    world: MexicanTrainState, player: int, constraints: DealConstraints
) -> tuple[int, list[tuple[int, int, int]]]:
    """The unseen tiles (a mask) and the ``(seat, mask to avoid, tiles)`` groups of the
    constrained deal in the order it deals them, most constrained first (fewer dead ends); the
    constraints checked first (:class:`ConstraintError` on one line). The compiled deal
    (``fast.deal``) packs the same groups."""
    _check_constraints(world, player, constraints)
    others = [q for q in range(world.game.num_players) if q != player]
    unseen = 0
    for q in others:
        unseen |= world.hands[q]
    for t in world.boneyard:
        unseen |= 1 << t
    groups = _slot_groups(world, others, constraints)
    groups.sort(key=lambda g: (unseen & ~g[1]).bit_count() - g[2])
    return unseen, groups


def _weighted_pick(
    allowed: list[int], count: int, odds: list[float], rnd: Callable[[], float]
) -> list[int]:
    """``count`` distinct tiles of ``allowed`` by successive draws, each tile's chance
    proportional to ``odds[tile]``: the ``count`` smallest exponential keys ``E / odds``."""
    log = math.log
    keys = [(-log(1.0 - rnd()) / odds[t], t) for t in allowed]
    return [t for _, t in heapq.nsmallest(count, keys)]


def _check_constraints(world: MexicanTrainState, player: int, constraints: DealConstraints) -> None:
    """Refuse constraints of the wrong shape, or that forbid ``player`` a tile they hold."""
    n = world.game.num_players
    if not isinstance(constraints, DealConstraints) or len(constraints.forbidden) != n:
        raise ConstraintError(
            f"mexican_train: constraints must be a DealConstraints with {n} masks "
            f"(one per seat), got {constraints!r}"
        )
    forbidden = constraints.forbidden
    if constraints.limits and len(constraints.limits) != n:
        raise ConstraintError(
            f"mexican_train: constraints.limits must hold one tuple per seat ({n}), got "
            f"{len(constraints.limits)}"
        )
    if forbidden[player] & world.hands[player]:
        raise ConstraintError(
            f"mexican_train: constraints forbid player {player} tiles they hold: "
            f"{world.game.tiles.mask_tiles(forbidden[player] & world.hands[player])}"
        )


def _slot_groups(
    world: MexicanTrainState, others: list[int], constraints: DealConstraints
) -> list[tuple[int, int, int]]:
    """``(seat, mask to avoid, tiles)`` groups that fill every other hand.

    A seat's hand without ``limits`` is one group avoiding ``forbidden``. With limits
    ``(m1, k1), (m2, k2), ...`` (nested, ``k1 > k2 > ...``) the hand is dealt as its history
    made it: ``size - k1`` tiles held since before the first of those draws avoid ``m1``,
    ``k1 - k2`` drawn between avoid ``m2``, ..., the ``k_last`` latest avoid ``forbidden`` only
    (each drawn tile uniform among what the later statements allow); when fewer tiles are left
    than draws, the latest draws are kept. Every such hand meets each limit.
    """
    forbidden = constraints.forbidden
    limits = constraints.limits or ((),) * len(forbidden)
    groups = []
    for q in others:
        size = world.hands[q].bit_count()
        facts = limits[q]
        if not facts:
            groups.append((q, forbidden[q], size))
            continue
        layers = []  # (avoid, tiles), least constrained (latest draws) first
        avoid, later = forbidden[q], 0
        for mask, at_most in reversed(facts):
            layers.append((avoid, at_most - later))
            avoid, later = forbidden[q] | mask, at_most
        layers.append((avoid, size))  # the rest: held since the deal (or an older draw)
        for avoid, count in layers:
            take = min(count, size)
            if take > 0:
                groups.append((q, avoid, take))
            size -= take
    return groups
