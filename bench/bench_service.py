"""Self-play throughput of the Ray service with 1 and 2 SelfPlayActors (bar: ratio >= 1.8).

An embedded Ray with 2 CPUs (each :class:`~omega_cluster.cluster.actors.SelfPlayActor`
reserves one, as in the service), Mexican Train 2p single rounds at the ``run=smoke`` sizes
(ISMCTS, random-rollout leaf, 16 simulations per move, chunks of 8 games with 4 in flight). Each
actor plays the same fixed chunks (chunk seeds derive from the run seed and the chunk index, so
both actors play identical games, each into its own shard store): two actors do exactly twice
the work of one, and the ratio measures parallel scaling alone, not game-length noise.

Actor start-up (process spawn, imports, building the game and network) is excluded: both actors
are built once and play a 1-game warm-up chunk before any clock starts; the 1-actor figure uses
the first of them. A measurement submits every chunk at once (an actor runs its calls in order)
and stops when the last report is back; 1 and 2 actors alternate over the repetitions (other load
on the machine hits both alike) and the best of each counts. Printed: games/s and decisions/s
aggregated over the actors (total over wall time), the mean seconds per chunk inside an actor,
and 2 actors / 1 actor. The actors' CPU time (Linux ``/proc``) gives two diagnostics that hold
on a busy machine too: the CPU share the actors got (1: their cores were theirs alone) and the
decisions per CPU-second (the same for 1 and 2 actors: the actors do not slow each other down).
CPU figures are noisy on a shared machine (the load average is printed); ``--quick`` runs a
short check. Run: ``python -m bench.bench_service``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from omega_cluster.cluster import init_ray
from omega_cluster.cluster.actors import SelfPlayActor
from omega_cluster.config import Settings, load_settings
from omega_cluster.train.workers import ChunkReport, Weights
from omega_cluster.wiring import build_encoder, build_game, build_model, selfplay_worker_config

RAY_CPUS = 2
WARMUP_CHUNK = 1_000_000  # chunk index of the warm-up games (not among the measured ones)


@dataclass(frozen=True)
class Throughput:
    actors: int
    games: int
    decisions: int
    seconds: float  # wall time from submitting the chunks to the last report
    chunk_seconds: float  # mean time of one chunk inside its actor
    cpu_seconds: float | None  # CPU time the actor processes used meanwhile (None: unknown)

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds

    @property
    def cpu_share(self) -> float | None:
        """CPU time the actors got over what their cores could give (1: nothing else ran)."""
        return None if self.cpu_seconds is None else self.cpu_seconds / (self.seconds * self.actors)

    @property
    def decisions_per_cpu_s(self) -> float | None:
        return None if not self.cpu_seconds else self.decisions / self.cpu_seconds


def _pids(handles: list[Any]) -> list[int] | None:
    """The actors' process ids (Ray's private state API: None if it is not there)."""
    try:
        from ray._private.state import actors

        table = actors()
        return [int(table[h._actor_id.hex()]["Pid"]) for h in handles]
    except Exception:
        return None


def _cpu_seconds(pids: list[int] | None) -> float | None:
    """User + system CPU time of the processes (Linux /proc; None elsewhere)."""
    if pids is None:
        return None
    try:
        total = 0
        for pid in pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _settings() -> Settings:
    return load_settings(
        ["run=smoke", "game=mexican_train", f"cluster.num_cpus={RAY_CPUS}",
         "tracking.enabled=false", "run.progress=false"]
    )  # fmt: skip


def _measure(weights: Any, handles: list[Any], chunks: int, games: int) -> Throughput:
    """``chunks`` chunks of ``games`` games on each actor of ``handles``, timed together."""
    pids = _pids(handles)
    cpu_before = _cpu_seconds(pids)
    started = time.perf_counter()
    refs = [h.play_chunk.remote(weights, c, games) for h in handles for c in range(chunks)]
    reports: list[ChunkReport] = ray.get(refs)
    seconds = time.perf_counter() - started
    cpu_after = _cpu_seconds(pids)
    cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    return Throughput(
        len(handles),
        sum(r.games for r in reports),
        sum(r.decisions for r in reports),
        seconds,
        sum(r.seconds for r in reports) / len(reports),
        cpu,
    )


def _best(runs: list[Throughput]) -> Throughput:
    return max(runs, key=lambda t: t.decisions_per_s)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    chunks, repetitions = (2, 1) if quick else (4, 3)
    settings = _settings()
    c, s = settings.cluster, settings.search
    print(
        f"Mexican Train 2p single rounds, ISMCTS {s.simulations} simulations/move, leaf {s.leaf}; "
        f"{chunks} chunks of {c.games_per_chunk} games ({c.concurrent_games} in flight) per "
        f"actor, best of {repetitions}; embedded Ray with {RAY_CPUS} CPUs, one core per actor"
    )
    started_ray = init_ray(settings)
    runs: dict[int, list[Throughput]] = {1: [], 2: []}
    try:
        game = build_game(settings)
        model = build_model(settings, game, build_encoder(settings, game))
        weights = ray.put(Weights.of(model, version=0, uri="bench"))
        with tempfile.TemporaryDirectory() as tmp:
            handles = [
                SelfPlayActor.options(num_cpus=1, max_restarts=0).remote(  # type: ignore[attr-defined]
                    selfplay_worker_config(settings), i, str(Path(tmp) / f"actor{i}")
                )
                for i in range(2)
            ]
            # start-up is not measured: both actors are built and warm before the clock starts
            ray.get([h.play_chunk.remote(weights, WARMUP_CHUNK, 1) for h in handles])
            print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
            for _ in range(repetitions):  # interleaved: other load hits both alike
                for n in (1, 2):
                    runs[n].append(_measure(weights, handles[:n], chunks, c.games_per_chunk))
            for h in handles:
                ray.kill(h, no_restart=True)
    finally:
        if started_ray:
            ray.shutdown()
    one, two = _best(runs[1]), _best(runs[2])
    print(f"\n{'':<10}{'games':>7}{'decisions':>10}{'seconds':>9}{'games/s':>9}"
          f"{'decisions/s':>12}{'s/chunk':>9}{'cpu share':>10}{'dec/cpu-s':>10}")  # fmt: skip
    for t in (one, two):
        label = f"{t.actors} actor{'s' if t.actors > 1 else ''}"
        share = "-" if t.cpu_share is None else f"{t.cpu_share:.2f}"
        per_cpu = "-" if t.decisions_per_cpu_s is None else f"{t.decisions_per_cpu_s:.0f}"
        print(f"{label:<10}{t.games:>7}{t.decisions:>10}{t.seconds:>9.2f}{t.games_per_s:>9.2f}"
              f"{t.decisions_per_s:>12.1f}{t.chunk_seconds:>9.2f}{share:>10}{per_cpu:>10}")  # fmt: skip
    ratio = two.games_per_s / one.games_per_s
    print(
        f"2 actors / 1 actor: games/s {ratio:.2f}x, decisions/s "
        f"{two.decisions_per_s / one.decisions_per_s:.2f}x (issue bar: >= 1.8x)"
    )
    if one.decisions_per_cpu_s and two.decisions_per_cpu_s:
        # the work per CPU-second: equal means the actors do not slow each other down, so the
        # wall-clock ratio is 2x the ratio of the CPU shares they got (1 on an idle machine)
        print(
            f"decisions per CPU-second, 2 actors / 1 actor: "
            f"{two.decisions_per_cpu_s / one.decisions_per_cpu_s:.2f}x; CPU share 1 actor "
            f"{one.cpu_share:.2f}, 2 actors {two.cpu_share:.2f} (below 1: other processes ran)"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
