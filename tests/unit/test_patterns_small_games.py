"""Goofspiel and Leduc n-tuple windows: indices in range, deterministic, blind to the other
seats' hidden cards or bids (every sampled world gives the same indices) and moved by the seat's
own cards."""

from __future__ import annotations

import random

import numpy as np
import pytest

from omega_cluster.games import make_game
from omega_cluster.games.api import State
from omega_cluster.games.goofspiel.ntuple import GoofspielPatterns
from omega_cluster.games.leduc_poker.ntuple import LeducPatterns
from omega_cluster.games.patterns import PatternSet
from omega_cluster.games.registry import game_plugin


def _random_step(state: State, rng: random.Random) -> None:
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
    elif state.is_simultaneous_node():
        state.apply_joint_action(
            [rng.choice(state.legal_actions(p)) for p in state.current_players]
        )
    else:
        state.apply_action(rng.choice(state.legal_actions()))


def _positions(game, count: int, seed: int) -> list[State]:
    """Decision nodes and terminal states from random play."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        state = game.new_initial_state()
        for _ in range(rng.randrange(0, 40)):
            if state.is_terminal():
                break
            _random_step(state, rng)
        while state.is_chance_node():
            _random_step(state, rng)
        out.append(state)
    return out


def _in_range(patterns: PatternSet, idx: np.ndarray) -> None:
    bounds = np.cumsum([0, *(f.size for f in patterns.families)])
    assert idx.dtype == np.int64 and ((idx >= 0) & (idx < patterns.size)).all()
    assert len(np.unique(np.searchsorted(bounds, idx, side="right"))) == len(patterns.families)


CASES = [
    ("goofspiel", {"players": 2, "num_cards": 6}),
    ("goofspiel", {"players": 3, "num_cards": 5, "imp_info": True, "points_order": "descending"}),
    ("goofspiel", {"players": 4, "num_cards": 13, "num_turns": 7, "returns_type": "total_points"}),
    ("leduc_poker", {"players": 2}),
    ("leduc_poker", {"players": 3, "suit_isomorphism": True}),
    ("leduc_poker", {"players": 10}),
]


@pytest.mark.parametrize(("name", "params"), CASES)
def test_indices_in_range_and_deterministic(name: str, params: dict) -> None:
    game = make_game(name, **params)
    patterns = game_plugin(name).hook("ntuple_patterns")(game)
    assert isinstance(patterns, GoofspielPatterns | LeducPatterns)
    again = type(patterns)(game)
    for state in _positions(game, 40, 1):
        for seat in range(game.num_players):
            idx = patterns.extract(state, seat)
            _in_range(patterns, idx)
            assert np.array_equal(idx, again.extract(state.clone(), seat))


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("goofspiel", {"players": 3, "num_cards": 6, "imp_info": True}),
        ("leduc_poker", {"players": 3}),
    ],
)
def test_sampled_worlds_give_the_same_indices(name: str, params: dict) -> None:
    game = make_game(name, **params)
    patterns = game_plugin(name).hook("ntuple_patterns")(game)
    rng = random.Random(5)
    other_worlds = 0
    for state in _positions(game, 30, 2):
        if state.is_terminal():
            continue
        for seat in range(game.num_players):
            mine = patterns.extract(state, seat)
            for _ in range(3):
                world = state.sample_world(seat, rng)
                other_worlds += (
                    world.hidden_state(seat).tolist() != state.hidden_state(seat).tolist()
                )
                assert np.array_equal(mine, patterns.extract(world, seat))
    assert other_worlds > 0  # the worlds really changed the hidden cards


def test_the_own_cards_change_the_indices() -> None:
    leduc = make_game("leduc_poker", players=2)
    lp = LeducPatterns(leduc)
    state = leduc.new_initial_state()
    state.apply_action(0)  # seat 0 gets the lowest card (rank 0)
    state.apply_action(5)  # seat 1 gets rank 2
    high = state.clone()
    high._private = (4, 5)  # seat 0 holds rank 2 instead
    assert not np.array_equal(lp.extract(state, 0), lp.extract(high, 0))
    assert np.array_equal(lp.extract(state, 1), lp.extract(high, 1))
    goof = make_game("goofspiel", players=2, num_cards=5, points_order="ascending")
    gp = GoofspielPatterns(goof)
    state = goof.new_initial_state()
    state.apply_joint_action([4, 0])
    other = state.clone()
    other._hands = [state._hands[0] ^ 0b11, state._hands[1]]  # another own hand
    assert not np.array_equal(gp.extract(state, 0), gp.extract(other, 0))
    assert np.array_equal(gp.extract(state, 1), gp.extract(other, 1))
