"""``cluster.torch_threads`` reaches every process that plays with a network, on a real local Ray.

A smoke run of Kuhn poker (one iteration: two self-play chunks, one gate) with two self-play
actors and two bench workers. Each chunk's report carries the torch threads its actor played with;
after the gate every self-play actor, bench worker and the gatekeeper is asked for
``torch.get_num_threads()`` in its own process. Ray's workers start with ``OMP_NUM_THREADS`` set
to a count *other* than the configured one, so only the pin can make the figures match; the
count configured is not the default, so only the setting can have made it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from omega_cluster.cluster import RayBackend, is_retryable
from omega_cluster.config import load_settings
from omega_cluster.pipeline.driver import Observer, Pipeline, RunPaths
from omega_cluster.service import ray_backend

pytestmark = pytest.mark.xdist_group("ray")


def _threads_of(handle: Any) -> int:
    """``torch.get_num_threads()`` inside the actor's own process."""

    def ask(self: Any) -> int:
        import torch

        return int(torch.get_num_threads())

    return int(ray.get(handle.__ray_call__.remote(ask)))


class _Threads(Observer):
    """Collects the chunks' reported threads and, after the gate, each actor's own count."""

    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None
        self.chunks: list[tuple[int, int]] = []  # (actor, torch threads)
        self.actors: dict[str, int] = {}

    def on_start(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def on_chunk(self, report: Any, state: Any) -> None:
        self.chunks.append((report.actor, report.torch_threads))

    def on_gate(self, outcome: Any, row: Any, state: Any) -> None:
        assert self.pipeline is not None
        backend = self.pipeline.backend
        assert isinstance(backend, RayBackend)
        for i, handle in enumerate(backend.selfplay):
            self.actors[f"selfplay{i}"] = _threads_of(handle)
        for i, handle in enumerate(backend.bench_workers):
            self.actors[f"bench{i}"] = _threads_of(handle)
        self.actors["gatekeeper"] = _threads_of(backend.gatekeeper)


@pytest.fixture
def threads() -> Iterator[int]:
    """A Ray whose workers start with torch's threads set to something else: 2 threads wanted
    (not the default 1), 1 in the workers' environment (Ray's own choice too)."""
    wanted = 2
    if ray.is_initialized():  # another module's Ray: this one needs its own worker env
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"OMP_NUM_THREADS": str(3 - wanted)}})  # fmt: skip
    try:
        yield wanted
    finally:
        ray.shutdown()


def test_every_actor_that_plays_runs_the_configured_torch_threads(
    threads: int, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    settings = load_settings(
        ["run=smoke", "game=kuhn_poker", f"run.dir={run}", "tracking.enabled=false",
         "run.progress=false", "run.iterations=1", "cluster.self_play_actors=2",
         "cluster.bench_workers=2", f"cluster.torch_threads={threads}"]
    )  # fmt: skip
    seen = _Threads()
    pipeline = Pipeline(settings, RunPaths(run), ray_backend, observers=[seen],
                        is_retryable=is_retryable)  # fmt: skip
    try:
        state = pipeline.run()
    finally:
        pipeline.backend.shutdown()
    assert state.decisions == 1
    assert seen.chunks and all(t == threads for _, t in seen.chunks), seen.chunks
    expected = ["selfplay0", "selfplay1", "bench0", "bench1", "gatekeeper"]
    assert seen.actors == dict.fromkeys(expected, threads)
