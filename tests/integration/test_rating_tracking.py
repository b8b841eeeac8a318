"""A champion's anchored ratings in a real MLflow store (sqlite under tmp_path): the metrics
``rating/<objective>/<player>`` with ``_low``/``_high`` at step version, the per-table diagnostics,
the rows of ``elo_log.jsonl`` and the plots, as :class:`omega_cluster.service.TrackingObserver`
logs them from the pipeline's report."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from mlflow import MlflowClient

from omega_cluster.config import load_settings
from omega_cluster.eval.anchors import AnchorReport, ChampionRating
from omega_cluster.eval.rating import AnchorResult, anchored_rating
from omega_cluster.pipeline.run_state import PipelineState, RunPaths, rating_rows, slice_rows
from omega_cluster.service import TrackingObserver
from omega_cluster.tracking import Tracker

pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")
TABLE = "players=2,objective=chips"


def _report(version: int, wins: int) -> AnchorReport:
    results, ratings = [], []
    for kind in ("network", "search"):
        mine = [AnchorResult(str(version), a, wins, 0, 10 - wins, table=TABLE, kind=kind,
                             fair_share=wins / 5) for a in ("random", "heuristic")]  # fmt: skip
        anchors = {"random": 1000.0, "heuristic": 1400.0}
        fit = anchored_rating(g for r in mine for g in r.games(anchors[r.anchor]))
        results += mine
        ratings.append(ChampionRating(version, "chips", kind, fit))
    return AnchorReport(version, tuple(results), tuple(ratings))


def test_anchored_ratings_reach_mlflow_the_elo_log_and_the_plots(tmp_path: Path) -> None:
    settings = load_settings(["run=smoke", "game=kuhn_poker"])
    root = tmp_path / "run"
    tracker = Tracker(run_dir=root, uri=f"sqlite:///{tmp_path}/mlflow.db", flush_every_s=0.0)
    observer = TrackingObserver(tracker, settings, RunPaths(root), "")
    state = PipelineState(game="kuhn_poker")
    state.elo_log.append({"version": 0, "parent": None, "elo": 1000.0, "low": 1000.0,
                          "high": 1000.0, "games": 0, "promoted": True})  # fmt: skip
    observer._pipeline = SimpleNamespace(state=state)  # type: ignore[assignment]
    for version, wins in ((0, 5), (2, 8)):
        report = _report(version, wins)
        state.ratings += rating_rows(report, decision=version)
        state.anchor_slices += slice_rows(report)
        observer.on_anchors(report, state)
    tracker.close()

    client = MlflowClient(tracker.tracking_uri)
    run = tracker.run_id
    for kind in ("network", "search"):
        history = client.get_metric_history(run, f"rating/chips/{kind}")
        assert [(m.step, round(m.value, 6)) for m in history] == [
            (0, 1200.0), (2, round(_report(2, 8).ratings[0].fit.rating, 6))]  # fmt: skip
        low = client.get_metric_history(run, f"rating/chips/{kind}_low")
        high = client.get_metric_history(run, f"rating/chips/{kind}_high")
        for lo, mid, hi in zip(low, history, high, strict=True):
            assert lo.step == mid.step == hi.step and lo.value < mid.value < hi.value
    score = client.get_metric_history(
        run, "anchor/heuristic/players_2_objective_chips/search/score"
    )
    assert [(m.step, m.value) for m in score] == [(0, 0.5), (2, 0.8)]
    share = client.get_metric_history(
        run, "anchor/random/players_2_objective_chips/network/fair_share"
    )
    assert [m.value for m in share] == [1.0, 1.6]
    rows = [json.loads(line) for line in (root / "elo_log.jsonl").read_text().splitlines()]
    assert [(r["version"], r["player"], r["rating"]) for r in rows] == [
        (0, "network", "anchored"), (0, "search", "anchored"),
        (2, "network", "anchored"), (2, "search", "anchored")]  # fmt: skip
    assert {a.path for a in client.list_artifacts(run, "plots")} == {
        "plots/rating.png", "plots/slices.png"}  # fmt: skip
    assert (root / "plots" / "rating.png").read_bytes()[:4] == b"\x89PNG"
