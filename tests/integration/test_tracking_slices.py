"""The learner's per-slice figures in MLflow: a candidate trained over a mix of tables (real
shards, a real LearnerWorker) goes through TrackingObserver into a real sqlite store, and comes
back as ``learner/slice/<slugged key>/...`` metric histories, with the value loss per table
plotted as plots/losses_by_slice.png."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mlflow import MlflowClient

from omega_cluster.pipeline.driver import PipelineState, RunPaths
from omega_cluster.service import TrackingObserver
from omega_cluster.tracking import Tracker
from omega_cluster.wiring import learner_worker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from slice_helpers import MIXED_ROWS, champion, mexican_store, mixed_settings

pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")


def test_per_slice_losses_are_logged_and_plotted(tmp_path: Path) -> None:
    settings = mixed_settings(balance=True)
    store = mexican_store(tmp_path / "shards", settings)
    worker = learner_worker(settings, run_dir=tmp_path / "run", store_uri=store.uri)
    weights = champion(settings)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    tracker = Tracker(
        run_dir=tmp_path / "run", uri=uri, artifact_location=(tmp_path / "art").as_uri()
    )
    paths = RunPaths(tmp_path / "run")
    observer = TrackingObserver(tracker, settings, paths, "")
    state = PipelineState("mexican_train")
    reports = [worker.train_candidate(weights, v) for v in (1, 2)]
    for report in reports:
        observer.on_candidate(report, state)
    observer._pipeline = SimpleNamespace(state=state)  # type: ignore[assignment]  # plots only
    observer.on_stop(state, "done")
    tracker.close()

    client = MlflowClient(uri)
    for n, objective in MIXED_ROWS:
        key = f"players={n},objective={objective}"
        slug = f"players_{n}_objective_{objective}"
        for name in ("policy_loss", "value_loss", "window_rows", "sample_share"):
            history = client.get_metric_history(tracker.run_id, f"learner/slice/{slug}/{name}")
            assert [m.step for m in history] == [r.metrics["learner_step"] for r in reports]
            assert [m.value for m in history] == pytest.approx(
                [r.metrics[f"slice/{key}/{name}"] for r in reports]
            )
            assert all(math.isfinite(m.value) for m in history)
    assert (paths.root / "plots" / "losses_by_slice.png").stat().st_size > 1000
    logged = {a.path for a in client.list_artifacts(tracker.run_id, "plots")}
    assert "plots/losses_by_slice.png" in logged
