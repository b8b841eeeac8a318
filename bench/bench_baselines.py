"""The service against an outside baseline, RLlib's PPO, at equal wall-clock time.

``python -m bench.bench_baselines --minutes M --seed S [--games 400] [--games-list ...]
[--parallel] [--save]`` trains, for each game of the list, the service (``omega-cluster train``,
the default run preset, stopped by ``run.max_minutes=M``) and the PPO baseline (``omega-cluster
baseline rllib_ppo minutes=M``: self-play against a league of frozen snapshots), then plays

* each side's final champion against the game's heuristic (Mexican Train: Commander): the
  service's champion as the greedy network alone and as its search (the run's own search with the
  network in its leaf, at the gate's bench simulations), and the PPO policy;
* head to head: the service's network, and its search, against the PPO policy.

Every match is ``--games`` games, seats rotated over shared deals, and prints the first player's
score (wins + half the draws, per game) with its 95% Wilson interval. The equal-resources reading
is the default: the two sides train one after the other, each with the machine's 2 cores for M
minutes. ``--parallel`` trains both at once, each pinned to one core (``taskset``), which halves
the time and gives each side one core. The service counts its minutes from after its set-up
(Ray, its first champion); the baseline's ``minutes=`` is a limit from its command's start
(imports, Ray and RLlib's build included), so the row also shows each side's measured wall
time, set-up included.

Every seed (the service's run, each match) derives from ``--seed``: give a fresh one per run,
never a reused one. PPO's RLlib sampling is not seeded by the baseline command. ``--save``
records one row per game in ``docs/results/bench_baselines.json`` (the ``baselines`` table of
``docs/results.md``; Mexican Train's head-to-head also goes to the README's headline table).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.results import Figure, record
from omega_cluster.eval.stats import wilson_interval
from omega_cluster.games.chance import derive_seed

GAMES = {  # game -> (its parameters, as key=value, and its heuristic)
    "mexican_train": ({"players": "2", "rounds": "1"}, "commander"),
    "goofspiel": ({"num_cards": "13"}, "heuristic"),
    "leduc_poker": ({}, "heuristic"),
}
WORKERS = 2  # arena processes: the machine's 2 cores
CHUNKS = 4  # arena chunks per match (each a multiple of the table size)


class BenchError(Exception):
    """An expected failure (a training command that failed, a bad argument): one line."""


@dataclass(frozen=True)
class Score:
    """The first player's score over a match, with its 95% Wilson interval."""

    score: float
    low: float
    high: float
    games: int

    def text(self) -> str:
        return f"{self.score:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _chunk(task: tuple[str, dict[str, str], list[str], int, int]) -> list[float]:
    """Play one chunk of a match in this process; the first player's win share per game."""
    from omega_cluster.cli.args import build_game
    from omega_cluster.eval.arena import play_match
    from omega_cluster.model.threads import pin_threads

    name, params, seats, games, seed = task
    pin_threads(1)
    game = build_game(name, dict(params), "bench_baselines", ())
    result = play_match(game, seats, games=games, seed=seed)
    return [r.win_shares[r.seat_of(0)] for r in result.records]


