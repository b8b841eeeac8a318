"""Mexican Train's hand-written value: win shares that sum to 1, fewer tiles and pips rate
higher, weights by name only, and each seat's points blind to what it cannot see."""

from __future__ import annotations

import random

import pytest
from mexican_train_helpers import random_state, rig

from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.evaluation import TERMS, HandValue, HandWeights
from omega_cluster.games.registry import game_plugin


def test_shares_sum_to_one_and_a_finished_game_is_worth_its_returns() -> None:
    for players in (2, 4, 6):
        game = MexicanTrainGame(players=players, rounds=2)
        value = HandValue(game)
        for seed in range(12):
            state = random_state(game, seed, 40 * seed)
            shares = value(state)
            assert len(shares) == players and abs(sum(shares) - 1.0) < 1e-9
            assert all(0.0 < x < 1.0 for x in shares) or state.is_terminal()
            if state.is_terminal():
                assert shares == state.returns()
    game = MexicanTrainGame(players=2, rounds=1)
    state = random_state(game, 1, 10_000)
    assert state.is_terminal() and HandValue(game)(state) == state.returns()


def test_fewer_tiles_and_pips_rate_higher() -> None:
    state = rig([["1|0", "2|0"], ["12|11", "11|10", "10|9", "9|8", "8|7", "7|6", "6|5"]])
    value = HandValue(state.game)
    shares = value(state)
    assert shares[0] > 0.9 > 0.1 > shares[1]
    points = value.points(state)
    assert points[0] > points[1]
    light = rig([["1|0", "2|0", "3|0"], ["12|11", "11|10", "10|9"]])
    assert (
        HandValue(light.game).terms(light, 0)["pips"]
        < HandValue(light.game).terms(light, 1)["pips"]
    )
    assert HandValue(light.game)(light)[0] > HandValue(light.game)(light)[1]


def test_terms_are_named_and_weights_refuse_unknown_keys() -> None:
    game = MexicanTrainGame(players=3)
    state = random_state(game, 4, 30)
    terms = HandValue(game).terms(state, 1)
    assert tuple(terms) == TERMS
    assert terms["tiles"] == state.hands[1].bit_count()
    with pytest.raises(ValueError, match=r"unknown HandWeights key\(s\) 'tile'; allowed: .*tiles"):
        HandWeights.from_dict({"tile": 1.0})
    with pytest.raises(ValueError, match="scale must be > 0"):
        HandWeights(scale=0.0)
    flat = HandValue(game, {"scale": 1e9})
    assert max(flat(state)) - min(flat(state)) < 1e-6  # an infinite temperature: equal shares
    doubled = HandValue(game, {"tiles": -2.0})
    assert doubled.points(state) != HandValue(game).points(state)


def test_each_seat_points_ignore_what_it_cannot_see() -> None:
    game = MexicanTrainGame(players=4)
    value = HandValue(game)
    rng = random.Random(3)
    differs = 0
    for seed in range(10):
        state = random_state(game, seed, rng.randrange(0, 120))
        if state.is_terminal():
            continue
        for seat in range(4):
            mine = value.terms(state, seat)
            for _ in range(3):
                assert value.terms(state.sample_world(seat, rng), seat) == mine
        # its own hand does count: a tile swapped with the next seat's changes its terms
        seat, nxt = state.current, (state.current + 1) % 4
        swapped = state.clone()
        low = swapped.hands[seat] & -swapped.hands[seat]
        high = 1 << (swapped.hands[nxt].bit_length() - 1)
        swapped.hands[seat] ^= low | high
        swapped.hands[nxt] ^= low | high
        differs += value.terms(swapped, seat) != value.terms(state, seat)
    assert differs >= 7


def test_the_plugin_builds_the_hand_value() -> None:
    factory = game_plugin("mexican_train").hook("hand_value")
    assert factory is not None
    game = MexicanTrainGame(players=2)
    built = factory(game, weights={"chain": 1.0})
    assert isinstance(built, HandValue) and built.weights.chain == 1.0
