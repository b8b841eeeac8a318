"""One process, end to end: self-play → shards → replay window → learner → a new network.

Small budgets (the strength runs are ``bench/bench_training.py``): for Leduc (the network leaf:
the network as PUCT prior and value, no rollout; and search-free actor-critic) and Mexican Train
2p single rounds (ISMCTS with the rollout leaf: random rollouts), a few iterations of
:func:`omega_cluster.train.run_loop` write shards to a store in ``tmp_path``; the learner's value
loss on everything it was given falls, and the last checkpoint loads as a network player that
plays legal games through the checked arena.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from train_helpers import tiny_net

from omega_cluster.data import ShardStore, table_to_batch
from omega_cluster.eval.arena import play_match
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import encoder_for, network_player_from_checkpoint
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import (
    Learner,
    LearnerConfig,
    LoopConfig,
    SelfPlayConfig,
    run_loop,
)

PUCT = ISMCTSConfig(simulations=24, selection="puct", dirichlet_fraction=0.25)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, str]] = [
    # game, params, self-play options, leaf, learner mode
    ("leduc_poker", {}, {"search": PUCT}, "network", "alphazero"),
    ("leduc_poker", {}, {"mode": "network"}, "network", "actor_critic"),
    ("mexican_train", {"players": 2, "rounds": 1}, {"search": ISMCTSConfig(simulations=12)},
     "random", "alphazero"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "params", "selfplay", "leaf", "mode"), CASES)
def test_selfplay_shards_train_and_the_new_network_plays(
    tmp_path: Path,
    name: str,
    params: dict[str, Any],
    selfplay: dict[str, Any],
    leaf: str,
    mode: str,
) -> None:
    game = make_game(name, **params)
    encoder = encoder_for(game)
    config = LearnerConfig(
        mode=mode, batch_size=64, lr=3e-3, device="cpu", threads=1, seed=1, value_target="round"
    )
    learner = Learner(tiny_net(game, encoder), config, game=game, encoder=encoder)
    store = ShardStore(tmp_path / "store")
    options = {"games": 24, "concurrent_games": 8, "search": ISMCTSConfig(simulations=24),
               "temperature_moves": 6}  # fmt: skip
    loop = LoopConfig(
        iterations=2,
        selfplay=SelfPlayConfig(**{**options, **selfplay}),
        learner_steps=60,
        leaf=leaf,
        seed=5,
    )
    reports = list(run_loop(learner, store, loop, checkpoints=tmp_path / "checkpoints"))
    assert [r.iteration for r in reports] == [0, 1] and all(r.records > 0 for r in reports)
    assert len(store.entries()) == 2 and learner.step == 120 and learner.version == 2

    window = learner.window(store)
    window.refresh()
    data = table_to_batch(window.table())
    first = Learner.load(reports[0].checkpoint, game=game, encoder=encoder)
    untrained = Learner(tiny_net(game, encoder), config, game=game, encoder=encoder)
    losses = [x.evaluate(data)["value_loss"] for x in (untrained, first, learner)]
    # the value loss falls over training (after the first 60 steps it may not have yet: those
    # games are few and the first candidate's loss moves either way with the search's draws)
    assert losses[2] < losses[0], losses

    player = network_player_from_checkpoint(game, reports[-1].checkpoint)
    match = play_match(game, [player, RandomPlayer(game)], games=8, seed=3)  # checked moves
    assert match.games == 8 and len(match.records) == 8
