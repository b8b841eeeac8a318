"""Fault injection and resume on a real local Ray.

Faults are injected at fixed points of a smoke run by an Observer — the moment is exact, not a
timer — so each test knows what was in flight when the actor died:

* a self-play actor killed (``ray.kill``, Ray restarts it) and another whose worker *process*
  is killed (SIGKILL) while it plays a chunk: the chunk is re-run with ``retry=True``;
* the learner and the gatekeeper killed between calls: Ray restarts them, the learner from its
  checkpoint, and the next call goes through.

Each run must complete its gate decisions; every game reported finished is in exactly one
shard (no game id twice, the counts agree); the champion never regresses (every promotion won
its gate, exactly one champion). The resume test stops the driver after one decision and
starts a new one on the same run directory.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest

ray = pytest.importorskip("ray")  # ray is a dependency; this only names the import

from omega_cluster.cluster import RayBackend, is_retryable  # noqa: E402
from omega_cluster.config import load_settings  # noqa: E402
from omega_cluster.data import ShardStore  # noqa: E402
from omega_cluster.model.registry import ModelRegistry  # noqa: E402
from omega_cluster.pipeline.driver import Observer, Pipeline, RunPaths  # noqa: E402
from omega_cluster.service import ray_backend  # noqa: E402

pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Any:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _settings(run_dir: Path, *extra: str) -> Any:
    return load_settings(
        ["run=smoke", "game=leduc_poker", f"run.dir={run_dir}", "tracking.enabled=false",
         "run.progress=false", "cluster.self_play_actors=2", "run.games_per_iteration=32",
         *extra]
    )  # fmt: skip


def _check_run(run_dir: Path, decisions: int) -> None:
    """Every reported game in exactly one shard; the champion never regressed."""
    import json

    state = json.loads((run_dir / "pipeline.json").read_text())
    assert state["decisions"] >= decisions
    store = ShardStore(str(run_dir / "shards"))
    tables = [store.read(e) for e in store.entries()]
    game_ids = [g for t in tables for g in pc.unique(t.column("game_id")).to_pylist()]
    assert len(game_ids) == len(set(game_ids)), "a game was written to two shards"
    assert len(game_ids) == state["games"], "reported games and games in shards differ"
    assert sum(t.num_rows for t in tables) == state["records"]
    registry = ModelRegistry(run_dir, game="leduc_poker")
    champions = [v for v in registry.versions if v.status == "champion"]
    assert len(champions) == 1
    for row in state["elo_log"]:
        if row["verdict"] == "promote":
            assert row["score"] > 0.5, f"v{row['version']} was promoted without winning its gate"


class _Injector(Observer):
    """Runs ``action(pipeline)`` once, on the ``on``-th event named ``event``."""

    def __init__(self, event: str, on: int, action: Any) -> None:
        self.event, self.on, self.action = event, on, action
        self.seen = 0
        self.pipeline: Pipeline | None = None
        self.fired = False

    def on_start(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_") and name not in ("on_start", "on") and name == self.event:

            def hook(*args: Any) -> None:
                self.seen += 1
                if self.seen == self.on and not self.fired:
                    self.fired = True
                    assert self.pipeline is not None
                    self.action(self.pipeline)

            return hook
        return object.__getattribute__(self, name)


def _pid(handle: Any) -> int:
    return int(ray.get(handle.__ray_call__.remote(lambda self: os.getpid())))


def test_killed_actors_restart_and_the_run_completes(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "run")
    kills: list[str] = []

    def kill_selfplay(p: Pipeline) -> None:
        backend = p.backend
        assert isinstance(backend, RayBackend)
        ray.kill(backend.selfplay[0], no_restart=False)  # Ray restarts it (max_restarts)
        kills.append("selfplay0")

    def kill_learner_and_gatekeeper(p: Pipeline) -> None:
        backend = p.backend
        assert isinstance(backend, RayBackend)
        ray.kill(backend.learner, no_restart=False)
        ray.kill(backend.gatekeeper, no_restart=False)
        kills.append("learner+gatekeeper")

    def kill_process_mid_chunk(p: Pipeline) -> None:
        backend = p.backend
        assert isinstance(backend, RayBackend)
        pid = _pid(backend.selfplay[1])
        # The next chunks go out right after this event: kill the process while it plays one.
        threading.Timer(0.5, lambda: os.kill(pid, signal.SIGKILL)).start()
        kills.append(f"pid {pid}")

    observers = [
        _Injector("on_chunk", 1, kill_selfplay),
        _Injector("on_candidate", 1, kill_learner_and_gatekeeper),
        _Injector("on_gate", 1, kill_process_mid_chunk),
    ]
    pipeline = Pipeline(settings, RunPaths(tmp_path / "run"), ray_backend, observers=observers,
                        is_retryable=is_retryable)  # fmt: skip
    state = pipeline.run()
    pipeline.backend.shutdown()
    assert len(kills) == 3, kills
    assert pipeline._retried, "no chunk was re-run after its actor died"
    assert state.decisions == settings.run.iterations
    _check_run(tmp_path / "run", settings.run.iterations)


def test_a_stopped_driver_resumes_where_it_stopped(tmp_path: Path) -> None:
    run = tmp_path / "run"
    settings = _settings(run)
    stopper = _Injector("on_gate", 1, lambda p: p.stop("test stop"))
    first = Pipeline(settings, RunPaths(run), ray_backend, observers=[stopper],
                     is_retryable=is_retryable)  # fmt: skip
    state = first.run()
    first.backend.shutdown()
    assert state.decisions == 1
    chunks_before = state.next_chunk
    resumed = _settings(run, f"run.resume={run}")
    second = Pipeline(resumed, RunPaths(run), ray_backend, is_retryable=is_retryable)
    assert second.state.decisions == 1 and second.state.next_chunk == chunks_before
    final = second.run()
    second.backend.shutdown()
    assert final.decisions == settings.run.iterations
    assert final.next_chunk > chunks_before
    _check_run(run, settings.run.iterations)
