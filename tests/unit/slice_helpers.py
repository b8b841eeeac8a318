"""Shards of synthetic records over a mix of tables, and a tiny Mexican Train learner over a mix
(tests/unit/test_train_slices.py, tests/integration/test_tracking_slices.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from omega_cluster.config import (
    GameSettings,
    LearnerSettings,
    ModelSettings,
    Settings,
    TrackingSettings,
    validate,
)
from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.data.synthetic import synthetic_records
from omega_cluster.train.workers import Weights
from omega_cluster.wiring import build_encoder, build_game, build_model


def slice_records(n: int, objective: str, count: int, seed: int, **kwargs: Any) -> list[Any]:
    """Synthetic records of one table (``num_players`` n, ``objective`` in the parameters)."""
    kwargs = {"observation_size": 4, "feature_size": 2, **kwargs}
    rng = np.random.default_rng(seed)
    records = synthetic_records(count, rng, num_players=n, actor=f"p{n}{objective}", **kwargs)
    params = json.dumps({"objective": objective, "players": n, "rounds": 1}, sort_keys=True)
    return [dataclasses.replace(r, game_params=params) for r in records]


def write_mix(store: ShardStore, rows: dict[tuple[int, str], int], **kwargs: Any) -> None:
    """Each slice's rows as two shards (cut at a game's end), the slices interleaved in the
    store's order."""
    halves: list[list[Any]] = [[], []]
    for i, ((n, objective), count) in enumerate(rows.items()):
        records = slice_records(n, objective, count, seed=i, **kwargs)
        ids = [r.game_id for r in records]
        cut = count // 2  # at a game's end (a game is stored once, in one shard); a slice of
        while 0 < cut < count and ids[cut] == ids[cut - 1]:  # one game: one shard
            cut += 1
        halves[0].append(records[:cut])
        halves[1].append(records[cut:])
    for k, part in enumerate(halves[0] + halves[1]):
        if part:
            ShardWriter(store, writer_id=f"w{k:02d}", node_id="test").write(part)


def mixed_settings(*, balance: bool, cap: float = 0.0, fleet: bool = True) -> Settings:
    """A tiny Mexican Train learner over a mix of 2 and 3 players × points and go_out."""
    model = ModelSettings(hidden_size=16, num_layers=1, action_embedding_size=8,
                          policy_hidden_size=8, value_hidden_size=8)  # fmt: skip
    game = GameSettings("mexican_train", {"players": 2, "rounds": 1})
    if fleet:
        game = GameSettings("mexican_train", {"players": 2, "rounds": 1}, {2: 1, 3: 1},
                            ["points", "go_out"])  # fmt: skip
    learner = LearnerSettings(batch_size=32, steps_per_candidate=6, min_rows=32, window_rows=5000,
                              device="cpu", max_samples_per_row=cap,
                              balance_slices=balance)  # fmt: skip
    return validate(Settings(game=game, model=model, learner=learner,
                             tracking=TrackingSettings(enabled=False)))  # fmt: skip


MIXED_ROWS = {(2, "points"): 300, (2, "go_out"): 200, (3, "points"): 40, (3, "go_out"): 60}


def mexican_store(root: Path, settings: Settings) -> ShardStore:
    """Shards of records shaped like the run's encoder's (game, version, sizes)."""
    encoder = build_encoder(settings)
    store = ShardStore(str(root))
    write_mix(store, MIXED_ROWS, observation_size=encoder.observation_size,
              feature_size=encoder.action_feature_size, game="mexican_train",
              encoder_version=encoder.version)  # fmt: skip
    return store


def champion(settings: Settings) -> Weights:
    game = build_game(settings)
    return Weights.of(build_model(settings, game, build_encoder(settings, game)), version=0,
                      uri="memory")  # fmt: skip
