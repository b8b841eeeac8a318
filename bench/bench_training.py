"""Strength runs: train from self-play, then play the trained network without search.

Long (about 20 minutes on 2 CPU cores when they are free; ``--quick`` is a smoke run of about a
minute whose figures mean nothing). The real pipeline: :class:`~omega_cluster.train.SelfPlay` →
Arrow shards in a :class:`~omega_cluster.data.ShardStore` → replay window →
:class:`~omega_cluster.train.Learner` → checkpoints under ``runs/bench_training/<time>/``
(git-ignored). Recipes:

* **Leduc** — ISMCTS self-play with random rollouts (the search's visits as policy targets, the
  hand's chips as value target), a few collect → train iterations; then the greedy network, no
  search, against uniform random play (Ensign) and a random-weights network over seat-swapped
  hands (bar: positive mean return vs random over 2,000 hands).
* **Mexican Train 2p, single rounds** (the recipe is :data:`MT_RECIPE`) — a warm start, then
  self-play, one network for both uses:

  1. *Warm start* (imitation of a weak teacher before self-play, as AlphaGo's policy network first
     learnt expert moves, Silver et al. 2016): 8,000 games in which Commander plays both seats
     through :class:`~omega_cluster.train.SelfPlay` (mode ``"network"`` with ``record_prior`` and
     a :class:`~omega_cluster.train.selfplay.TeacherEvaluator`), its moves the one-hot policy
     targets; 2,500 steps, cosine schedule from lr 1e-3 to 1e-4.
  2. *Self-play with the rollout leaf* (ISMCTS, Cowling, Powley & Whitehouse 2012, its leaves
     scored by rollouts, not by the network): 2 iterations of 250 games of ISMCTS with random
     rollouts (200 sims, c_uct 0.7), visits as policy targets, then 400 steps at lr 1e-4 on the
     window of every row so far.

  Value targets are per-round outcomes (each round's result credits that round's moves); the
  network has the encoder's aux heads (this round's pips per seat and who goes out). Then the
  greedy network without search against Ensign and a random-weights network (bar: >= 60% of 400
  games vs Ensign), and the **network leaf**: the same network as ISMCTS prior + value (PUCT as in
  AlphaZero, Silver et al. 2018; no rollouts) against the same ISMCTS with a uniform prior and
  random rollouts, 64 simulations each (200 games).

How the recipe was found (2p single rounds, 400 games vs Ensign, Wilson 95% intervals ±4.5%).
The rollout-leaf teacher is the best ISMCTS setting of 100-300 sims and c_uct 0.5-1.4 (~0.78 vs
Ensign at 200 sims, c_uct 0.7; Commander rollouts cost 2-4x for less). The previous recipe
(rollout-leaf self-play alone, 4 x 250 games, the encoder without Commander terms) gave 0.58-0.65
over four runs, about 15 points under its ISMCTS teacher (~0.78), and a network distilled from
Commander games instead reached only 0.62 with those inputs, though Commander wins 0.77. The gap
was the inputs: with the Commander's move terms as action features (longest own chain after the
move, stranded pips, ...; ``MexicanTrainEncoder(heuristic_features=True)``, the default since
encoder version 2) the same 32k rollout-leaf rows give 0.708 [0.661, 0.750], and 3,000
Commander-labelled games 0.772 [0.729, 0.811]. With 8,000 teacher games (2,500 steps, aux heads)
the greedy network wins 0.781 [0.738, 0.819], and the network leaf at 64 sims 0.630
[0.561, 0.694]; continuing on those rows plus 32k rollout-leaf rows (1,200 steps at lr 3e-4)
0.776 [0.733, 0.814] and 0.645 [0.577, 0.708]. The network leaf needs a sharp prior: the network
trained on rollout-leaf self-play only (soft visit targets, ~1 nat of entropy) lost as the
network leaf, 0.472 [0.404, 0.542], as did the networks of an earlier recipe (0.40 with outcome
targets, 0.49 with root-value targets); the value head stays weak throughout (value loss ~0.93 of
a constant predictor's 1.0: who wins a 2p round is mostly the deal), so the network leaf plays
close to its prior, and the prior is what beats the uniform search.

Final recipe, one full run (2 workers on a busy machine, 46 min; 20 when the cores are free):
greedy vs Ensign 0.766 [0.722, 0.805] after the warm start, 0.777 [0.734, 0.816] after self-play
(0.760 [0.716, 0.799] on other deals, seed 97); vs the random-weights network 0.734
[0.688, 0.775]; the network leaf 0.632 [0.564, 0.696] (0.603 [0.533, 0.668] on other deals, seed
29: 0.618 [0.569, 0.664] pooled over 400). The baseline — the same network without search
against the uniform ISMCTS, same deals — gave 0.598 [0.528, 0.663]: at 64 simulations the search
adds ~3 points to the prior, within noise; a value head that predicts the round better is what
the network leaf's search still lacks.

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
from omega_cluster.model.threads import pin_threads
from omega_cluster.search.ismcts import ISMCTSConfig
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
    leaf: str = "random",
) -> str:
    """Self-play ``config.games`` games split over the workers, each writing one shard."""
    started = time.perf_counter()
    jobs = []
    for w, n in enumerate(_split(config.games, workers, 1)):
        part = replace(config, games=n, seed=1000 * iteration + w, actor=f"worker{w}")
        jobs.append(SelfPlayJob(str(store), game, params, part, f"worker{w}", leaf))
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
    leaf: str = "random",
    first_iteration: int = 0,
    name: str = "final",
) -> Path:
    """``iterations`` rounds of collect (into ``root/store``) → ``steps`` learner steps on the
    window of everything collected so far; the learner is saved to ``root/name``."""
    store_path = root / "store"
    window = learner.window(ShardStore(store_path), window_rows=1_000_000)
    for it in range(first_iteration, first_iteration + iterations):
        collected = _collect(pool, store_path, game_name, params, selfplay, workers, it, leaf)
        stats = learner.train_steps(window, steps)
        aux = f", aux {stats.aux_loss:.3f}" if learner.model.config.aux_heads else ""
        _log(
            f"iteration {it}: {collected} | learner: {stats.steps} steps, loss {stats.loss:.3f} "
            f"(policy {stats.policy_loss:.3f}, value {stats.value_loss:.3f}{aux}), "
            f"{stats.samples_per_s:.0f} samples/s, window {stats.window_rows} rows"
        )
    final = root / name
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
    selfplay = SelfPlayConfig(games=games, concurrent_games=16, search=ISMCTSConfig(simulations=300),
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
    encoder = encoder_for(game)  # with the Commander's move terms as action features
    r = MT_QUICK if quick else MT_RECIPE
    # per-round credit (value_target="round"); the cosine schedule ends the warm start at lr/10,
    # where the self-play iterations continue ("lower lr at the end")
    config = LearnerConfig(lr=1e-3, batch_size=256, seed=0, value_target="round",
                           weight_decay=1e-3, schedule="cosine", warmup_steps=50,
                           total_steps=r["warm_steps"])  # fmt: skip
    learner = Learner(_network(encoder, game, aux=True), config, game=game, encoder=encoder)
    here = root / "mexican_train"
    teacher = SelfPlayConfig(games=r["warm_games"], concurrent_games=32, mode="network",
                             record_prior=True, temperature=0.0, final_temperature=0.0)  # fmt: skip
    _log(f"Mexican Train 2p: warm start on {r['warm_games']} Commander-labelled games "
         f"(the teacher's moves as one-hot policy targets), {r['warm_steps']} steps")  # fmt: skip
    _train(pool, here, "mexican_train", params, learner, teacher, iterations=1,
           steps=r["warm_steps"], workers=workers, leaf="commander", name="warm")  # fmt: skip
    out = []
    if r["iterations"]:
        win, _ = _match(pool, "mexican_train", params, ("network", "ensign"), r["bench_games"],
                        21, here / "warm", workers)  # fmt: skip
        out.append(f"Mexican Train 2p: network after the warm start (greedy, no search) vs "
                   f"ensign: win rate {_ci(win)} over {r['bench_games']} games")  # fmt: skip
        _log(out[-1])
        selfplay = SelfPlayConfig(games=r["games"], concurrent_games=8,
                                  search=ISMCTSConfig(simulations=r["sims"], c_uct=C_UCT),
                                  temperature_moves=6, final_temperature=0.0)  # fmt: skip
        _log(f"Mexican Train 2p: {r['iterations']} x {r['games']} games of ISMCTS self-play with "
             f"random rollouts ({r['sims']} sims, c_uct {C_UCT}: the rollout leaf), "
             f"{r['steps']} steps each on the window of all rows")  # fmt: skip
        _train(pool, here, "mexican_train", params, learner, selfplay, iterations=r["iterations"],
               steps=r["steps"], workers=workers, first_iteration=1)  # fmt: skip
    final = here / ("final" if r["iterations"] else "warm")
    for opponent in ("ensign", "random-network"):
        win, _ = _match(pool, "mexican_train", params, ("network", opponent), r["bench_games"],
                        21, final, workers)  # fmt: skip
        out.append(f"Mexican Train 2p: trained network (greedy, no search) vs {opponent}: win "
                   f"rate {_ci(win)} over {r['bench_games']} games")  # fmt: skip
        _log(out[-1])
    games, sims = r["network_leaf_games"], r["network_leaf_sims"]
    win, _ = _match(pool, "mexican_train", params, ("network-leaf", "uniform-ismcts"), games, 23,
                    final, workers, sims)  # fmt: skip
    out.append(f"Mexican Train 2p, network leaf: ISMCTS-PUCT with the network as prior + value vs "
               f"the same ISMCTS with a uniform prior + random rollouts, {sims} sims each: win "
               f"rate {_ci(win)} over {games} games")  # fmt: skip
    _log(out[-1])
    # the baseline: the same network without search against that ISMCTS, on the same deals
    ref, _ = _match(pool, "mexican_train", params, ("network", "uniform-ismcts"), games, 23,
                    final, workers, sims)  # fmt: skip
    out.append(f"  baseline: the network alone (greedy, no search) vs that ISMCTS: win rate "
               f"{_ci(ref)}; network leaf / baseline = "
               f"{win.estimate / max(ref.estimate, 1e-9):.2f}x")  # fmt: skip
    _log(out[-1])
    return out


C_UCT = 0.7  # the rollout-leaf teacher's UCT constant (measured: see the docstring)
MT_RECIPE: dict[str, int] = {
    "warm_games": 8000, "warm_steps": 2500,  # Commander-labelled games, learner steps
    "iterations": 2, "games": 250, "sims": 200, "steps": 400,  # rollout-leaf self-play iterations
    "bench_games": 400, "network_leaf_games": 200, "network_leaf_sims": 64,
}  # fmt: skip
MT_QUICK: dict[str, int] = {
    "warm_games": 200, "warm_steps": 60, "iterations": 1, "games": 16, "sims": 24, "steps": 20,
    "bench_games": 40, "network_leaf_games": 8, "network_leaf_sims": 16,
}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    workers = 2
    # One torch thread in the learner too: on a shared 2-core machine two threads spin-wait
    # against other processes and a step gets 10x slower (measured: 500-900 vs ~10k samples/s).
    pin_threads(1)
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
