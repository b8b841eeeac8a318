"""The pipeline driver's one retry rule, in both modes, without Ray.

A backend whose calls fail once each with a "retryable" error (as a restarting Ray actor's do):
a lost chunk is re-run with ``retry=True`` (and counted once), a failed learner or gatekeeper
call is made again; the run still reaches its gate decisions. A call that keeps failing is
raised after :data:`CALL_ATTEMPTS` tries instead of being retried forever.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_service_pipeline import Recorder, Run, check_shards, tiny_settings

from omega_cluster.config import Settings
from omega_cluster.pipeline import driver as pipeline_module
from omega_cluster.pipeline.driver import CALL_ATTEMPTS, LocalBackend, Pipeline, RunPaths


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


def _run(root: Path, settings: Settings, fail: dict[str, int]) -> tuple[Run, FlakyBackend]:
    events = Recorder()
    made: list[FlakyBackend] = []

    def factory(s: Settings, paths: RunPaths) -> FlakyBackend:
        made.append(FlakyBackend(s, paths, fail))
        return made[0]

    pipeline = Pipeline(settings, RunPaths(root), factory, observers=[events],
                        is_retryable=_raise_restarting)  # fmt: skip
    state = pipeline.run()
    return Run(root, settings, pipeline, state, events), made[0]


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline_module, "RETRY_PAUSE_S", 0.0)


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


def test_a_call_that_keeps_failing_is_raised(tmp_path: Path) -> None:
    settings = tiny_settings("leduc_poker", iterations=1)
    learner = dataclasses.replace(settings.learner, min_rows=1)
    settings = dataclasses.replace(settings, learner=learner)
    with pytest.raises(Restarting, match="train_candidate"):
        _run(tmp_path / "run", settings, {"train_candidate": CALL_ATTEMPTS})
