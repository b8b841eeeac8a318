"""Tune the Commander's weights for one table size by self-play against the default Commander.

An evolution strategy over the weights that matter under the game's rules (a (μ, λ) search with
weighted recombination and a shrinking step: CMA-ES, Hansen & Ostermeier 2001, without the
covariance): every candidate plays the same fresh deals of a generation in every seat against
default Commanders, all through the compiled playouts
(:mod:`omega_cluster.games.mexican_train.officers._commander_jit`, ~1.3 ms a 4p round), and the
figure is its fair share (win rate x players; 1.0 is par). The best mean of the last generation
is then checked on deals no generation saw, with a 95% interval.

Measured (2026-11-30, 4p, 2 cores): seed 1, 15 generations of 12 x 1,500 deals (2.5 min): 1.060
± 0.017 on 10,000 fresh deals x 4 seats — the ``tuned_4p`` preset
(:data:`omega_cluster.games.mexican_train.officers.weights.PRESETS`), 1.054 ± 0.007 again on
20,000 other deals; seed 2, 30 generations of 14 x 3,000 deals: 1.054 ± 0.017, by similar weights
(own chain length worth about twice the default, stranded pips 2.5x). As the searcher's own
rollout policy (the search option ``rollout_weights=tuned_4p``, dropped from the search core
after commit c497747) it moved ISMCTS's 4p share by +0.01 ± 0.08 (``bench/bench_ismcts.py``).
The commands of each figure: ``experiments/tune_commander/README.md``.

Run: ``python -m experiments.tune_commander.tune_commander [--players 4] [--generations 15]
[--population 12] [--deals 1500] [--check 10000] [--seed 1]``. Prints the tuned weights as a
CommanderWeights mapping (``Commander(game, weights={...})``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
from collections.abc import Sequence
from typing import Any

import numpy as np

from omega_cluster.games import make_game
from omega_cluster.games.mexican_train.officers.weights import TERMS, CommanderWeights

# terms that never decide a move under single-round, must-play, strict-double rules
FROZEN = ("campaign_dump", "cover_double", "goes_out", "draw", "pass_turn")

_GAME: Any = None


def _setup(players: int) -> None:
    global _GAME
    _GAME = make_game("mexican_train", players=players, rounds=1)


def _share(job: tuple[Sequence[float], int, int]) -> float:
    """Fair share of a Commander with ``weights`` in every seat of ``deals`` deals from
    ``first``, the other seats default Commanders."""
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    weights, first, deals = job
    n = _GAME.num_players
    base = CommanderWeights().vector()
    total = 0.0
    for seat in range(n):
        per_seat = [base] * n
        per_seat[seat] = tuple(weights)
        jit = CompiledCommander(_GAME, per_seat, CommanderWeights().danger_hand_size, 60)
        for d in range(first, first + deals):
            returns = jit.playout_returns(_GAME.new_initial_state(seed=d))
            assert returns is not None
            total += returns[seat]
    return total / deals  # n x mean return over the n seats' games


def _fair_shares(pool: Any, candidates: list[np.ndarray], first: int, deals: int) -> list[float]:
    chunks = 4  # split each candidate's deals so both workers stay busy
    step = deals // chunks
    jobs = [(tuple(c), first + k * step, step) for c in candidates for k in range(chunks)]
    parts = pool.map(_share, jobs)
    return [sum(parts[i * chunks : (i + 1) * chunks]) / chunks for i in range(len(candidates))]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="experiments.tune_commander.tune_commander", description=__doc__
    )
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--generations", type=int, default=15)
    parser.add_argument("--population", type=int, default=12)
    parser.add_argument("--deals", type=int, default=1500)
    parser.add_argument("--check", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args, _ = parser.parse_known_args(argv)
    rng = np.random.default_rng(args.seed)
    base = np.array(CommanderWeights().vector())
    free = [i for i, name in enumerate(TERMS) if name not in FROZEN]
    scale = np.maximum(np.abs(base), 1.0)  # steps relative to each weight's size
    mean, sigma = base.copy(), 0.3
    mu = args.population // 2
    ranks = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
    ranks /= ranks.sum()
    deal = 10_000_000 * args.seed
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers, initializer=_setup, initargs=(args.players,)) as pool:
        for gen in range(args.generations):
            cands = [mean.copy()]  # the mean itself, for the log
            for _ in range(args.population - 1):
                c = mean.copy()
                c[free] += sigma * scale[free] * rng.standard_normal(len(free))
                cands.append(c)
            shares = _fair_shares(pool, cands, deal, args.deals)
            deal += args.deals
            order = np.argsort(shares)[::-1][:mu]
            mean = sum(r * cands[i] for r, i in zip(ranks, order, strict=True))
            sigma *= 0.93
            print(
                f"gen {gen:>2}: mean's share {shares[0]:.3f}, best {max(shares):.3f}, "
                f"sigma {sigma:.3f}",
                flush=True,
            )
        check = _fair_shares(pool, [mean], 1_000_000_000 + deal, args.check)[0]
    n = args.players
    half = 1.96 * math.sqrt(check / n * (1 - check / n) / (n * args.check)) * n
    print(
        f"tuned weights, fair share vs default Commanders on {args.check} fresh deals x {n} "
        f"seats: {check:.3f} ± {half:.3f}"
    )
    tuned = {name: round(float(x), 3) for name, x in zip(TERMS, mean, strict=True)}
    print({k: v for k, v in tuned.items() if k not in FROZEN})


if __name__ == "__main__":
    main()
