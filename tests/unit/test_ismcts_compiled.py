"""The compiled ISMCTS loop for heads-up Leduc (numba): the same rules, keys and returns as the
Python game, the same search in distribution as the Python search, no information leak, the
automatic choice between the two paths and the errors when the compiled loop is required but
cannot run. Without numba the same tests check the fallback to the Python search."""

from __future__ import annotations

import random

import pytest

from omega_cluster.games import make_game
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search._ismcts_compiled import numba_available
from omega_cluster.search.ismcts import ISMCTS

RANDOM_ROLLOUT = RolloutEvaluator(RandomPlayer())
NUMBA = numba_available()


def test_compiled_rules_match_the_python_game() -> None:
    """Random hands: the compiled state, legal actions, keys and returns equal the game's."""
    if not NUMBA:
        with pytest.raises(ValueError, match="numba is not installed"):
            ISMCTS(make_game("leduc_poker"), RANDOM_ROLLOUT, compiled=True)
        return
    import numpy as np

    from omega_cluster.search import _ismcts_leduc as kernel

    game = make_game("leduc_poker")
    rank = np.array(game._hand_rank, np.int64)
    legal, out = np.empty(3, np.int64), np.zeros(2)
    rng = random.Random(0)
    for _ in range(300):
        state = game.new_initial_state()
        compiled = kernel.encode(state)
        while not state.is_terminal():
            if state.current_players[0] >= 0:
                k = kernel.legal_actions(compiled, legal)
                assert list(legal[:k]) == state.legal_actions()
            for p in (0, 1):
                assert kernel.information_set_key(compiled, p) == state.information_set_key(p)
            action = rng.choice(state.legal_actions())
            state.apply_action(action)
            kernel.step(compiled, action, rank)
            assert (kernel.encode(state) == compiled).all()
        kernel.returns(compiled, out)
        assert tuple(out) == state.returns()


class SplitMix(random.Random):
    """``random()`` from splitmix64, the compiled loop's generator, and ``getrandbits(64)`` its
    current state: the compiled search seeded from this rng then draws the very numbers the
    Python search draws from it, so the two can be compared result for result."""

    _MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed
        super().__init__(0)

    def random(self) -> float:
        self.state = x = (self.state + 0x9E3779B97F4A7C15) & self._MASK
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & self._MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self._MASK
        return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0)

    def getrandbits(self, k: int) -> int:
        assert k == 64
        return self.state


@pytest.mark.parametrize("simulations", [1, 30, 400])
def test_compiled_search_equals_the_python_search_for_the_same_random_numbers(
    simulations: int,
) -> None:
    """Both paths draw their random numbers in the same order for the same purposes (the
    determinization, chance, untried candidates, ties, rollout moves), so fed one stream they
    build the same tree: identical visits, values and depth histograms."""
    game = make_game("leduc_poker")
    searches = [
        ISMCTS(game, RANDOM_ROLLOUT, simulations=simulations, c_uct=2.0, compiled=compiled)
        for compiled in (False, None)
    ]
    assert searches[1].runs_compiled == NUMBA
    for history in ([0, 3], [4, 1], [2, 5, 2], [4, 1, 1, 1, 2], [1, 4, 2, 2, 1, 3]):
        state = game.new_initial_state()
        for action in history:
            state.apply_action(action)
        player = state.current_players[0]
        for seed in range(4):
            python, compiled = (s.search(state, player, SplitMix(seed)) for s in searches)
            assert (python.visits, python.action, python.policy) == (
                compiled.visits, compiled.action, compiled.policy,
            )  # fmt: skip
            assert python.root_value == pytest.approx(compiled.root_value, abs=1e-9)
            assert python.action_values == pytest.approx(
                compiled.action_values, abs=1e-9, nan_ok=True
            )
            p, c = python.diagnostics, compiled.diagnostics
            assert (p.depth_histogram, p.leaf_evaluations, p.tree_nodes) == (
                c.depth_histogram, c.leaf_evaluations, c.tree_nodes,
            )  # fmt: skip


def test_compiled_search_is_a_function_of_the_seed_and_the_view() -> None:
    """Same seed, same information set (P1's card differs): identical compiled results."""
    game = make_game("leduc_poker")
    search = ISMCTS(game, RANDOM_ROLLOUT, simulations=300)
    results = []
    for other in (1, 3, 5, 1):
        state = game.new_initial_state()
        for action in (0, other, 2, 1, 2):  # J♠ raised, P1 called, board Q♠
            state.apply_action(action)
        results.append(search.search(state, 0, random.Random(5)))
    first = results[0]
    for r in results[1:]:
        assert (r.visits, r.action, r.root_value) == (first.visits, first.action, first.root_value)
        assert r.diagnostics.depth_histogram == first.diagnostics.depth_histogram
    other_seed = search.search(state, 0, random.Random(6))
    assert sum(other_seed.visits) == 300


def test_the_python_path_is_kept_where_the_kernel_does_not_apply() -> None:
    leduc = make_game("leduc_poker")
    assert not ISMCTS(leduc, RANDOM_ROLLOUT, compiled=False).runs_compiled
    for other in (
        ISMCTS(leduc, RANDOM_ROLLOUT, reuse_tree=True),
        ISMCTS(leduc, RANDOM_ROLLOUT, pw_base=1.0),
        ISMCTS(leduc, RolloutEvaluator(RandomPlayer(), rollouts=2)),
        ISMCTS(make_game("leduc_poker", players=3), RANDOM_ROLLOUT),
        ISMCTS(make_game("kuhn_poker"), RANDOM_ROLLOUT),
    ):
        assert not other.runs_compiled
    with pytest.raises(ValueError, match="compiled=True, but .*tree reuse"):
        ISMCTS(leduc, RANDOM_ROLLOUT, reuse_tree=True, compiled=True)
    with pytest.raises(ValueError, match="compiled=True, but .*(no compiled kernel|numba)"):
        mexican = make_game("mexican_train", players=2, rounds=1)
        ISMCTS(mexican, RolloutEvaluator(Commander(mexican)), compiled=True)
    with pytest.raises(ValueError, match="compiled must be None"):
        ISMCTS(leduc, RANDOM_ROLLOUT, compiled="yes")
