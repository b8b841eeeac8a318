"""A user's game opts into the compiled search with kernels of its own: ``examples/blind_war/``'s
``fast_search`` hook (``docs/kernels.md``). Its searches run compiled and equal the Python loop's
result for result when both draw from one splitmix64 stream, as the built-in games' do
(``test_search_fast.py``): random rollouts under UCT and PUCT, a deterministic network leaf
through the compiled encoder (with and without Dirichlet noise, and blended with rollouts), K
searches batched equal to each alone with one forward pass per batch. A game without kernels
(``examples/race_to_n.py``) keeps the Python loop, which says why. The kernels themselves equal
the rules move for move in the conformance suite (``tests/conformance``, ``check_kernels``)."""

from __future__ import annotations

import random
from types import ModuleType

import pytest
from fast_helpers import (
    FAST_ROLLOUT,
    NETWORK_LEAF_CASES,
    ROLLOUT_CASES,
    ExactNet,
    check_batched_alone,
    check_network_leaf,
    check_rollout_search,
)

from omega_cluster.games.api import Game, State
from omega_cluster.players.registry import make_player
from omega_cluster.search.ismcts import ISMCTS

PARAMS = ({"players": 2}, {"players": 3, "deck": 20, "hand": 5})


@pytest.fixture(scope="module", params=PARAMS, ids=["2p", "3p-hand5"])
def game(request: pytest.FixtureRequest, blind_war: ModuleType) -> Game:
    game: Game = blind_war.BlindWarGame(**request.param)
    return game


def _positions(game: Game) -> list[State]:
    """Positions of seeded deals: the first move, mid-trick and a later trick."""
    out = []
    for seed, moves in ((1, 0), (2, 1), (3, game.num_players + 1), (4, 2)):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        for _ in range(moves):
            state.apply_action(rng.choice(state.legal_actions()))
        out.append(state)
    return out


def test_the_user_game_runs_the_compiled_search_and_a_game_without_kernels_does_not(
    game: Game, race_to_n: ModuleType
) -> None:
    search = ISMCTS(game, FAST_ROLLOUT, simulations=50)
    assert search.fast is not None and search.fast.name == "blind_war", search.fast_reason
    player = make_player("ismcts:random:50", game)  # the search player as users build it
    assert player.search.fast is not None  # type: ignore[attr-defined]
    plain = ISMCTS(race_to_n.RaceGame(), FAST_ROLLOUT, simulations=50)
    assert plain.fast is None
    assert plain.fast_reason == "race_to_n has no compiled search (plugin hook fast_search)"


@pytest.mark.parametrize(("selection", "simulations"), ROLLOUT_CASES)
def test_random_rollout_search_equals_the_python_search(
    game: Game, selection: str, simulations: int
) -> None:
    check_rollout_search(game, _positions(game), selection, simulations)


def _net(game: Game) -> ExactNet:
    from blind_war import BlindWarEncoder

    return ExactNet(game, BlindWarEncoder(game))


@pytest.mark.parametrize(("selection", "dirichlet", "leaf"), NETWORK_LEAF_CASES)
def test_network_leaf_equals_the_python_search(
    game: Game, selection: str, dirichlet: float, leaf: str
) -> None:
    check_network_leaf(game, _net(game), _positions(game)[:3], selection, dirichlet, leaf)


def test_batched_searches_equal_each_alone_one_forward_per_batch(game: Game) -> None:
    check_batched_alone(game, _net(game), _positions(game))
