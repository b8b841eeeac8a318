"""The compiled SM-MCTS wired in: SMMCTS takes it on Goofspiel (and says why not elsewhere), and
self-play batches every acting player's search of a round, across games, into one call whose
records have the Python loop's shapes and fields."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pytest
from model_helpers import small_net

from omega_cluster.games.goofspiel import GoofspielGame
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import NetworkEvaluator, encoder_for
from omega_cluster.search.batched import CompiledSMSearches
from omega_cluster.search.evaluators import BlendEvaluator, FunctionEvaluator, RolloutEvaluator
from omega_cluster.search.fast.game import FastLeaf
from omega_cluster.search.fast.rng import SplitMixRandom
from omega_cluster.search.fast.smm_driver import run_batched_sm
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.search.smmcts import SMMCTS, SMMCTSConfig
from omega_cluster.train import SelfPlay, SelfPlayConfig

pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")


def _bidding(game: GoofspielGame):
    state = game.new_initial_state()
    state.apply_action(game.num_cards - 1)
    return state


def test_smmcts_takes_the_compiled_search_on_goofspiel() -> None:
    game = GoofspielGame(num_cards=5, imp_info=True)
    rollout = RolloutEvaluator(RandomPlayer())
    search = SMMCTS(game, rollout, simulations=60, temperature=0.0)
    assert search.fast is not None and search.fast_reason == ""
    state = _bidding(game)
    result = search.search(state, 1, random.Random(3))
    assert result.legal == tuple(state.legal_actions(1)) and result.player == 1
    assert sum(result.visits) == 60 and result.diagnostics.simulations == 60
    assert abs(sum(result.policy) - 1.0) < 1e-9
    assert result.action == result.legal[int(np.argmax(result.policy))]  # T = 0: the argmax
    again = search.search(state, 1, random.Random(3))
    assert again == dataclasses.replace(result, diagnostics=again.diagnostics)  # seeded: same
    python = SMMCTS(game, rollout, simulations=60, fast=False)
    assert python.fast is None and python.fast_reason == "fast=False: the Python loop"
    # the Python loop's generator protocol holds on the compiled path too (no leaf leaves it)
    steps = search.steps(state, 0, SplitMixRandom(1))
    with pytest.raises(StopIteration) as done:
        next(steps)
    assert done.value.value.player == 0 and sum(done.value.value.visits) == 60


def test_smmcts_names_why_it_keeps_the_python_loop() -> None:
    game = GoofspielGame(num_cards=5)
    rollout = RolloutEvaluator(RandomPlayer())
    fn = FunctionEvaluator(lambda leaves: [])
    three = GoofspielGame(num_cards=5, players=3, imp_info=True)
    cases = [
        (SMMCTS(game, rollout, time_limit_s=1.0), "time_limit_s=1.0 is not compiled"),
        (SMMCTS(game, fn), "has no compiled counterpart"),
        (SMMCTS(game, RolloutEvaluator(RandomPlayer(), rollouts=2)), "2 rollouts per leaf"),
        (SMMCTS(three, rollout), "imp_info is compiled for two players"),
        (SMMCTS(make_game("kuhn_poker"), rollout), "no compiled SM-MCTS"),
    ]
    for search, why in cases:
        assert search.fast is None and why in search.fast_reason, search.fast_reason


class _Spy:
    """The network's forward, counting the rows of every call."""

    def __init__(self, forward) -> None:
        self.forward, self.rows = forward, []

    def __call__(self, obs, feats, mask):
        self.rows.append(len(obs))
        return self.forward(obs, feats, mask)


@pytest.mark.parametrize("blend", [False, True])
def test_selfplay_batches_every_search_of_a_round_and_records_as_the_python_loop(blend) -> None:
    game = make_game("goofspiel", num_cards=5, imp_info=True)
    encoder = encoder_for(game)
    net = NetworkEvaluator(small_net(game, encoder), encoder, cache_size=0, threads=1)
    evaluator = (
        BlendEvaluator(net, RolloutEvaluator(RandomPlayer()), weight_a=0.5, weight_b=0.5)
        if blend
        else net
    )
    config = SelfPlayConfig(games=6, concurrent_games=4, search=ISMCTSConfig(simulations=24),
                            fast_simulations=6, full_search_probability=0.5, seed=2)  # fmt: skip
    fast = SelfPlay(game, encoder, config, evaluator=evaluator)
    assert isinstance(fast.fast, CompiledSMSearches), fast.fast_reason
    spy = _Spy(fast.fast.plan.forward)
    fast.fast.plan = dataclasses.replace(fast.fast.plan, forward=spy)
    records = list(fast.play())
    python = SelfPlay(game, encoder, config, evaluator=evaluator, fast=False)
    assert python.fast is None
    expected = list(python.play())
    assert len(records) == len(expected) == 6 * 4 * 2  # 4 contested bids (the last is forced)
    assert max(spy.rows) > 2  # leaves of several games (2 searches a game) in one forward pass
    assert fast.stats.evaluator_calls == len(spy.rows) and fast.stats.leaves == sum(spy.rows)
    full = 0
    for a, b in zip(records, expected, strict=True):
        assert a.game_id == b.game_id and a.player == b.player and a.game == b.game
        assert a.observation.shape == b.observation.shape and a.observation.dtype == np.float32
        assert a.action_features.shape[1:] == b.action_features.shape[1:]
        assert len(a.legal_actions) == len(a.policy_target) == len(a.action_features)
        assert a.policy_target.dtype == b.policy_target.dtype == np.float32
        assert abs(float(a.policy_target.sum()) - 1.0) < 1e-5 and a.action in a.legal_actions
        assert a.root_value.shape == b.root_value.shape == (2,)
        assert a.returns.shape == (2,) and a.policy_weight in (0.0, 1.0)
        replayed = game.replay(a.game_seed, a.history)
        assert list(replayed.legal_actions(a.player)) == list(a.legal_actions)
        assert np.array_equal(encoder.encode_observation(replayed, a.player), a.observation)
        full += a.policy_weight == 1.0
    assert 0 < full < len(records)  # playout caps: some full searches, some cheap
    assert fast.stats.simulations == 24 * full + 6 * (len(records) - full)  # the budgets


def test_the_compiled_search_is_a_per_game_copy_numba_caches_on_disk() -> None:
    from omega_cluster.games.goofspiel.fast import fast_smm_search
    from omega_cluster.search.fast import smm
    from omega_cluster.search.fast.smm_specialize import smm_for

    fast, _ = fast_smm_search(GoofspielGame(num_cards=5))
    module, G = smm_for(fast)
    assert module is not smm and G == () and smm_for(fast)[0] is module  # built once
    source = Path(module.__file__).read_text()
    assert "G[" not in source and "import status as _g_status" in source
    state = _bidding(GoofspielGame(num_cards=5))
    one = np.ones(1, np.int64)
    run_batched_sm(fast, fast.pack(state)[None], 0 * one, one, one.astype(np.uint64),
                   SMMCTSConfig(), FastLeaf("random_rollout"))  # fmt: skip
    cached = Path(module.__file__).parent / "__pycache__"
    stem = Path(module.__file__).stem
    assert any(f.name.startswith(f"{stem}.advance") for f in cached.glob("*.nbi"))  # on disk
