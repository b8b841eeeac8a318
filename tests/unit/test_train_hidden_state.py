"""The records' hidden state: self-play writes the TRUE state's hidden part at each decision.

Mexican Train self-play (4 players, the Python and the compiled search paths) and the warm
start's teacher games over a fleet write shards whose ``hidden_state`` column, replayed from
``(game_seed, history)``, is the position's own ``hidden_state(player)``; it is never in the
observation: a world sampled from the player's information set encodes to the same observation
and mostly holds another hidden state.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from train_helpers import tiny_net

from omega_cluster.data import Record, ShardStore, ShardWriter, table_to_batch, table_to_records
from omega_cluster.games.fleet import fleet_for
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import encoder_for
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import LearnerConfig, SelfPlay, SelfPlayConfig
from omega_cluster.train.warm_start import WarmStartConfig, warm_start

PARAMS = {"players": 4, "rounds": 1, "double_set": 9}


def _check_true_hidden_states(records: list[Record]) -> int:
    """Each record's hidden state is its replayed position's; the observation is that of any
    sampled world. Returns how many sampled worlds held another hidden state."""
    rng = random.Random(3)
    differs = 0
    for r in records:
        game = make_game(r.game, **r.params())
        encoder = encoder_for(game)
        spec = encoder.info().hidden
        assert spec is not None and r.hidden_state is not None
        state = game.replay(r.game_seed, r.history)
        np.testing.assert_array_equal(r.hidden_state, state.hidden_state(r.player))
        assert r.hidden_state.shape == (spec.size,) and r.hidden_state.max() <= r.num_players
        np.testing.assert_array_equal(encoder.encode_observation(state, r.player), r.observation)
        world = state.sample_world(r.player, rng)
        np.testing.assert_array_equal(encoder.encode_observation(world, r.player), r.observation)
        differs += not np.array_equal(world.hidden_state(r.player), r.hidden_state)
    return differs


@pytest.mark.parametrize("fast", [False, True], ids=["python", "compiled"])
def test_self_play_shards_carry_the_true_hidden_state_never_the_observation(
    tmp_path: Path, fast: bool
) -> None:
    game = make_game("mexican_train", **PARAMS)
    config = SelfPlayConfig(games=2, concurrent_games=2, search=ISMCTSConfig(simulations=4), seed=5)
    runner = SelfPlay(
        game, encoder_for(game), config, evaluator=RolloutEvaluator(RandomPlayer(game)), fast=fast
    )
    records = list(runner.play())
    assert runner.search_path == ("compiled" if fast else "python: fast=False")
    store = ShardStore(tmp_path)
    ShardWriter(store, writer_id="w").write(records)
    (entry,) = store.entries()
    table = store.read(entry)
    back = table_to_records(table)
    assert back == records and len(back) > 20
    differs = _check_true_hidden_states(back)
    assert differs > len(back) // 2  # the same observation, another hidden state
    batch = table_to_batch(table)
    assert batch.has_hidden_state is not None and batch.has_hidden_state.all()
    assert batch.hidden_state is not None and batch.hidden_state.shape == (len(back), 55)


def test_the_warm_start_teacher_games_over_a_fleet_carry_the_true_hidden_state(
    tmp_path: Path,
) -> None:
    fleet = fleet_for("mexican_train", PARAMS, {2: 1, 4: 1}, ["points"])
    game = make_game("mexican_train", **PARAMS)
    encoder = encoder_for(game)
    small = {"hidden_size": 16, "action_embedding_size": 8, "policy_hidden_size": 8}
    learner = LearnerConfig(batch_size=16, device="cpu", seed=11)
    config = WarmStartConfig(games=6, steps=1, learner=learner, fleet=fleet)
    warm_start(config, game, encoder, tiny_net(game, encoder, **small), tmp_path)
    store = ShardStore(str(tmp_path))
    (entry,) = store.entries()
    records = table_to_records(store.read(entry))
    assert {r.num_players for r in records} == {2, 4}
    _check_true_hidden_states(records)
