"""Worker-process jobs of ``bench_training``: self-play into shards, and slices of matches.

Each job runs in its own process (spawned, one torch thread) and talks to the parent only through
the shard store on disk, checkpoint paths and picklable results — the distributed layout of
``docs/design.md`` ("Data flow") in miniature, with the pure classes of
:mod:`omega_cluster.train` and :mod:`omega_cluster.eval`. Player names of :func:`build_player`
not defined here go to the player registry (``commander``, ``ismcts:random:200``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.eval.arena import MatchResult, play_match
from omega_cluster.games.api import Game
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    ModelConfig,
    NetworkEvaluator,
    NetworkPlayer,
    PolicyValueNet,
    encoder_for,
    network_player_from_checkpoint,
)
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player
from omega_cluster.players.search import SearchPlayer
from omega_cluster.search import Evaluator, RolloutEvaluator
from omega_cluster.train import SelfPlay, SelfPlayConfig, SelfPlayStats
from omega_cluster.train.selfplay import TeacherEvaluator


@dataclass(frozen=True)
class SelfPlayJob:
    """Play ``config`` and write the records as one shard."""

    store: str  # shard store root
    game: str
    params: dict[str, Any]
    config: SelfPlayConfig
    writer_id: str
    # "random": ISMCTS scores its leaves by random rollouts (the rollout leaf); "commander":
    # Commander plays and labels its own moves (a TeacherEvaluator: config mode "network" with
    # record_prior)
    leaf: str = "random"


@dataclass(frozen=True)
class MatchJob:
    """A slice of a match between named players (see :func:`build_player`)."""

    game: str
    params: dict[str, Any]
    players: tuple[str, ...]  # names of build_player
    games: int
    seed: int
    checkpoint: str  # the trained network's checkpoint
    simulations: int = 64  # budget of the search players


def run_selfplay(job: SelfPlayJob) -> tuple[int, SelfPlayStats]:
    pin_threads(1)
    game = make_game(job.game, **job.params)
    evaluator: Evaluator
    if job.leaf == "commander":
        evaluator = TeacherEvaluator(Commander(game), game.num_players)
    elif job.leaf == "random":
        evaluator = RolloutEvaluator(RandomPlayer(game))
    else:
        raise ValueError(f"leaf {job.leaf!r}; allowed: random, commander")
    runner = SelfPlay(game, encoder_for(game), job.config, evaluator=evaluator)
    records = list(runner.play())
    ShardWriter(ShardStore(job.store), writer_id=job.writer_id).write(records)
    return len(records), runner.stats


def random_network_player(game: Game) -> NetworkPlayer:
    """A network of the default size with random weights everywhere (a fresh one is uniform: its
    output layers are zero), played greedily: the "random network" anchor."""
    encoder = encoder_for(game)
    torch.manual_seed(123)
    config = ModelConfig.for_encoder(encoder, game)
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    return NetworkPlayer(game, net.eval(), encoder, name="random-network")


def build_player(name: str, game: Game, checkpoint: str, simulations: int) -> Player:
    """``network`` (greedy, no search), ``ensign``, ``random-network``, ``network-leaf``
    (ISMCTS-PUCT with the network as prior and value), ``uniform-ismcts`` (the same ISMCTS with a
    uniform prior and random rollouts)."""
    if name == "network":
        return network_player_from_checkpoint(game, Path(checkpoint))
    if name == "ensign":
        return RandomPlayer(game)
    if name == "random-network":
        return random_network_player(game)
    if name == "network-leaf":
        loaded = network_player_from_checkpoint(game, Path(checkpoint))
        leaf = NetworkEvaluator(loaded._evaluator.model, loaded._evaluator.encoder)
        return SearchPlayer(
            game, algorithm="ismcts", leaf=leaf, simulations=simulations, selection="puct"
        )
    if name == "uniform-ismcts":
        return SearchPlayer(
            game, algorithm="ismcts", leaf="random", simulations=simulations, selection="puct"
        )
    return make_player(name, game)  # any registry spec: "commander", "ismcts:random:200", ...


def run_match(job: MatchJob) -> MatchResult:
    pin_threads(1)
    game = make_game(job.game, **job.params)
    players = [build_player(n, game, job.checkpoint, job.simulations) for n in job.players]
    return play_match(game, players, games=job.games, seed=job.seed)
