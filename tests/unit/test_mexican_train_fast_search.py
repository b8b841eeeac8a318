"""Mexican Train on the fast search path gives the Python search's results: the same visits,
values, chosen move and tree, when both draw from one splitmix64 stream, for random rollouts
(UCT, PUCT), Commander rollouts, a deterministic network leaf (PUCT with and without Dirichlet
noise), the network + Commander blend the default run uses and the public deductions; self-play takes the compiled
path for the default run's leaf and writes the records the Python loop writes."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from fast_helpers import ExactNet, same_result

from omega_cluster.games import make_game
from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train.inference import deal_constraints
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.player import RandomPlayer
from omega_cluster.model import encoder_for
from omega_cluster.search import BlendEvaluator, RolloutEvaluator
from omega_cluster.search.fast import SplitMixRandom
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig
from omega_cluster.train import SelfPlay, SelfPlayConfig


def _positions(game: Game, count: int, seed: int, moves: int = 3) -> list[State]:
    """Positions ``moves`` to ``moves + 6`` random moves into a round, each with a real choice."""
    rng = random.Random(seed)
    out: list[State] = []
    g = 0
    while len(out) < count:
        s = game.new_initial_state(seed + g)
        g += 1
        for _ in range(moves + g % 7):
            if s.is_terminal():
                break
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.random() * len(legal))])
        if not s.is_terminal() and len(s.legal_actions()) > 1:
            out.append(s)
    return out


@pytest.fixture(scope="module", params=[2, 4])
def game(request: pytest.FixtureRequest) -> Game:
    return make_game("mexican_train", players=request.param, rounds=1)


def Net(game: Game) -> ExactNet:
    return ExactNet(game, encoder_for(game), scale=0.05)


@pytest.mark.parametrize(("selection", "simulations"), [("uct", 200), ("puct", 120)])
def test_random_rollouts_search_as_the_python_search(
    game: Game, selection: str, simulations: int
) -> None:
    config = ISMCTSConfig(simulations=simulations, selection=selection)
    evaluator = RolloutEvaluator(RandomPlayer())
    fast, python = ISMCTS(game, evaluator, config), ISMCTS(game, evaluator, config, fast=False)
    assert fast.fast is not None and python.fast is None, fast.fast_reason
    for state in _positions(game, 4, seed=game.num_players):
        player = state.current_players[0]
        a, b = SplitMixRandom(7), SplitMixRandom(7)
        same_result(fast.search(state, player, a), python.search(state, player, b))
        assert a.state == b.state


def test_commander_rollouts_search_as_the_python_search(game: Game) -> None:
    config = ISMCTSConfig(simulations=60, selection="uct")
    evaluator = RolloutEvaluator(Commander(game))
    fast, python = ISMCTS(game, evaluator, config), ISMCTS(game, evaluator, config, fast=False)
    assert fast.fast is not None, fast.fast_reason
    for state in _positions(game, 3, seed=10 + game.num_players):
        player = state.current_players[0]
        same_result(fast.search(state, player, SplitMixRandom(3)),
              python.search(state, player, SplitMixRandom(3)))  # fmt: skip


@pytest.mark.parametrize(
    ("leaf", "dirichlet"), [("network", 0.0), ("network", 0.25), ("network+commander", 0.0)]
)
def test_network_leaf_searches_as_the_python_search(
    game: Game, leaf: str, dirichlet: float
) -> None:
    net = Net(game)
    evaluator: Any = net
    if leaf != "network":  # the default run's leaf: the prior and a quarter of the value
        evaluator = BlendEvaluator(net, RolloutEvaluator(Commander(game)), weight_a=0.25,
                                   weight_b=0.75)  # fmt: skip
    config = ISMCTSConfig(simulations=64, selection="puct", dirichlet_fraction=dirichlet)
    fast, python = ISMCTS(game, evaluator, config), ISMCTS(game, evaluator, config, fast=False)
    assert fast.fast is not None, fast.fast_reason
    for state in _positions(game, 3, seed=20 + game.num_players):
        player = state.current_players[0]
        same_result(fast.search(state, player, SplitMixRandom(11)),
              python.search(state, player, SplitMixRandom(11)))  # fmt: skip
    assert net.calls and max(net.calls) == 1  # one search alone: one leaf per forward


def test_deductions_search_as_the_python_search(game: Game) -> None:
    """``deduce=true`` (the game's own ``world_constraints``) runs compiled, its worlds dealt
    under the bans and limits the round has proved: the Python search's result, position by
    position, at positions where an opponent has drawn or passed."""
    config = ISMCTSConfig(simulations=80, selection="uct", world_constraints=deal_constraints)
    evaluator = RolloutEvaluator(Commander(game))
    fast, python = ISMCTS(game, evaluator, config), ISMCTS(game, evaluator, config, fast=False)
    assert fast.fast is not None, fast.fast_reason
    checked = 0
    for state in _positions(game, 40, seed=60 + game.num_players, moves=24):
        player = state.current_players[0]
        facts = deal_constraints(state, player)
        if facts is None or not any(facts.forbidden):
            continue
        a, b = SplitMixRandom(5), SplitMixRandom(5)
        same_result(fast.search(state, player, a), python.search(state, player, b))
        assert a.state == b.state
        checked += 1
        if checked == 4:
            break
    assert checked == 4
    other = ISMCTSConfig(simulations=8, world_constraints=lambda s, p: deal_constraints(s, p))
    slow = ISMCTS(game, evaluator, other)
    assert slow.fast is None and "world_constraints" in slow.fast_reason


def test_a_commander_with_its_own_weights_rolls_out_with_them(game: Game) -> None:
    """The compiled rollout plays the rollout player's weights, not the default Commander's."""
    config = ISMCTSConfig(simulations=40, selection="uct")
    own = Commander(game, weights={"draw": 3.0, "goes_out": 10.0, "cover_double": -5.0})
    fast = ISMCTS(game, RolloutEvaluator(own), config)
    python = ISMCTS(game, RolloutEvaluator(own), config, fast=False)
    state = _positions(game, 1, seed=40)[0]
    player = state.current_players[0]
    same_result(fast.search(state, player, SplitMixRandom(1)),
          python.search(state, player, SplitMixRandom(1)))  # fmt: skip


def test_selfplay_takes_the_compiled_path_and_records_as_the_python_loop() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    net = Net(game)
    evaluator = BlendEvaluator(net, RolloutEvaluator(Commander(game)), weight_a=0.0, weight_b=1.0)
    config = SelfPlayConfig(games=6, concurrent_games=6, search=ISMCTSConfig(simulations=24,
                            selection="puct"), fast_simulations=8, full_search_probability=0.5,
                            seed=4)  # fmt: skip
    fast = SelfPlay(game, net.encoder, config, evaluator=evaluator)
    assert fast.fast is not None, fast.fast_reason
    records = list(fast.play())
    python = SelfPlay(game, net.encoder, config, evaluator=evaluator, fast=False)
    assert python.fast is None
    expected = list(python.play())
    assert len(records) == len(expected) > 0
    assert max(net.calls) > 1  # the games' leaves share forward passes
    for a, b in zip(records, expected, strict=True):
        assert a.game_id == b.game_id and a.history == b.history and a.player == b.player
        assert np.array_equal(a.observation, b.observation)
        assert np.array_equal(a.action_features, b.action_features)
        assert a.policy_weight == b.policy_weight and a.action == b.action
        assert np.array_equal(a.policy_target, b.policy_target)
        assert np.allclose(a.root_value, b.root_value, atol=1e-6)
