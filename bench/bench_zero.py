"""A run from nothing (``run=zero``) against OpenSpiel's reference bots, and those bots' ladder.

``python -m bench.bench_zero --run runs/<run dir> [--minutes 15 30 60] [--games 200]
[--workers 2] [--seed S] [--save]``: at each minute of the run, the champion it had then (the last
promotion decided before that minute; ``v0`` before any; without ``--minutes``, the run's final
champion at the run's last decision) plays each reference bot — OpenSpiel's ``MCTSBot`` with
random rollouts at 100 and 1,000 simulations (``openspiel_mcts:<n>``: the evaluation of
OpenSpiel's own AlphaZero), and on tic-tac-toe also at 10,000 simulations, which plays it
perfectly enough that a perfect player never loses to it — in ``--games`` games, each deal once
per seat, as the two players its weights make: the search at the gate's budget
(``gate.bench_simulations``, PUCT on the network's prior and value) and the network alone
(greedy). Each line gives W-D-L and the score (a draw a half) with its 95% Wilson interval; the
deals derive from ``--seed`` (never the run's own seed, whose anchor games the run has already
played). ``--save`` records one row per (minute, player) in ``docs/results/bench_zero.json``
(the ``zero`` table of ``docs/results.md``: the minutes, the self-play games stored by then, the
champion and its scores).

``python -m bench.bench_zero --ladder connect_four [--games 200]``: the game preset's anchors
(``gate.anchors`` of ``conf/game/<game>.yaml``: random and the MCTS bots) against each other,
every pair in ``--games`` seat-swapped games, rated by Bradley-Terry with random fixed at 1000:
the anchors' Elo the preset gives them, so that a run's anchored rating curve is on the bots'
measured scale.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_champion import _init, _play
from bench.results import Figure, record
from omega_cluster.config import load_settings
from omega_cluster.data import ShardStore
from omega_cluster.eval.anchors import KINDS, play_anchor
from omega_cluster.eval.arena import play_match
from omega_cluster.eval.gatekeeper import BenchWorker, GateServiceConfig
from omega_cluster.eval.rating import bradley_terry
from omega_cluster.eval.stats import wilson_interval
from omega_cluster.games.registry import make_game
from omega_cluster.model.registry import ModelRegistry, ModelVersion
from omega_cluster.pipeline.run_state import RunPaths
from omega_cluster.wiring import gate_service_config, load_run_settings

REFERENCES = ("openspiel_mcts:100", "openspiel_mcts:1000")
PERFECT = {"openspiel:tic_tac_toe": "openspiel_mcts:10000"}  # a game's perfect-play test
COMMAND = "python -m bench.bench_zero"


@dataclass(frozen=True)
class Score:
    """The champion's record against one reference bot."""

    opponent: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def __str__(self) -> str:
        ci = wilson_interval(self.wins + 0.5 * self.draws, self.games)
        return (f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] "
                f"({self.wins}-{self.draws}-{self.losses})")  # fmt: skip


def champion_at(registry: ModelRegistry, minute: float) -> ModelVersion:
    """The run's champion ``minute`` minutes after it began (``v0`` was made): the last version
    promoted by then (v0 before any promotion)."""
    start = registry.get(0).created
    promoted = [v for v in registry.versions if v.version > 0
                and v.status in ("champion", "retired")
                and v.decided is not None and v.decided <= start + 60.0 * minute]  # fmt: skip
    return max(promoted, key=lambda v: v.version, default=registry.get(0))


def games_at(store: ShardStore, start: float, minute: float) -> int:
    """Self-play games stored in the run's first ``minute`` minutes."""
    end = start + 60.0 * minute
    return sum(len(e.game_ids or ()) for e in store.entries() if e.created_unix <= end)


def run_minutes(registry: ModelRegistry) -> float:
    """Minutes from v0 to the run's last gate decision (0 before any)."""
    start = registry.get(0).created
    decided = [v.decided for v in registry.versions if v.decided is not None]
    return max((t - start) / 60.0 for t in decided) if decided else 0.0


@contextlib.contextmanager
def bench_play(config: GateServiceConfig, workers: int) -> Iterator[Callable[[Any], list[Any]]]:
    """A ``play`` for :func:`play_anchor`: a pool of ``workers`` bench-worker processes, or this
    process alone (``workers`` <= 1)."""
    if workers <= 1:
        worker = BenchWorker(config)
        yield lambda tasks: [worker.play(t) for t in tasks]
        return
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(config,)) as pool:
        yield lambda tasks: list(pool.map(_play, tasks))


