"""The pipeline driver's one retry rule, in both modes, without Ray.

A backend whose calls fail once each with a "retryable" error (as a restarting Ray actor's do):
a lost chunk is re-run with ``retry=True`` (and counted once), a failed learner or gatekeeper
call is made again; the run still reaches its gate decisions. A call that keeps failing stops
the run after :data:`MAX_FAILURES` failures in a row with :class:`RunFailed` naming it (the
state saved), instead of being retried forever; the pauses between tries double up to a cap.
A stop asked for during collection starts no further chunk and gives the unplayed ones back.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_service_pipeline import Recorder, Run, check_shards, tiny_settings

from omega_cluster.config import Settings
from omega_cluster.pipeline import retries
from omega_cluster.pipeline.driver import LocalBackend, Observer, Pipeline, PipelineState, RunPaths
from omega_cluster.pipeline.retries import MAX_FAILURES, RunFailed, backoff


class Restarting(RuntimeError):
    """What the test backend raises for a call that 'lost its actor'."""


class _Lost:
    """A call whose actor died: calling it raises."""

    def __init__(self, method: str) -> None:
        self.method = method

    def __call__(self) -> None:
        raise Restarting(self.method)


class FlakyBackend(LocalBackend):
    """Each (handle kind, method) in ``fail`` fails its first ``fail[...]`` calls retryably."""

    def __init__(self, settings: Settings, paths: RunPaths, fail: dict[str, int]) -> None:
        super().__init__(settings, paths)
        self.fail = dict(fail)
        self.calls: Counter[str] = Counter()

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        self.calls[method] += 1
        if self.fail.get(method, 0) > 0:
            self.fail[method] -= 1
            return super().call(_Lost(method), "__call__")  # its result() raises
        return super().call(handle, method, *args, **kwargs)


def _raise_restarting(err: BaseException) -> bool:
    return isinstance(err, Restarting)


def _run(
    root: Path, settings: Settings, fail: dict[str, int], *observers: Observer
) -> tuple[Run, FlakyBackend]:
    events = Recorder()
    made: list[FlakyBackend] = []

    def factory(s: Settings, paths: RunPaths) -> FlakyBackend:
        made.append(FlakyBackend(s, paths, fail))
        return made[0]

    pipeline = Pipeline(settings, RunPaths(root), factory, observers=[events, *observers],
                        is_retryable=_raise_restarting)  # fmt: skip
    state = pipeline.run()
    return Run(root, settings, pipeline, state, events), made[0]


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retries, "BACKOFF_S", 0.0)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_each_step_survives_a_lost_call(tmp_path: Path, mode: str) -> None:
    settings = tiny_settings("leduc_poker", mode=mode, iterations=2)
    fail = {"play_chunk": 2, "train_candidate": 1, "bench": 1, "anchors": 1}
    run, backend = _run(tmp_path / "run", settings, fail)
    assert run.events.stopped == ["2 gate decisions"]
    assert backend.fail == {k: 0 for k in fail}  # every kind of call failed and went on
    assert (0, 4) in run.pipeline._retried  # the first chunk was lost (twice) and re-run
    assert sorted(c.chunk for c in run.events.chunks) == list(range(run.state.next_chunk))
    check_shards(run)


def test_a_call_that_keeps_failing_stops_the_run(tmp_path: Path) -> None:
    settings = tiny_settings("leduc_poker", iterations=1)
    learner = dataclasses.replace(settings.learner, min_rows=1)
    settings = dataclasses.replace(settings, learner=learner)
    with pytest.raises(RunFailed, match=f"train_candidate failed {MAX_FAILURES} times in a row"):
        _run(tmp_path / "run", settings, {"train_candidate": 100})
    state = PipelineState.load(tmp_path / "run" / "pipeline.json", game="leduc_poker")
    assert state.shards == 2 and state.decisions == 0  # what was collected is saved


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_chunks_that_keep_failing_stop_the_run(tmp_path: Path, mode: str) -> None:
    settings = tiny_settings("leduc_poker", mode=mode, iterations=1)
    with pytest.raises(RunFailed) as caught:
        _run(tmp_path / "run", settings, {"play_chunk": 1000})
    message = str(caught.value)
    assert f"self-play actor 0 failed {MAX_FAILURES} times in a row" in message
    assert "the last error: play_chunk" in message and f"run.resume={tmp_path / 'run'}" in message
    assert "\n" not in message


def test_the_count_is_of_failures_in_a_row(tmp_path: Path) -> None:
    """Failures that a success interrupts never add up to a stop."""
    settings = tiny_settings("leduc_poker", iterations=2)
    fail = {"play_chunk": MAX_FAILURES - 1}
    run, backend = _run(tmp_path / "run", settings, fail)
    assert run.events.stopped == ["2 gate decisions"] and backend.fail["play_chunk"] == 0


def test_the_back_off_doubles_up_to_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retries, "BACKOFF_S", 0.5)  # the module's value (no _no_pause)
    pauses = [backoff(n) for n in range(1, 9)]
    assert pauses[:4] == [0.5, 1.0, 2.0, 4.0]
    assert max(pauses) == retries.BACKOFF_MAX_S == pauses[-1]
    assert sum(backoff(n) for n in range(1, MAX_FAILURES)) < 30  # a failing run stops soon


class _StopAfterFirstChunk(Observer):
    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None

    def on_start(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def on_chunk(self, report: Any, state: PipelineState) -> None:
        assert self.pipeline is not None
        self.pipeline.stop("SIGINT")


def test_a_stop_during_collection_starts_no_further_chunk(tmp_path: Path) -> None:
    settings = tiny_settings("leduc_poker", iterations=3)  # two chunks per iteration
    run, backend = _run(tmp_path / "run", settings, {}, _StopAfterFirstChunk())
    assert run.events.stopped == ["SIGINT"]
    assert backend.calls["play_chunk"] == 1 and backend.calls["train_candidate"] == 0
    assert run.state.next_chunk == 1  # the chunk not played is given back for the resume
    check_shards(run)


class _SavedAhead(LocalBackend):
    """Records, at each chunk's start, the ``next_chunk`` that pipeline.json holds on disk."""

    def __init__(self, settings: Settings, paths: RunPaths) -> None:
        super().__init__(settings, paths)
        self.state_path = paths.state
        self.started: list[tuple[int, int]] = []  # (chunk, next_chunk saved when it started)

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        if method == "play_chunk":
            saved = PipelineState.load(self.state_path, game="leduc_poker").next_chunk
            self.started.append((args[1], saved))
        return super().call(handle, method, *args, **kwargs)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_chunk_starts_only_once_its_index_is_saved(tmp_path: Path, mode: str) -> None:
    """A driver killed while a chunk plays must not hand its index out again on resume (the
    chunk's shard may already be written: the same index would write its games twice)."""
    made: list[_SavedAhead] = []

    def factory(s: Settings, paths: RunPaths) -> _SavedAhead:
        made.append(_SavedAhead(s, paths))
        return made[0]

    settings = tiny_settings("leduc_poker", mode=mode, iterations=2)
    Pipeline(settings, RunPaths(tmp_path / "run"), factory).run()
    started = made[0].started
    assert len(started) >= 2
    assert all(saved > chunk for chunk, saved in started), started
