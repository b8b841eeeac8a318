"""Torch threads: two arenas of a pure network side by side, torch's default threads vs pinned.

The finding it reproduces: a new user runs two arenas at once on a small machine and each is ten
times slower than one alone, because torch starts one intra-op thread per core in every process
and a small forward pass (one position at a time) wakes them all; the processes spin-wait against
each other for the cores. :func:`omega_cluster.model.threads.pin_threads` (1 thread: what the
arena, the bench command, self-play actors and bench workers now do) removes the loss.

Each arena is a process of its own (``python -m bench.bench_threads --child``) playing
Mexican Train 2p single rounds between two copies of a pure network (the greedy policy, no search)
of the default run's model (``conf/model/default.yaml``, random weights). Its environment has no
``OMP_NUM_THREADS``/``MKL_NUM_THREADS``, so "default" is torch's own default. The arenas build
everything first, then start their matches together on a signal; each reports its match time and
the threads it ran with. Printed: two side by side with the default threads, two side by side
pinned to one, and one alone pinned (the reference of what one arena costs); the figure is the
default / pinned ratio of the side-by-side wall times. ``--quick``: 20 games instead of 200.
Run: ``python -m bench.bench_threads``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.results import Figure, record

GAMES = 200
ROOT = Path(__file__).resolve().parents[1]


def _child(games: int, threads: str) -> None:
    """One arena: build, say ``ready``, wait for ``go`` on stdin, play, print a JSON report."""
    import torch

    from omega_cluster.config.load import load_settings
    from omega_cluster.eval.arena import play_match
    from omega_cluster.model import NetworkPlayer, pin_threads
    from omega_cluster.wiring import build_encoder, build_game, build_model

    if threads != "default":
        pin_threads(int(threads))
    settings = load_settings(["run=default"])
    game = build_game(settings)
    encoder = build_encoder(settings, game)
    model = build_model(settings, game, encoder)
    players = [NetworkPlayer(game, model, encoder, name=f"net{i}") for i in range(2)]
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.perf_counter()
    result = play_match(game, players, games=games, seed=0)
    seconds = time.perf_counter() - start
    report = {"seconds": seconds, "games": result.games, "threads": torch.get_num_threads(),
              "parameters": model.num_parameters()}  # fmt: skip
    print(json.dumps(report), flush=True)


def _arenas(count: int, games: int, threads: str) -> tuple[float, list[dict[str, float]]]:
    """``count`` arenas started together: the wall time from the signal until all have reported,
    and each one's report."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "bench.bench_threads", "--child", str(games), threads]
    procs = [subprocess.Popen(command, cwd=ROOT, env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(count)]  # fmt: skip
    try:
        for p in procs:
            assert p.stdout is not None
            line = p.stdout.readline().strip()
            if line != "ready":
                raise RuntimeError(f"arena process did not start (said {line!r})")
        start = time.perf_counter()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        reports = [json.loads(p.communicate()[0]) for p in procs]
        return time.perf_counter() - start, reports
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == "--child":
        _child(int(args[1]), args[2])
        return
    quick = "--quick" in args
    games = 20 if quick else GAMES
    print(f"pure-network arenas, Mexican Train 2p single rounds, {games} games each, the default "
          f"run's model (random weights), {os.cpu_count()} CPUs")  # fmt: skip
    rows = [("2 side by side, torch default", 2, "default"), ("2 side by side, pinned 1", 2, "1"),
            ("1 alone, pinned 1", 1, "1")]  # fmt: skip
    walls: dict[str, float] = {}
    print(f"{'':<32}{'wall s':>8}{'threads':>9}{'games/s per arena':>19}")
    for label, count, threads in rows:
        wall, reports = _arenas(count, games, threads)
        walls[label] = wall
        used = ",".join(str(int(r["threads"])) for r in reports)
        rate = sum(r["games"] / r["seconds"] for r in reports) / len(reports)
        print(f"{label:<32}{wall:>8.1f}{used:>9}{rate:>19.1f}")
    default, pinned = walls[rows[0][0]], walls[rows[1][0]]
    alone = walls[rows[2][0]]
    print(f"default / pinned = {default / pinned:.1f}x; pinned side by side / alone = "
          f"{pinned / alone:.2f}x")  # fmt: skip
    figure = Figure(
        name=f"two pure-network arenas side by side ({games} Mexican Train 2p games each, default "
        "model), torch's default threads",
        figure=f"{default:.1f} s",
        reference=f"pinned to 1 thread {pinned:.1f} s (one alone {alone:.1f} s)",
        ratio=f"{default / pinned:.1f}× slower unpinned",
        command="python -m bench.bench_threads",
    )
    record("bench_threads", [figure], quick=quick)


if __name__ == "__main__":
    main()
