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
from typing import Any

import numpy as np
import pytest
from fast_helpers import ExactNet, same_result

from omega_cluster.games.api import Game, State
from omega_cluster.games.player import RandomPlayer
from omega_cluster.players.registry import make_player
from omega_cluster.search import BlendEvaluator, FunctionEvaluator, RolloutEvaluator
from omega_cluster.search.fast import FastLeaf, SplitMixRandom, fast_path
from omega_cluster.search.fast.driver import run_batched
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig

FAST_ROLLOUT = RolloutEvaluator(RandomPlayer())
PYTHON_ROLLOUT = RolloutEvaluator(RandomPlayer(), use_fast_playout=False)
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


@pytest.mark.parametrize(("selection", "simulations"), [("uct", 1), ("uct", 300), ("puct", 200)])
def test_random_rollout_search_equals_the_python_search(
    game: Game, selection: str, simulations: int
) -> None:
    config = ISMCTSConfig(simulations=simulations, selection=selection, c_uct=2.0)
    fast, python = ISMCTS(game, FAST_ROLLOUT, config), ISMCTS(game, PYTHON_ROLLOUT, config)
    assert fast.fast is not None and python.fast is None
    for state in _positions(game):
        player = state.current_players[0]
        for seed in range(3):
            a, b = SplitMixRandom(seed), SplitMixRandom(seed)
            same_result(fast.search(state, player, a), python.search(state, player, b))
            assert a.state == b.state  # the fast path hands the stream back where it stopped


def _net(game: Game) -> ExactNet:
    from blind_war import BlindWarEncoder

    return ExactNet(game, BlindWarEncoder(game))


def _batched(game: Game, net: ExactNet, states: list[State], seeds: list[int],
             config: ISMCTSConfig, leaf: FastLeaf) -> Any:  # fmt: skip
    fast, why = fast_path(game, config, leaf, encoder=net.encoder)
    assert fast is not None and fast.encode is not None, why
    roots = np.stack([fast.pack(s) for s in states])
    players = np.array([s.current_players[0] for s in states])
    budgets = np.full(len(states), config.simulations)
    return run_batched(fast, roots, players, budgets, np.array(seeds, np.uint64), config, leaf,
                       net.forward)  # fmt: skip


@pytest.mark.parametrize(
    ("selection", "dirichlet", "leaf"),
    [("puct", 0.0, "network"), ("puct", 0.25, "network"), ("uct", 0.0, "network"),
     ("puct", 0.0, "network+random_rollout")],
)  # fmt: skip
def test_network_leaf_equals_the_python_search(
    game: Game, selection: str, dirichlet: float, leaf: str
) -> None:
    net = _net(game)
    config = ISMCTSConfig(simulations=120, selection=selection, dirichlet_fraction=dirichlet)
    fast_leaf = FastLeaf(leaf, network_value_weight=0.75)
    evaluator: Any = FunctionEvaluator(net.evaluate)
    if fast_leaf.rollout is not None:
        evaluator = BlendEvaluator(evaluator, PYTHON_ROLLOUT, weight_a=0.75, weight_b=0.25)
    python = ISMCTS(game, evaluator, config)
    for state in _positions(game)[:3]:
        player = state.current_players[0]
        for seed in range(2):
            expected = python.search(state, player, SplitMixRandom(seed))
            got = _batched(game, net, [state], [seed], config, fast_leaf)
            n = got.n_legal[0]
            assert tuple(got.legal[0, :n]) == expected.legal
            assert tuple(got.visits[0, :n]) == expected.visits
            assert tuple(got.root_value[0]) == pytest.approx(expected.root_value, abs=1e-12)
            means = tuple(got.means[0, :n])
            assert means == pytest.approx(expected.action_values, abs=1e-12, nan_ok=True)
            assert got.leaves[0] == expected.diagnostics.leaf_evaluations == got.rows
            assert got.tree_nodes[0] == expected.diagnostics.tree_nodes


def test_batched_searches_equal_each_alone_one_forward_per_batch(game: Game) -> None:
    net = _net(game)
    config = ISMCTSConfig(simulations=60, selection="puct", dirichlet_fraction=0.25)
    leaf = FastLeaf("network")
    states = _positions(game) * 2
    seeds = list(range(len(states)))
    together = _batched(game, net, states, seeds, config, leaf)
    assert together.forward_calls == len(net.calls)  # one call per batch
    assert net.calls[0] == len(states)  # every search's root in the first batch
    assert sum(net.calls) == together.rows == together.leaves.sum()
    for k, (state, seed) in enumerate(zip(states, seeds, strict=True)):
        alone = _batched(game, net, [state], [seed], config, leaf)
        for field in ("visits", "means", "root_value", "prior", "leaves", "histogram"):
            a, b = getattr(together, field)[k], getattr(alone, field)[0]
            assert np.array_equal(a, b, equal_nan=True), field
        assert together.rng_states[k] == alone.rng_states[0]