def bench(
    run_dir: Path, minutes: Sequence[float] | None, games: int, workers: int, seed: int
) -> list[dict[str, Any]]:
    """Every (minute, player kind) row: the champion then and its scores (module docstring)."""
    settings = load_run_settings(run_dir, [f"run.seed={seed}"])
    registry = ModelRegistry(run_dir, game=settings.game.name)
    store = ShardStore(RunPaths(run_dir, settings.run.shard_store).store_uri)
    start = registry.get(0).created
    config = gate_service_config(settings)
    assert config.fleet is not None
    table = config.fleet.slices[0]
    opponents = [*REFERENCES, *filter(None, [PERFECT.get(settings.game.name)])]
    rows = []
    with bench_play(config, workers) as play:
        for minute in minutes or [round(run_minutes(registry), 1)]:
            champion = champion_at(registry, minute)
            played = games_at(store, start, minute)
            for kind in KINDS:
                began = time.perf_counter()
                scores = []
                for opponent in opponents:
                    r = play_anchor(config, champion.version, champion.uri, play,
                                    anchor=opponent, table=table, games=games, kind=kind)  # fmt: skip
                    scores.append(Score(opponent, r.wins, r.draws, r.losses))
                player = (f"search, {settings.gate.bench_simulations} simulations"
                          if kind == "search" else "network alone")  # fmt: skip
                rows.append({"game": settings.game.name, "minutes": minute, "games": played,
                             "champion": champion.version, "player": player, "scores": scores})  # fmt: skip
                print(f"{minute:g} min ({played} self-play games), champion v{champion.version}, "
                      f"{player}: " + "; ".join(f"vs {s.opponent} {s}" for s in scores)
                      + f" ({time.perf_counter() - began:.0f} s)", flush=True)  # fmt: skip
    return rows


def figures(rows: Sequence[dict[str, Any]], command: str) -> list[Figure]:
    """The ``zero`` table's rows (one per minute and player)."""
    out = []
    for row in rows:
        by = {s.opponent: s for s in row["scores"]}
        perfect = by.get(PERFECT.get(row["game"], ""))
        cells = (f"{row['minutes']:g}", str(row["games"]), f"v{row['champion']}", row["player"],
                 *(str(by[o]) for o in REFERENCES),
                 f"{perfect.losses} losses in {perfect.games}" if perfect else "")  # fmt: skip
        out.append(Figure(
            name=f"zero champion at {row['minutes']:g} min, {row['player']}, {row['game']}",
            figure=cells[4], reference=REFERENCES[0], command=command, table="zero",
            cells=cells,
        ))  # fmt: skip
    return out


def ladder(game_preset: str, games: int, seed: int) -> dict[str, float]:
    """The preset's anchors rated against each other (module docstring): spec -> Elo."""
    settings = load_settings(["run=zero", f"game={game_preset}"])
    bots = list(settings.gate.anchors)
    game = make_game(settings.game.name, **dict(settings.game.params))
    wins, draws = np.zeros((len(bots), len(bots))), np.zeros((len(bots), len(bots)))
    for i, j in itertools.combinations(range(len(bots)), 2):
        match = play_match(game, [bots[i], bots[j]], games=games, seed=seed)
        for r in match.records:
            a, b = (r.win_shares[r.seating.index(k)] for k in (0, 1))
            if a == b:
                draws[i, j] += 1
                draws[j, i] += 1
            else:
                wins[(i, j) if a > b else (j, i)] += 1
        print(f"{bots[i]} vs {bots[j]}: W-D-L {wins[i, j]:.0f}-{draws[i, j]:.0f}-{wins[j, i]:.0f}",
              flush=True)  # fmt: skip
    anchor = "random" if "random" in bots else bots[0]
    fit = bradley_terry(bots, wins, draws, anchor=anchor, anchor_elo=1000.0)
    for bot, elo, err in zip(fit.players, fit.elo, fit.stderr, strict=True):
        print(f"{bot}: {elo:.0f} ± {err:.0f} (preset: {settings.gate.anchors[bot]:g})")
    return dict(zip(fit.players, fit.elo, strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", type=Path, help="a run=zero run directory")
    what.add_argument("--ladder", metavar="GAME", help="a game preset: connect_four, tic_tac_toe")
    parser.add_argument("--minutes", type=float, nargs="+", default=None)
    parser.add_argument("--games", type=int, default=200, help="per bot and player kind")
    parser.add_argument("--workers", type=int, default=2, help="bench processes (1: this one)")
    parser.add_argument("--seed", type=int, default=2027, help="the bench deals' seed")
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    if args.ladder:
        ladder(args.ladder, args.games, args.seed)
        return 0
    rows = bench(args.run, args.minutes, args.games, args.workers, args.seed)
    minutes = (
        "" if args.minutes is None else " --minutes " + " ".join(f"{m:g}" for m in args.minutes)
    )
    command = f"{COMMAND} --run {args.run}{minutes} --games {args.games} --seed {args.seed}"
    record("bench_zero", figures(rows, command), quick=not args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
