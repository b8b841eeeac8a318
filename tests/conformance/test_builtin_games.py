"""Every built-in game passes the public conformance suite, by random and by hypothesis-driven play,
and every built-in game's compiled kernels (``fast_search``) equal its rules (``check_kernels``).

``check_game`` plays seeded random games; the hypothesis tests draw the choice sequence (and seed)
themselves, so hypothesis searches for a trajectory that breaks a contract property — tile
conservation and the other game-specific invariants live in each game's own property tests.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from omega_cluster.games import make_game
from omega_cluster.games.conformance import check_game, check_kernels, check_trajectory

# (registry name, parameters, playouts, sample_every): sampled worlds are played to the end, so long
# games (a Mexican Train campaign) sample less often.
CASES: list[tuple[str, dict[str, Any], int, int]] = [
    ("mexican_train", {"players": 2, "rounds": 1}, 12, 3),
    ("mexican_train", {"players": 4, "rounds": 1}, 8, 4),
    ("mexican_train", {"players": 8, "rounds": 1}, 4, 6),
    ("mexican_train", {"players": 3, "rounds": 2, "double_set": 9}, 6, 5),
    ("mexican_train", {"players": 4, "rounds": 2, "objective": "go_out"}, 3, 8),
    ("mexican_train", {"players": 2, "rounds": 1, "strict_doubles": False}, 6, 4),
    ("mexican_train", {"players": 3, "rounds": 1, "draw_until_playable": True}, 6, 4),
    ("mexican_train", {"players": 2, "rounds": 1, "first_turn_chain": True}, 6, 4),
    ("mexican_train", {"players": 2, "rounds": 1, "must_play": False}, 6, 4),
    ("mexican_train", {"players": 2, "double_set": 9}, 2, 25),
    ("goofspiel", {"num_cards": 5}, 30, 2),
    ("goofspiel", {"num_cards": 6, "imp_info": True}, 30, 2),
    (
        "goofspiel",
        {"num_cards": 5, "players": 3, "imp_info": True, "points_order": "descending"},
        20,
        2,
    ),
    ("goofspiel", {"num_cards": 13}, 5, 4),
    ("kuhn_poker", {}, 50, 1),
    ("kuhn_poker", {"players": 3}, 50, 1),
    ("leduc_poker", {}, 50, 1),
    ("openspiel:tic_tac_toe", {}, 10, 1),
    ("openspiel:leduc_poker", {}, 20, 2),
    ("openspiel:goofspiel", {"num_cards": 4}, 10, 1),
]


def _id(case: tuple[str, dict[str, Any], int, int]) -> str:
    name, params = case[0], case[1]
    return name + "".join(f"-{k}={v}" for k, v in params.items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_check_game(case: tuple[str, dict[str, Any], int, int]) -> None:
    name, params, playouts, sample_every = case
    game = make_game(name, **params)
    report = check_game(game, playouts=playouts, seed=11, sample_every=sample_every)
    assert report.playouts == playouts and report.decisions > 0
    if game.spec.hidden_information:
        assert report.sampled_worlds > 0 and report.worlds_differing > 0


KERNEL_CASES: list[tuple[str, dict[str, Any], int]] = [  # (name, parameters, playouts)
    ("kuhn_poker", {}, 40),
    ("kuhn_poker", {"players": 3}, 40),
    ("leduc_poker", {}, 40),
    ("mexican_train", {"players": 2, "rounds": 1}, 2),
]


@pytest.mark.parametrize("case", KERNEL_CASES, ids=[_id((*c, 0)) for c in KERNEL_CASES])
def test_check_kernels(case: tuple[str, dict[str, Any], int]) -> None:
    """The protocol a user's game implements (docs/kernels.md) is the built-in games' own."""
    name, params, playouts = case
    report = check_kernels(make_game(name, **params), playouts=playouts, seed=5)
    assert report.playouts == playouts and report.worlds > 0 and report.rollouts > 0


HYPOTHESIS_CASES = [
    ("mexican_train", {"players": 3, "rounds": 1}),
    ("goofspiel", {"num_cards": 5, "imp_info": True}),
    ("kuhn_poker", {"players": 3}),
    ("leduc_poker", {}),
]


@pytest.mark.parametrize(("name", "params"), HYPOTHESIS_CASES, ids=[c[0] for c in HYPOTHESIS_CASES])
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**31 - 1), choices=st.lists(st.integers(0, 2**32 - 1), max_size=80))
def test_contract_holds_on_hypothesis_trajectories(
    name: str, params: dict[str, Any], seed: int, choices: list[int]
) -> None:
    game = make_game(name, **params)
    final = check_trajectory(game, seed, choices, sample_every=6)
    assert final.is_terminal()
