"""Strength runs: train from self-play, then play the trained network without search.

Long (tens of minutes on 2 CPU cores; ``--quick`` is a smoke run of a few minutes whose figures
mean nothing). The real pipeline: :class:`~omega_cluster.train.SelfPlay` →
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
  vs Ensign), and **Path A**: a network trained on the same shards (value head on the search's
  root values) as ISMCTS prior + value (PUCT, no rollouts) against the same ISMCTS with a uniform
  prior and random rollouts, at equal simulations.

The Mexican Train teacher was chosen by measurement (ISMCTS with random rollouts vs Ensign,
2p single rounds, 60-100 seat-swapped games each, so about ±8%): 100 sims c_uct 1.4 ~68%,
100 sims c_uct 0.5 ~75%, 200 sims c_uct 0.7 ~78%, 200 sims c_uct 1.4 ~76%, 300 sims c_uct 1.4
~77%; 4 rollouts per leaf did not help; Commander rollouts (50-100 sims) ~72% at 2-4x the cost;
Commander alone ~80%. A network distilled from the 100-sims / c 1.4 teacher (640 games) reached
~61% vs Ensign, about 7 points under its teacher; hence the sharper, stronger teacher here.

The value target matters for both uses of the network. Measured on the shards of one full run
(32k rows, one network trained 1,600 steps per setting, 800 games vs Ensign, ±3.4%): the greedy
network plays best with per-round outcome targets (0.65; 0.64 with a 128-wide, 1-layer net) and
worse when its value head learns the search's root values (0.59; 0.63 small; 0.57 after 4,000
steps: the policy overfits its flat targets once the cross-entropy drops below their ~1.0 nats of
entropy). Path A (vs uniform ISMCTS at 64 sims, 200 games) needs the opposite: outcome targets
0.40 [0.33, 0.47], "mixed" (outcome + root value) / 2 0.46 [0.39, 0.53], root values ("search":
the Ω reference's "value head trained on search value backups") 0.49 [0.42, 0.56]. So the
network that plays alone trains on per-round outcomes, and Path A's network, trained on the same
shards, on the search's root values.

Self-play and the matches run in 2 worker processes (spawned, one torch thread each; they share
only the shard store and checkpoint paths), the learner in the parent between collections.
Every match goes through :func:`omega_cluster.eval.arena.play_match` (seats rotated over shared
deals); figures carry 95% intervals (Wilson for win rates, t for mean returns). Run:
``python -m bench.bench_training [--quick]`` (add ``--skip-leduc`` / ``--skip-mexican-train``).
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from bench._training_workers import MatchJob, SelfPlayJob, run_match, run_selfplay
from omega_cluster.data import ShardStore
from omega_cluster.eval.stats import mean_ci, wilson_interval
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.train import Learner, LearnerConfig, SelfPlayConfig

_START = time.perf_counter()


def _log(message: str) -> None:
    print(f"[{time.perf_counter() - _START:7.0f} s] {message}", flush=True)


def _split(total: int, parts: int, unit: int) -> list[int]:
    """``total`` split into ``parts`` chunks, each a multiple of ``unit`` (seat rotations)."""
    chunk = max(unit, (total // parts) // unit * unit)
    sizes = [chunk] * (total // chunk)
    if total - sum(sizes) > 0:
        sizes.append(total - sum(sizes))
    return sizes


def _collect(
    pool: ProcessPoolExecutor,
    store: Path,
    game: str,
    params: dict[str, Any],
    config: SelfPlayConfig,
    workers: int,
    iteration: int,
) -> str:
    """Self-play ``config.games`` games split over the workers, each writing one shard."""
    started = time.perf_counter()
    jobs = []
    for w, n in enumerate(_split(config.games, workers, 1)):
        part = replace(config, games=n, seed=1000 * iteration + w, actor=f"worker{w}")
        jobs.append(SelfPlayJob(str(store), game, params, part, f"worker{w}"))
    results = list(pool.map(run_selfplay, jobs))
    rows = sum(r for r, _ in results)
    seconds = time.perf_counter() - started
    decisions = sum(s.decisions for _, s in results)
    sims = sum(s.simulations for _, s in results)
    return (
        f"{config.games} games, {rows} records in {seconds:.0f} s ({workers} workers: "
        f"{decisions / seconds:.0f} decisions/s, {sims / seconds:.0f} sims/s)"
    )


def _match(
    pool: ProcessPoolExecutor,
    game: str,
    params: dict[str, Any],
    players: tuple[str, str],
    games: int,
    seed: int,
    checkpoint: Path,
    workers: int,
    simulations: int = 64,
) -> tuple[Any, Any]:
    """Player 0's win rate and mean return over ``games`` seat-rotated games (Wilson / t 95%)."""
    n = make_game(game, **params).num_players
    jobs = [
        MatchJob(game, params, players, size, seed + 7919 * i, str(checkpoint), simulations)
        for i, size in enumerate(_split(games, workers, n))
    ]
    results = list(pool.map(run_match, jobs))
    wins = sum(r.players[0].wins for r in results)
    played = sum(r.games for r in results)
    returns = [rec.returns[rec.seat_of(0)] for r in results for rec in r.records]
    return wilson_interval(wins, played), mean_ci(returns)


