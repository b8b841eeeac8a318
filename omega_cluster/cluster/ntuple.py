"""N-tuple table training over Ray: actors play games on a copy of the tables, a learner merges.

Each :class:`TableActor` holds the run's :class:`~omega_cluster.train.ntuple.GameKit` (the game,
its patterns, the heuristic and the policy) and plays a batch of games on the tables it is handed
(an object-store copy: ``ray.put`` once per broadcast, shared by every actor), returning their
sparse updates. The learner (this driver process, :func:`train_tables_ray`) merges the batches in
the order it sent them (so a run does not depend on which actor finished first), into its own
tables and temporal-coherence accumulators, and puts a new copy in the object store every
``broadcast_every`` merges; the games in flight finish on the copy they
started with (their values a little stale, as an asynchronous TD learner's are). Validation and
saving are the one-process loop's (:class:`~omega_cluster.train.ntuple.TableTrainer`).

``start_table_ray(workers)`` starts an embedded Ray on 127.0.0.1 with ``workers`` CPUs (or joins
the Ray this process already has).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import ray

from omega_cluster.cluster.backend import start_embedded_ray
from omega_cluster.search.ntuple import TupleTables
from omega_cluster.train.ntuple import (
    GameKit,
    GameResult,
    GameTask,
    RunCounters,
    TableTrainer,
    play_games,
)
from omega_cluster.train.ntuple.trainer import Report, after_merge

__all__ = ["TableActor", "start_table_ray", "train_tables_ray"]


@ray.remote
class TableActor:
    """Plays training games on the tables it is given; returns their sparse updates."""

    def __init__(self, kit: GameKit) -> None:
        self.kit = kit

    def play(self, tables: TupleTables, tasks: list[GameTask]) -> list[GameResult]:
        return play_games(self.kit, tables, tasks)


def start_table_ray(workers: int) -> bool:
    """Start an embedded Ray with ``workers`` CPUs on 127.0.0.1; False when this process had
    one already (the caller then leaves it running)."""
    if ray.is_initialized():
        return False
    start_embedded_ray(num_cpus=workers, include_dashboard=False)
    return True


def train_tables_ray(
    trainer: TableTrainer,
    workers: int,
    *,
    broadcast_every: int = 1,
    out: str | Path | None = None,
    report: Report | None = None,
) -> RunCounters:
    """Train with ``workers`` actors (module doc) until the trainer's budget is spent; saves at
    every validation and at the end (also when interrupted)."""
    if workers < 1 or broadcast_every < 1:
        raise ValueError("workers and broadcast_every must be >= 1")
    started = time.monotonic()
    seconds0 = trainer.counters.seconds
    actors = [TableActor.remote(trainer.kit) for _ in range(workers)]  # type: ignore[attr-defined]
    tables_ref = ray.put(trainer.tables)
    pending: dict[Any, Any] = {}

    def submit(actor: Any) -> None:
        tasks = trainer.tasks(trainer.config.batch)
        if tasks:
            pending[actor.play.remote(tables_ref, tasks)] = actor

    try:
        for actor in actors:
            submit(actor)
        merges = 0
        while pending:
            # merged in the order submitted, not the order finished: the run does not depend
            # on which actor the machine happened to run first (a finished later batch waits)
            ready = next(iter(pending))
            actor = pending.pop(ready)
            last = trainer.counters.games
            trainer.apply(ray.get(ready))
            trainer.counters.seconds = seconds0 + time.monotonic() - started
            merges += 1
            if merges % broadcast_every == 0:
                tables_ref = ray.put(trainer.tables)
            if not trainer.done(started):
                submit(actor)
            after_merge(trainer, last, out, report)
    finally:
        for actor in actors:
            ray.kill(actor)
        trainer.counters.seconds = seconds0 + time.monotonic() - started
        if out is not None:
            trainer.save(out)
    return trainer.counters
