"""Smooth UCT (selection="smooth_uct"): dispatch, the compiled path's refusal, its mixing, and
the whole-game search whose average policy grows less exploitable with simulations."""

from __future__ import annotations

import random

import pytest

from omega_cluster.eval.exploitability import exploitability
from omega_cluster.games import make_game
from omega_cluster.players.registry import make_player
from omega_cluster.players.search import build_leaf_evaluator
from omega_cluster.search import ismcts
from omega_cluster.search._ismcts_bandit import smooth_chooser
from omega_cluster.search.game_tree import game_tree_policy


def test_smooth_uct_runs_the_python_loop_with_a_mixed_final_policy():
    game = make_game("kuhn_poker")
    player = make_player("ismcts:random:200:selection=smooth_uct", game)
    assert player.search.fast is None
    assert "smooth_uct" in player.search.fast_reason
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(2)  # player 0 holds the jack
    result = player.search.search(state, 0, random.Random(1))
    assert sum(result.visits) == 200
    assert result.policy == pytest.approx([n / 200 for n in result.visits])
    assert result.action in result.legal


def test_unknown_selection_is_refused():
    with pytest.raises(ValueError, match="smooth_uct"):
        ismcts.ISMCTSConfig(selection="smooth")


class _Node:
    def __init__(self, visits):
        self.visits, self.fresh = visits, None


def test_smooth_chooser_samples_the_average_policy():
    """Late in a node's life (N large, η_k at its floor 0.1) 90 % of the picks are draws from the
    visit counts: with UCT always answering 0, candidate 1 gets ~0.9 · 3/4 of the picks."""
    rng = random.Random(7)
    choose = smooth_chooser(lambda node, n: 0, rng.random)
    node = _Node([10_000, 30_000])
    picks = [choose(node, 10**8) for _ in range(4000)]
    share = sum(picks) / len(picks)
    assert share == pytest.approx(0.9 * 0.75, abs=0.03)
    fresh = _Node([0, 0])
    fresh.fresh = [1]
    assert choose(fresh, 0) == 0  # an untried candidate: the UCT rule's turn


def test_game_tree_smooth_uct_exploitability_falls_on_kuhn():
    game = make_game("kuhn_poker")
    leaf = build_leaf_evaluator(game, "random")
    values = [
        exploitability(game, game_tree_policy(game, leaf, simulations=n, selection="smooth_uct"))
        for n in (100, 3000, 30000)
    ]
    assert values[0] > values[1] > values[2]
    assert values[2] < 0.03  # uniform play: 0.458
    with pytest.raises(ValueError, match="uct or smooth_uct"):
        game_tree_policy(game, leaf, simulations=10, selection="puct")
