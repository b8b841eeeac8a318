"""One process, end to end, on the service's own loop: self-play worker → shards → replay window
→ learner worker → a new network.

Small budgets (the strength runs are ``bench/bench_training.py``): for Leduc (the network leaf:
the network as PUCT prior and value, no rollout) and Mexican Train 2p single rounds (ISMCTS with
the rollout leaf: random rollouts), the workers :mod:`omega_cluster.wiring` builds from the run's
settings play two chunks and train two candidates on them; the learner's value loss on
everything it was given falls, and the last candidate loads as a network player that plays legal
games through the checked arena.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from omega_cluster.config.schema import (
    ClusterSettings,
    GameSettings,
    LearnerSettings,
    ModelSettings,
    SearchSettings,
    Settings,
    TrackingSettings,
)
from omega_cluster.data import table_to_batch
from omega_cluster.eval.arena import play_match
from omega_cluster.games.player import RandomPlayer
from omega_cluster.model import network_player_from_checkpoint
from omega_cluster.train.learner import Learner
from omega_cluster.train.workers import Weights
from omega_cluster.wiring import (
    build_encoder,
    build_game,
    build_model,
    learner_worker,
    selfplay_worker,
)

CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # game, params, search settings
    ("leduc_poker", {"players": 2},
     {"leaf": "network", "selection": "puct", "dirichlet_fraction": 0.25, "simulations": 24}),
    ("mexican_train", {"players": 2, "rounds": 1}, {"leaf": "random", "simulations": 12}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "params", "search"), CASES)
def test_selfplay_shards_train_and_the_new_network_plays(
    tmp_path: Path, name: str, params: dict[str, Any], search: dict[str, Any]
) -> None:
    model = ModelSettings(hidden_size=32, num_layers=1, action_embedding_size=16,
                          policy_hidden_size=16, value_hidden_size=16)  # fmt: skip
    settings = Settings(
        game=GameSettings(name, params),
        search=SearchSettings(temperature_moves=6, **search),
        model=model,
        learner=LearnerSettings(
            batch_size=64,
            lr=3e-3,
            device="cpu",
            value_target="round",
            steps_per_candidate=60,
            min_rows=8,
            max_samples_per_row=0.0,
        ),
        cluster=ClusterSettings(backend="local", concurrent_games=8),
        tracking=TrackingSettings(enabled=False),
    )
    game = build_game(settings)
    encoder = build_encoder(settings, game)
    store = str(tmp_path / "store")
    champion = Weights.of(build_model(settings, game, encoder), version=0, uri="memory")
    actor = selfplay_worker(settings, actor=0, store_uri=store)
    learner = learner_worker(settings, run_dir=tmp_path, store_uri=store)
    reports = []
    for version in (1, 2):
        chunk = actor.play_chunk(champion, version - 1, 24)
        assert chunk.records > 0
        reports.append(learner.train_candidate(champion, version))
        champion = dataclasses.replace(champion, version=version)  # the same v0 weights play
    assert [r.version for r in reports] == [1, 2] and len(actor.store.entries()) == 2
    trained = learner.learner
    assert trained.step == 120

    window = trained.window(actor.store)
    window.refresh()
    data = table_to_batch(window.table())
    untrained = Learner(build_model(settings, game, encoder), trained.config, game=game,
                        encoder=encoder)  # fmt: skip
    losses = [x.evaluate(data)["value_loss"] for x in (untrained, trained)]
    assert losses[1] < losses[0], losses

    checkpoint = tmp_path / "candidate"
    trained.save(checkpoint)
    player = network_player_from_checkpoint(game, checkpoint)
    match = play_match(game, [player, RandomPlayer(game)], games=8, seed=3)  # checked moves
    assert match.games == 8 and len(match.records) == 8
