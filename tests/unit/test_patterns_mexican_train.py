"""Mexican Train n-tuple windows: indices in range at every table size, deterministic, blind to
what the seat cannot see (other hands, the boneyard) and sensitive to its own hand."""

from __future__ import annotations

import random

import numpy as np
import pytest
from mexican_train_helpers import random_state

from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.ntuple import MexicanTrainPatterns
from omega_cluster.games.registry import game_plugin


def _positions(game: MexicanTrainGame, count: int, seed: int) -> list:
    rng = random.Random(seed)
    return [random_state(game, seed * 1000 + i, rng.randrange(0, 160)) for i in range(count)]


@pytest.mark.parametrize("players", [2, 3, 4, 6, 8])
def test_indices_lie_in_their_family(players: int) -> None:
    game = MexicanTrainGame(players=players, rounds=2)
    patterns = MexicanTrainPatterns(game)
    bounds = np.cumsum([0, *(f.size for f in patterns.families)])
    # window k of a position belongs to this family: 4 portfolio, the trains, the opponents, …
    family = [0, 1, 2, 3] + [4] * (players + 1) + [5] * (players - 1) + [6, 7]
    for state in _positions(game, 30, players):
        for seat in range(players):
            idx = patterns.extract(state, seat)
            assert idx.dtype == np.int64 and idx.shape == (2 * players + 6,)
            for k, i in enumerate(idx):
                assert bounds[family[k]] <= i < bounds[family[k] + 1], (k, i)


def test_double_nine_lenient_chains_and_go_out_stay_in_range() -> None:
    game = MexicanTrainGame(
        players=5,
        double_set=9,
        strict_doubles=False,
        first_turn_chain=True,
        objective="go_out",
        must_play=False,
        double_blank_value=50,
    )
    patterns = MexicanTrainPatterns(game)
    for state in _positions(game, 30, 7):
        for seat in range(5):
            idx = patterns.extract(state, seat)
            assert ((idx >= 0) & (idx < patterns.size)).all()


def test_extract_is_deterministic_and_the_layout_is_moderate() -> None:
    game = MexicanTrainGame(players=4)
    a, b = MexicanTrainPatterns(game), MexicanTrainPatterns(game)
    assert a.describe() == b.describe() and a.size < 1_000_000
    for state in _positions(game, 20, 3):
        first = a.extract(state, 1)
        a.chain.clear()  # a fresh chain cache gives the same answer
        assert np.array_equal(first, a.extract(state, 1))
        assert np.array_equal(first, b.extract(state.clone(), 1))


@pytest.mark.parametrize("players", [2, 4])
def test_other_hands_and_the_boneyard_are_never_read(players: int) -> None:
    game = MexicanTrainGame(players=players)
    patterns = MexicanTrainPatterns(game)
    rng = random.Random(11)
    changed = 0
    for state in _positions(game, 15, 20 + players):
        if state.is_terminal():
            continue
        for seat in range(players):
            mine = patterns.extract(state, seat)
            for _ in range(3):
                world = state.sample_world(seat, rng)
                changed += world.hands != state.hands
                assert np.array_equal(mine, patterns.extract(world, seat))
    assert changed > 0  # the worlds really dealt other hands


def test_the_own_hand_changes_the_indices() -> None:
    game = MexicanTrainGame(players=4)
    patterns = MexicanTrainPatterns(game)
    differs = 0
    for state in _positions(game, 15, 5):
        if state.is_terminal():
            continue
        seat = state.current
        other = (seat + 1) % 4
        swapped = state.clone()
        # swap one tile of the seat for one of another seat's: sizes and board stay the same
        mine = swapped.hands[seat] & -swapped.hands[seat]
        theirs = swapped.hands[other] & -swapped.hands[other]
        if not (mine and theirs):
            continue
        swapped.hands[seat] ^= mine | theirs
        swapped.hands[other] ^= mine | theirs
        differs += not np.array_equal(
            patterns.extract(state, seat), patterns.extract(swapped, seat)
        )
    assert differs >= 10


def test_the_plugin_builds_the_pattern_set() -> None:
    factory = game_plugin("mexican_train").hook("ntuple_patterns")
    assert factory is not None
    patterns = factory(MexicanTrainGame(players=3))
    assert isinstance(patterns, MexicanTrainPatterns)
    assert [f["name"] for f in patterns.describe()["families"]] == [
        "pips", "playable", "doubles", "chain", "end", "opponent", "table", "campaign",
    ]  # fmt: skip
