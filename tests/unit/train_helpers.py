"""Helpers shared by the training tests (imported as a plain module from ``tests/unit``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import torch

from omega_cluster import wiring
from omega_cluster.config import Settings, load_settings, to_yaml
from omega_cluster.data import Record, ShardStore, ShardWriter
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.model.checkpoint import save_checkpoint
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import Learner, LearnerConfig, SelfPlayConfig, play_games


def tiny_net(game: Game, encoder: Encoder, *, seed: int = 0, **overrides: object) -> PolicyValueNet:
    """A small network for ``encoder``, initialised from ``seed``."""
    torch.manual_seed(seed)
    kwargs: dict[str, object] = {
        "hidden_size": 32,
        "num_layers": 1,
        "action_embedding_size": 16,
        "policy_hidden_size": 16,
        "value_hidden_size": 16,
    }
    kwargs.update(overrides)
    config = ModelConfig.for_encoder(encoder, game, **kwargs)  # type: ignore[arg-type]
    return PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)


@cache
def leduc_records(games: int = 40, seed: int = 0) -> tuple[Record, ...]:
    """Leduc self-play records (ISMCTS with random rollouts, small budget)."""
    game = make_game("leduc_poker")
    config = SelfPlayConfig(
        games=games, concurrent_games=8, search=ISMCTSConfig(simulations=24), seed=seed
    )
    records, _ = play_games(
        game, encoder_for(game), config, evaluator=RolloutEvaluator(RandomPlayer(game))
    )
    return tuple(records)


@cache
def mexican_train_records(games: int = 4, seed: int = 0) -> tuple[Record, ...]:
    """Mexican Train 2p single-round (double-9) self-play records: ISMCTS, random rollouts."""
    game = make_game("mexican_train", players=2, rounds=1, double_set=9)
    config = SelfPlayConfig(
        games=games, concurrent_games=4, search=ISMCTSConfig(simulations=8), seed=seed
    )
    records, _ = play_games(
        game, encoder_for(game), config, evaluator=RolloutEvaluator(RandomPlayer(game))
    )
    return tuple(records)


def leduc_store(path: Path, *, shards: int = 2) -> ShardStore:
    """A store holding ``shards`` shards of Leduc self-play records."""
    store = ShardStore(path)
    writer = ShardWriter(store, writer_id="test")
    for i in range(shards):
        writer.write(list(leduc_records(seed=i)))
    return store


def leduc_learner(**overrides: object) -> Learner:
    """A CPU learner of a tiny Leduc network (``overrides`` go to LearnerConfig)."""
    game = make_game("leduc_poker")
    encoder = encoder_for(game)
    options: dict[str, object] = {"batch_size": 32, "lr": 1e-3, "device": "cpu", "seed": 7}
    options["threads"] = 1  # tests run 2 per 2 cores (xdist): one torch thread each
    options.update(overrides)
    config = LearnerConfig(**options)  # type: ignore[arg-type]
    return Learner(tiny_net(game, encoder), config, game=game, encoder=encoder)


def champion_run(root: Path, args: list[str]) -> Settings:
    """Make ``root`` a run directory of the run ``args`` name with one champion, untrained
    (``models/v0``, the registry, ``config.yaml``); the run's settings."""
    settings = load_settings(args)
    game = wiring.build_game(settings)
    encoder = wiring.build_encoder(settings, game)
    model = wiring.build_model(settings, game, encoder)
    save_checkpoint(root / "models" / "v0", model, game=game, encoder=encoder)
    ModelRegistry(root, game=game.spec.name).add_initial(str(root / "models" / "v0"), elo=1000.0)
    (root / "config.yaml").write_text(to_yaml(settings))
    return settings
