"""The tuner's ``map`` over Ray actors: one actor per core, each generation's jobs in batches.

:class:`RayMap` is a ``map(fn, jobs)`` for :class:`omega_cluster.eval.tuning.Tuner`: the jobs are
cut into a few batches per actor (so the actors stay busy while batches differ in length), each
batch runs ``fn`` over its jobs in an actor (which keeps its game, target and compiled players
between batches), and the scores come back in job order. ``embedded`` starts a Ray of this
machine on 127.0.0.1 (ended by :meth:`RayMap.close`); ``local`` joins the Ray already running here
(``ray start --head``; left running).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

import ray

from omega_cluster.cluster.backend import shutdown_ray, start_embedded_ray
from omega_cluster.eval.tuning import TuneJob

__all__ = ["RayMap"]

BATCHES_PER_ACTOR = 4


@ray.remote
class TuneActor:
    """Plays batches of tuning jobs."""

    def run(self, fn: Callable[[TuneJob], float], jobs: list[TuneJob]) -> list[float]:
        return [fn(job) for job in jobs]


class RayMap:
    """``map(fn, jobs)`` over ``workers`` actors (default: one per CPU of the cluster)."""

    def __init__(self, cluster: str = "embedded", workers: int | None = None) -> None:
        if cluster not in ("embedded", "local"):
            raise ValueError(f"cluster={cluster!r}: RayMap runs on embedded or local")
        self._started = False
        if not ray.is_initialized():
            if cluster == "embedded":
                start_embedded_ray(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False)
                self._started = True
            else:
                ray.init(address="auto", logging_level=logging.WARNING)
        count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.actors = [TuneActor.remote() for _ in range(count)]  # type: ignore[attr-defined]

    def __call__(self, fn: Callable[[TuneJob], float], jobs: Sequence[TuneJob]) -> list[float]:
        if not jobs:
            return []
        batches = max(1, min(len(jobs), BATCHES_PER_ACTOR * len(self.actors)))
        size = -(-len(jobs) // batches)
        parts: list[Any] = []
        for k, first in enumerate(range(0, len(jobs), size)):
            actor = self.actors[k % len(self.actors)]
            parts.append(actor.run.remote(fn, list(jobs[first : first + size])))
        return [score for part in ray.get(parts) for score in part]

    def close(self) -> None:
        """End the actors, and the Ray this map started."""
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
        if self._started:
            shutdown_ray()
            self._started = False