def match(
    pool: ProcessPoolExecutor,
    game: str,
    params: dict[str, str],
    seats: list[str],
    games: int,
    seed: int,
) -> Score:
    """``games`` games of ``seats`` in ``CHUNKS`` chunks (seeds derived from ``seed``)."""
    n = int(params.get("players", "2"))
    per = max(n, (games // CHUNKS) // n * n)
    sizes = [per] * (games // per) + ([games % per] if games % per else [])
    tasks = [(game, params, seats, size, derive_seed(seed, "chunk", k))
             for k, size in enumerate(sizes)]  # fmt: skip
    shares = [s for chunk in pool.map(_chunk, tasks) for s in chunk]
    ci = wilson_interval(sum(shares), len(shares))
    return Score(ci.estimate, ci.low, ci.high, len(shares))


def _command(argv: list[str], log: Path, core: int | None) -> subprocess.Popen[bytes]:
    """Start one training command (pinned to ``core`` if given), its output into ``log``."""
    prefix = ["taskset", "-c", str(core)] if core is not None else []
    if core is not None and shutil.which("taskset") is None:
        raise BenchError("--parallel needs taskset (util-linux) to pin each side to one core")
    with log.open("wb") as out:
        return subprocess.Popen(prefix + argv, stdout=out, stderr=subprocess.STDOUT)


def _wait(proc: subprocess.Popen[bytes], what: str, log: Path) -> None:
    if proc.wait() != 0:
        tail = [x for x in log.read_text(errors="replace").splitlines() if x.strip()][-1:]
        raise BenchError(f"{what} failed (exit {proc.returncode}): {' '.join(tail)} (log {log})")


def train_both(
    game: str, params: dict[str, str], minutes: float, seed: int, work: Path, parallel: bool
) -> tuple[Path, Path, float, float]:
    """Train the service and PPO for ``minutes`` each; their run dirs and wall seconds."""
    python = [sys.executable, "-m", "omega_cluster"]
    run, ppo = work / f"{game}-service", work / f"{game}-ppo"
    for path in (run, ppo):
        if path.exists():
            raise BenchError(f"{path} exists already: give --work a fresh directory")
    one_core = ["cluster.self_play_actors=1", "cluster.bench_workers=1"] if parallel else []
    game_keys = [f"game.params.{k}={v}" for k, v in params.items()]
    service = [*python, "train", f"game={game}", *game_keys, f"run.max_minutes={minutes}",
               "run.iterations=1000000", f"run.dir={run}", f"run.seed={seed % 2**31}",
               "run.progress=false", *one_core]  # fmt: skip
    baseline = [*python, "baseline", "rllib_ppo", f"game={game}",
                *[f"{k}={v}" for k, v in params.items()], f"minutes={minutes}", f"out={ppo}",
                f"cpus={1 if parallel else 2}"]  # fmt: skip
    walls = {}
    jobs = [("service", service, 0), ("rllib_ppo", baseline, 1)]
    started: list[tuple[str, subprocess.Popen[bytes], Path, float]] = []
    for what, argv, core in jobs:
        log = work / f"{game}-{what}.log"
        print(f"  {game}: training {what} for {minutes:g} min (log {log})", flush=True)
        proc = _command(argv, log, core if parallel else None)
        started.append((what, proc, log, time.perf_counter()))
        if not parallel:
            _wait(proc, f"{game}: {what}", log)
            walls[what] = time.perf_counter() - started[-1][3]
    for what, proc, log, t0 in started if parallel else []:
        _wait(proc, f"{game}: {what}", log)
        walls[what] = time.perf_counter() - t0
    print(f"  {game}: trained (service {walls['service']:.0f} s, "
          f"PPO {walls['rllib_ppo']:.0f} s wall)", flush=True)  # fmt: skip
    return run, ppo, walls["service"], walls["rllib_ppo"]


def _search_spec(run: Path) -> str:
    """The service's champion as its search: the run's own search leaf, the gate's budget."""
    from omega_cluster.wiring import load_run_settings

    return f"champion:{run}:leaf={load_run_settings(run, []).search.leaf}"


def _exploitability(run: Path, game: str) -> list[dict[str, Any]]:
    """The exploitability the run's gate measured at each promotion (empty where not solved)."""
    from omega_cluster.pipeline.run_state import PipelineState

    return PipelineState.load(run / "pipeline.json", game=game).exploitability


def bench_game(
    pool: ProcessPoolExecutor, game: str, args: argparse.Namespace, work: Path
) -> dict[str, str]:
    """Train both sides on ``game`` and play its five matches; the row of the table."""
    params, heuristic = GAMES[game]
    seed = derive_seed(args.seed, game)
    run, ppo, wall_service, wall_ppo = train_both(
        game, params, args.minutes, seed, work, args.parallel
    )
    solved = _exploitability(run, game)
    if solved:
        print(
            f"  {game}: the service's exploitability per champion (version, kind, value): "
            + ", ".join(f"v{e['version']} {e['player']} {e['value']:.3f}" for e in solved)
        )
    sides = {"service network": f"champion:{run}", "service search": _search_spec(run),
             "PPO": f"rllib:{ppo}"}  # fmt: skip
    pairs = [(a, heuristic) for a in sides] + [
        ("service network", "PPO"),
        ("service search", "PPO"),
    ]
    row = {"game": game, "minutes": f"{args.minutes:g}",
           "wall": f"service {wall_service / 60:.1f} min, PPO {wall_ppo / 60:.1f} min"}  # fmt: skip
    for a, b in pairs:
        t0 = time.perf_counter()
        seats = [sides[a], sides.get(b, b)]
        score = match(pool, game, params, seats, args.games, derive_seed(seed, "match", a, b))
        key = f"{a} vs {'heuristic' if b == heuristic else b}"
        row[key] = score.text()
        print(f"  {game}: {a} vs {b}: score {score.text()} over {score.games} games "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip
    return row


def figure(row: dict[str, str], games: int, command: str) -> Figure:
    """The record of one game's row (the ``baselines`` table; Mexican Train's is a headline)."""
    cells = tuple(row[c] for c in BASELINE_CELLS)
    return Figure(
        name=f"service vs RLlib PPO at equal wall-clock, {row['game']}",
        figure=row["service search vs PPO"],
        reference=f"RLlib PPO, {row['minutes']} min each on 2 cores ({games} games)",
        ratio="0.5 = equal strength",
        command=command,
        table="baselines",
        headline=f"{row['game']}: service (search) vs RLlib PPO, equal time"
        if row["game"] == "mexican_train"
        else "",
        cells=cells,
    )


BASELINE_CELLS = ("minutes", "wall", "service network vs heuristic",
                  "service search vs heuristic", "PPO vs heuristic", "service network vs PPO",
                  "service search vs PPO")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.bench_baselines", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--minutes", type=float, required=True, help="training minutes per side")
    parser.add_argument("--seed", type=int, required=True, help="a fresh seed for this run")
    parser.add_argument("--games", type=int, default=400, help="games per match (default 400)")
    parser.add_argument("--games-list", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--parallel", action="store_true", help="train both at once, one core each")
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    parser.add_argument("--work", type=Path, default=None, help="where the runs go (default: tmp)")
    args = parser.parse_args(argv)
    games = [g.strip() for g in args.games_list.split(",") if g.strip()]
    try:
        unknown = [g for g in games if g not in GAMES] or ([] if games else ["(none)"])
        if unknown:
            raise BenchError(
                f"--games-list: unknown game {unknown[0]!r}; allowed: {', '.join(GAMES)}"
            )
        if args.minutes <= 0 or args.games < 2:
            raise BenchError("--minutes must be > 0 and --games at least 2")
        work = args.work or Path(tempfile.mkdtemp(prefix="bench-baselines-"))
        work.mkdir(parents=True, exist_ok=True)
        rows = []
        with ProcessPoolExecutor(WORKERS) as pool:
            for game in games:  # each game's row is recorded as soon as it is measured
                rows.append(bench_game(pool, game, args, work))
                print(" | ".join(f"{k}: {v}" for k, v in rows[-1].items()), flush=True)
                if args.save:
                    record("bench_baselines", [figure(rows[-1], args.games, command(args, game))])
    except BenchError as err:
        print(f"bench_baselines: {err}", file=sys.stderr)
        return 1
    if not args.save:
        print("(no --save: nothing recorded in docs/results/)")
    return 0


def command(args: argparse.Namespace, game: str) -> str:
    """The command line that reproduces one game's row (its seed left to be given fresh)."""
    return (
        f"python -m bench.bench_baselines --minutes {args.minutes:g} --games {args.games} "
        f"--games-list {game} --seed <fresh>" + (" --parallel" if args.parallel else "")
    )


if __name__ == "__main__":
    raise SystemExit(main())