def _ci(ci: Any, signed: bool = False) -> str:
    f = "+.3f" if signed else ".3f"
    return f"{ci.estimate:{f}} [{ci.low:{f}}, {ci.high:{f}}]"


def _train(
    pool: ProcessPoolExecutor,
    root: Path,
    game_name: str,
    params: dict[str, Any],
    learner: Learner,
    selfplay: SelfPlayConfig,
    *,
    iterations: int,
    steps: int,
    workers: int,
) -> Path:
    store_path = root / "store"
    store = ShardStore(store_path)
    window = learner.window(store, window_rows=1_000_000)
    for it in range(iterations):
        collected = _collect(pool, store_path, game_name, params, selfplay, workers, it)
        stats = learner.train_steps(window, steps)
        _log(
            f"iteration {it}: {collected} | learner: {stats.steps} steps, loss {stats.loss:.3f} "
            f"(policy {stats.policy_loss:.3f}, value {stats.value_loss:.3f}), "
            f"{stats.samples_per_s:.0f} samples/s, window {stats.window_rows} rows"
        )
    final = root / "final"
    learner.save(final)
    return final


def _network(encoder: Any, game: Any, **sizes: Any) -> PolicyValueNet:
    torch.manual_seed(0)
    config = ModelConfig.for_encoder(encoder, game, **sizes)
    return PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)


def run_leduc(pool: ProcessPoolExecutor, root: Path, quick: bool, workers: int) -> list[str]:
    params: dict[str, Any] = {}
    game = make_game("leduc_poker")
    encoder = encoder_for(game)
    sizes = {"hidden_size": 64, "num_layers": 1, "action_embedding_size": 32,
             "policy_hidden_size": 32, "value_hidden_size": 32}  # fmt: skip
    learner = Learner(
        _network(encoder, game, **sizes), LearnerConfig(lr=1e-3, batch_size=256, seed=0),
        game=game, encoder=encoder,
    )  # fmt: skip
    games, iterations, steps, hands = (200, 2, 100, 400) if quick else (1500, 4, 400, 2000)
    selfplay = SelfPlayConfig(games=games, concurrent_games=16, simulations=300,
                              temperature_moves=2, final_temperature=0.0)  # fmt: skip
    _log(f"Leduc: {iterations} x {games} self-play games (ISMCTS, random rollouts, 300 sims)")
    final = _train(pool, root / "leduc", "leduc_poker", params, learner, selfplay,
                   iterations=iterations, steps=steps, workers=workers)  # fmt: skip
    out = []
    for opponent in ("ensign", "random-network"):
        _, ret = _match(pool, "leduc_poker", params, ("network", opponent), hands, 11, final,
                        workers)  # fmt: skip
        out.append(f"Leduc: trained network (greedy, no search) vs {opponent}, {hands} "
                   f"seat-swapped hands: mean return {_ci(ret, signed=True)} chips")  # fmt: skip
        _log(out[-1])
    return out


