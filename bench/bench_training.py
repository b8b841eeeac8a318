"""Strength runs: train from self-play, then play the trained network without search.

Long (tens of minutes on 2 CPU cores; ``--quick`` is a smoke run of a few minutes whose figures
mean nothing). One process, the real pipeline: :class:`~omega_cluster.train.SelfPlay` →
Arrow shards in a :class:`~omega_cluster.data.ShardStore` → replay window →
:class:`~omega_cluster.train.Learner` → checkpoints under ``runs/bench_training/<time>/``
(git-ignored). Recipes:

* **Leduc** — ISMCTS self-play with random rollouts (the search's visits as policy targets, the
  hand's chips as value target), a few collect → train iterations; then the greedy network, no
  search, against uniform random play (Ensign) and a random-weights network over seat-swapped
  hands (bar: positive mean return vs random over 2,000 hands).
* **Mexican Train 2p, single rounds** — Path B of the Ω reference: ISMCTS with random rollouts
  writes visit targets, the network distils them (per-round value targets); then the greedy
  network without search against Ensign and a random-weights network (bar: >= 60% of 400 games
  vs Ensign), and **Path A**: the trained network as ISMCTS prior + value (PUCT, no rollouts)
  against the same ISMCTS with a uniform prior and random rollouts, at equal simulations.

Every match goes through :func:`omega_cluster.eval.arena.play_match` (seats rotated over shared
deals); figures carry 95% intervals (Wilson for win rates, t for mean returns). Run:
``python -m bench.bench_training [--quick]`` (add ``--skip-leduc`` / ``--skip-mexican-train``).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.eval.arena import MatchResult, play_match
from omega_cluster.games.api import Game
from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    ModelConfig,
    NetworkEvaluator,
    NetworkPlayer,
    PolicyValueNet,
    encoder_for,
    network_player_from_checkpoint,
)
from omega_cluster.model.encoders.base import Encoder
from omega_cluster.players.base import RandomPlayer
from omega_cluster.players.search import SearchPlayer
from omega_cluster.search import RolloutEvaluator
from omega_cluster.train import Learner, LearnerConfig, SelfPlay, SelfPlayConfig

_START = time.perf_counter()


def _log(message: str) -> None:
    print(f"[{time.perf_counter() - _START:7.0f} s] {message}", flush=True)


def _network(game: Game, encoder: Encoder, seed: int, **sizes: Any) -> PolicyValueNet:
    torch.manual_seed(seed)
    config = ModelConfig.for_encoder(encoder, game, **sizes)
    return PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)


def _random_network_player(game: Game, encoder: Encoder, **sizes: Any) -> NetworkPlayer:
    """A network with random weights everywhere (a fresh one is uniform: its output layers are
    zero), played greedily: the "random network" anchor."""
    net = _network(game, encoder, seed=123, **sizes)
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    return NetworkPlayer(game, net.eval(), encoder, name="random-network")


def _figure(result: MatchResult, label: str, what: str) -> str:
    p = result.players[0]
    if what == "return":
        ci = p.return_ci
        return f"{label}: mean return {p.mean_return:+.3f} [{ci.low:+.3f}, {ci.high:+.3f}]"
    ci = p.win_rate_ci
    return f"{label}: win rate {p.win_rate:.3f} [{ci.low:.3f}, {ci.high:.3f}] over {p.games}"


def _collect_and_train(
    learner: Learner,
    store: ShardStore,
    selfplay: SelfPlayConfig,
    *,
    iterations: int,
    steps: int,
    leaf: str,
    sims_label: str,
) -> None:
    """``iterations`` × (self-play → one shard → ``steps`` learner steps)."""
    writer = ShardWriter(store, writer_id="bench")
    window = learner.window(store, window_rows=500_000)
    game, encoder = learner.game, learner.encoder
    for it in range(iterations):
        if leaf == "random":
            evaluator: Any = RolloutEvaluator(RandomPlayer(game))
        else:
            net = PolicyValueNet(learner.model.config, encoder.observation_size,
                                 encoder.action_feature_size)  # fmt: skip
            net.load_state_dict(learner.model.state_dict())
            evaluator = NetworkEvaluator(net.eval(), encoder)
        runner = SelfPlay(game, encoder, replace(selfplay, seed=1000 + it), evaluator=evaluator)
        records = list(runner.play())
        writer.write(records)
        sp = runner.stats
        stats = learner.train_steps(window, steps)
        _log(
            f"iteration {it}: {sp.games} games, {len(records)} records, {sp.decisions_per_s:.0f} "
            f"decisions/s, {sp.simulations_per_s:.0f} sims/s ({sims_label}) | learner: loss "
            f"{stats.loss:.3f} policy {stats.policy_loss:.3f} value {stats.value_loss:.3f}, "
            f"{stats.samples_per_s:.0f} samples/s, window {stats.window_rows} rows"
        )


def run_leduc(root: Path, quick: bool) -> list[str]:
    game = make_game("leduc_poker")
    encoder = encoder_for(game)
    sizes = {"hidden_size": 64, "num_layers": 1, "action_embedding_size": 32,
             "policy_hidden_size": 32, "value_hidden_size": 32}  # fmt: skip
    config = LearnerConfig(lr=1e-3, batch_size=256, seed=0)
    learner = Learner(_network(game, encoder, 0, **sizes), config, game=game, encoder=encoder)
    games, iterations, steps, hands = (200, 2, 100, 400) if quick else (1500, 4, 400, 2000)
    selfplay = SelfPlayConfig(
        games=games, concurrent_games=16, simulations=300, temperature_moves=2,
        final_temperature=0.0,
    )  # fmt: skip
    _log(f"Leduc: {iterations} × {games} self-play games (ISMCTS, random rollouts, 300 sims)")
    store = ShardStore(root / "leduc" / "store")
    _collect_and_train(learner, store, selfplay, iterations=iterations, steps=steps,
                       leaf="random", sims_label="ISMCTS 300")  # fmt: skip
    learner.save(root / "leduc" / "final")
    player = network_player_from_checkpoint(game, root / "leduc" / "final")
    vs_random = play_match(game, [player, RandomPlayer(game)], games=hands, seed=11)
    anchor = _random_network_player(game, encoder, **sizes)
    vs_network = play_match(game, [player, anchor], games=hands, seed=12)
    return [
        _figure(vs_random, f"Leduc trained network (greedy, no search) vs random, {hands} hands",
                "return"),
        _figure(vs_network, f"Leduc trained network vs random-weights network, {hands} hands",
                "return"),
    ]  # fmt: skip


def run_mexican_train(root: Path, quick: bool) -> list[str]:
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    sizes: dict[str, Any] = {}
    config = LearnerConfig(lr=1e-3, batch_size=256, seed=0, value_target="round")
    learner = Learner(_network(game, encoder, 0), config, game=game, encoder=encoder)
    games, iterations, steps, sims = (12, 2, 30, 24) if quick else (160, 4, 500, 100)
    bench_games, path_a_games, path_a_sims = (40, 8, 16) if quick else (400, 200, 64)
    selfplay = SelfPlayConfig(
        games=games, concurrent_games=8, simulations=sims, temperature_moves=6,
        final_temperature=0.0,
    )  # fmt: skip
    _log(f"Mexican Train 2p: {iterations} × {games} games of ISMCTS self-play, random rollouts "
         f"({sims} sims: Path B)")  # fmt: skip
    store = ShardStore(root / "mexican_train" / "store")
    _collect_and_train(learner, store, selfplay, iterations=iterations, steps=steps,
                       leaf="random", sims_label=f"ISMCTS {sims}")  # fmt: skip
    final = root / "mexican_train" / "final"
    learner.save(final)
    player = network_player_from_checkpoint(game, final)
    vs_ensign = play_match(game, [player, RandomPlayer(game)], games=bench_games, seed=21)
    _log(_figure(vs_ensign, "vs Ensign", "win"))
    anchor = _random_network_player(game, encoder, **sizes)
    vs_network = play_match(game, [player, anchor], games=bench_games, seed=22)
    evaluator = NetworkEvaluator(network_player_from_checkpoint(game, final)._evaluator.model,
                                 encoder)  # fmt: skip
    path_a = SearchPlayer(game, algorithm="ismcts", leaf=evaluator, simulations=path_a_sims,
                          selection="puct")  # fmt: skip
    uniform = SearchPlayer(game, algorithm="ismcts", leaf="random", simulations=path_a_sims,
                           selection="puct")  # fmt: skip
    path_a_match = play_match(game, [path_a, uniform], games=path_a_games, seed=23)
    return [
        _figure(vs_ensign, "Mexican Train 2p trained network (greedy, no search) vs Ensign",
                "win"),
        _figure(vs_network, "Mexican Train 2p trained network vs random-weights network", "win"),
        _figure(path_a_match, f"Path A: ISMCTS-PUCT with the network (prior + value, "
                f"{path_a_sims} sims) vs ISMCTS-PUCT uniform prior + random rollouts "
                f"({path_a_sims} sims)", "win"),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    root = Path("runs") / "bench_training" / time.strftime("%Y%m%d-%H%M%S")
    root.mkdir(parents=True, exist_ok=True)
    _log(f"checkpoints and shards under {root}; torch threads {torch.get_num_threads()}")
    figures: list[str] = []
    if "--skip-leduc" not in args:
        figures += run_leduc(root, quick)
        _log("\n".join(figures))
    if "--skip-mexican-train" not in args:
        figures += run_mexican_train(root, quick)
    print("\nFigures (95% intervals):")
    for line in figures:
        print(f"  {line}")


if __name__ == "__main__":
    main()
