"""OpenSpiel's k-in-a-row games through the adapter search compiled: ``openspiel:connect_four``
and ``openspiel:tic_tac_toe`` get kernels from the adapter plugin's ``fast_search`` hook
(``games/openspiel/_board_kernels.py``), every other ``openspiel:`` game keeps the Python loop
and says why. The kernels equal pyspiel move for move (``check_kernels``, also on a board of
other parameters), and their searches equal the Python loop's result for result when both draw
from one splitmix64 stream: random rollouts under UCT and PUCT, the network leaf through the
compiled encoder (the adapter's encoder: pyspiel's observation tensor), K searches batched."""

from __future__ import annotations

import random

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

from omega_cluster._optional import numba_available
from omega_cluster.games import make_game
from omega_cluster.games.api import Game, State
from omega_cluster.games.conformance import check_kernels
from omega_cluster.players.registry import make_player
from omega_cluster.search.ismcts import ISMCTS

pytest.importorskip("pyspiel")
pytestmark = pytest.mark.skipif(not numba_available(), reason="numba is an optional extra")

GAMES = ("connect_four", "tic_tac_toe")


@pytest.fixture(scope="module", params=GAMES)
def game(request: pytest.FixtureRequest) -> Game:
    return make_game(f"openspiel:{request.param}")


def _positions(game: Game) -> list[State]:
    """The opening position and seeded random positions a few moves in."""
    out = []
    for seed, moves in ((1, 0), (2, 1), (3, 4), (4, 2)):
        state = game.new_initial_state()
        rng = random.Random(seed)
        for _ in range(moves):
            state.apply_action(rng.choice(state.legal_actions()))
        out.append(state)
    return out


@pytest.mark.parametrize(
    "params", [{"name": g} for g in GAMES] + [{"name": "connect_four", "rows": 5, "columns": 6,
                                               "x_in_row": 3}], ids=["c4", "ttt", "c4-5x6-3"]
)  # fmt: skip
def test_the_kernels_equal_pyspiel_move_for_move(params: dict) -> None:
    game = make_game(f"openspiel:{params.pop('name')}", **params)
    report = check_kernels(game, playouts=40)
    assert report.moves > 40 * 5 and report.encodings == report.moves


def test_these_games_search_compiled_and_another_openspiel_game_says_why(game: Game) -> None:
    search = ISMCTS(game, FAST_ROLLOUT, simulations=50)
    assert search.fast is not None and search.fast.name == game.spec.name, search.fast_reason
    player = make_player("ismcts:random:50", game)  # the search player as users build it
    assert player.search.fast is not None  # type: ignore[attr-defined]
    other = ISMCTS(make_game("openspiel:kuhn_poker"), FAST_ROLLOUT, simulations=50)
    assert other.fast is None and other.fast_reason is not None
    assert other.fast_reason.startswith("openspiel:kuhn_poker has no compiled search")
    egocentric = make_game("openspiel:connect_four", egocentric_obs_tensor=True)
    mirror = ISMCTS(egocentric, FAST_ROLLOUT, simulations=50)
    assert mirror.fast is None and "egocentric_obs_tensor" in (mirror.fast_reason or "")


@pytest.mark.parametrize(("selection", "simulations"), ROLLOUT_CASES)
def test_random_rollout_search_equals_the_python_search(
    game: Game, selection: str, simulations: int
) -> None:
    check_rollout_search(game, _positions(game), selection, simulations)


def _net(game: Game) -> ExactNet:
    from omega_cluster.games.openspiel.encoder import OpenSpielEncoder

    return ExactNet(game, OpenSpielEncoder(game))


@pytest.mark.parametrize(("selection", "dirichlet", "leaf"), NETWORK_LEAF_CASES)
def test_network_leaf_equals_the_python_search(
    game: Game, selection: str, dirichlet: float, leaf: str
) -> None:
    check_network_leaf(game, _net(game), _positions(game)[:3], selection, dirichlet, leaf)


def test_batched_searches_equal_each_alone_one_forward_per_batch(game: Game) -> None:
    check_batched_alone(game, _net(game), _positions(game))