def run_mexican_train(
    pool: ProcessPoolExecutor, root: Path, quick: bool, workers: int
) -> list[str]:
    params = {"players": 2, "rounds": 1}
    game = make_game("mexican_train", **params)
    encoder = encoder_for(game)
    # per-round credit for the network that plays alone (the Ω reference; see the docstring)
    config = LearnerConfig(lr=1e-3, batch_size=256, seed=0, value_target="round",
                           weight_decay=1e-3)  # fmt: skip
    learner = Learner(_network(encoder, game), config, game=game, encoder=encoder)
    games, iterations, steps, sims = (16, 2, 30, 24) if quick else (SIMS_GAMES, 4, 400, SIMS)
    bench_games, path_a_games, path_a_sims = (40, 8, 16) if quick else (400, 200, 64)
    selfplay = SelfPlayConfig(games=games, concurrent_games=8, simulations=sims, c_uct=C_UCT,
                              temperature_moves=6, final_temperature=0.0)  # fmt: skip
    _log(f"Mexican Train 2p: {iterations} x {games} games of ISMCTS self-play with random "
         f"rollouts ({sims} sims, c_uct {C_UCT}: Path B)")  # fmt: skip
    final = _train(pool, root / "mexican_train", "mexican_train", params, learner, selfplay,
                   iterations=iterations, steps=steps, workers=workers)  # fmt: skip
    out = []
    for opponent in ("ensign", "random-network"):
        win, _ = _match(pool, "mexican_train", params, ("network", opponent), bench_games, 21,
                        final, workers)  # fmt: skip
        out.append(f"Mexican Train 2p: trained network (greedy, no search) vs {opponent}: win "
                   f"rate {_ci(win)} over {bench_games} games")  # fmt: skip
        _log(out[-1])
    # Path A's network: the same shards, its value head on the search's root values
    searched = replace(config, value_target="search")
    path_a_learner = Learner(_network(encoder, game), searched, game=game, encoder=encoder)
    window = path_a_learner.window(ShardStore(root / "mexican_train" / "store"))
    stats = path_a_learner.train_steps(window, iterations * steps)
    path_a_learner.save(root / "mexican_train" / "path_a")
    _log(f"Path A network: {stats.steps} steps on {stats.window_rows} rows, value target "
         f"'search': value loss {stats.value_loss:.3f}")  # fmt: skip
    win, _ = _match(pool, "mexican_train", params, ("path-a", "uniform-ismcts"), path_a_games,
                    23, root / "mexican_train" / "path_a", workers, path_a_sims)  # fmt: skip
    out.append(f"Mexican Train 2p, Path A: ISMCTS-PUCT with the network as prior + value vs the "
               f"same ISMCTS with a uniform prior + random rollouts, {path_a_sims} sims each: win "
               f"rate {_ci(win)} over {path_a_games} games")  # fmt: skip
    _log(out[-1])
    return out


SIMS, SIMS_GAMES, C_UCT = 200, 250, 0.7  # the Mexican Train teacher (measured: see the docstring)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    workers = 2
    # One torch thread in the learner too: on a shared 2-core machine two threads spin-wait
    # against other processes and a step gets 10x slower (measured: 500-900 vs ~10k samples/s).
    torch.set_num_threads(1)
    root = Path("runs") / "bench_training" / time.strftime("%Y%m%d-%H%M%S")
    root.mkdir(parents=True, exist_ok=True)
    _log(f"checkpoints and shards under {root}; {workers} worker processes")
    figures: list[str] = []
    context = multiprocessing.get_context("spawn")  # no fork after torch started its threads
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        if "--skip-leduc" not in args:
            figures += run_leduc(pool, root, quick, workers)
        if "--skip-mexican-train" not in args:
            figures += run_mexican_train(pool, root, quick, workers)
    print("\nFigures (95% intervals: Wilson for win rates, t for mean returns):")
    for line in figures:
        print(f"  {line}")


if __name__ == "__main__":
    main()
