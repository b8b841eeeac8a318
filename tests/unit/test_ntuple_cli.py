"""``omega-cluster tables``: a run, its MLflow store, resuming it, and the one-line refusals."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import omega_cluster.games.kuhn_poker as kuhn
from omega_cluster.cli import main
from omega_cluster.cli import tables as tables_cli
from omega_cluster.search.ntuple import TupleTables
from omega_cluster.tracking.store import client
from tests.unit.ntuple_helpers import GreedyPolicy, KuhnInfoSet

pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")


@pytest.fixture(autouse=True)
def kuhn_with_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kuhn poker with the test's pattern set, and the greedy policy as the self-play player."""
    monkeypatch.setattr(
        kuhn, "PLUGIN", dataclasses.replace(kuhn.PLUGIN, ntuple_patterns=KuhnInfoSet)
    )
    monkeypatch.setattr(tables_cli, "default_policy", lambda game, worlds: GreedyPolicy())


def _run(*args: str) -> int:
    return main(["tables", "game=kuhn_poker", "quiet=true", *args])


def test_a_run_tracks_and_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _run(f"out={out}", "games=24", "watch=8", "validate=12") == 0
    text = capsys.readouterr().out
    assert "validation at 12 games" in text and "validation at 24 games" in text
    assert f"lookahead:tables:1:tables={out}" in text
    state = json.loads((out / "state.json").read_text())
    assert state["counters"]["games"] == 24 and state["counters"]["watched"] == 8
    tables = TupleTables.load(out, KuhnInfoSet(), game="kuhn_poker")
    run_id = tables.meta["run_id"]
    mlflow = client(f"sqlite:///{out.resolve().as_posix()}/mlflow.db")
    scores = mlflow.get_metric_history(run_id, "validation_score")
    assert [m.step for m in scores] == [12, 24]
    assert mlflow.get_run(run_id).data.params["lam"] == "0.5"
    assert {a.path for a in mlflow.list_artifacts(run_id, "tables")} == {
        "tables/layout.json",
        "tables/state.json",
        "tables/tables.safetensors",
    }
    # running again continues the run, in the same MLflow run
    assert _run(f"out={out}", "games=36", "validate=12") == 0
    assert "continuing" in capsys.readouterr().out
    assert json.loads((out / "state.json").read_text())["counters"]["games"] == 36
    assert [m.step for m in mlflow.get_metric_history(run_id, "validation_score")] == [12, 24, 36]
    assert mlflow.get_run(run_id).info.status == "FINISHED"


def _refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert _run(*args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    return err


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert "needs minutes=<m> or games=<n>" in _refusal(capsys, f"out={out}")
    assert "unknown key 'speed'" in _refusal(capsys, f"out={out}", "games=4", "speed=2")
    assert "needs out=<dir>" in _refusal(capsys, "games=4")
    assert "cluster='ray'" in _refusal(capsys, f"out={out}", "games=4", "cluster=ray")
    assert "needs cluster=embedded" in _refusal(
        capsys, f"out={out}", "games=4", "workers=2", "cluster=inprocess"
    )
    assert "lam='2' must be a number in [0, 1]" in _refusal(
        capsys, f"out={out}", "games=4", "lam=2"
    )
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    assert "holds other files and no table run" in _refusal(capsys, f"out={foreign}", "games=4")
    assert (foreign / "notes.txt").read_text() == "mine"  # nothing lost
    assert _run(f"out={out}", "games=8", "tracking=false", "validate=0") == 0
    capsys.readouterr()
    assert not (out / "mlflow.db").exists()
    assert "seed=0, not 3" in _refusal(capsys, f"out={out}", "games=16", "seed=3")
    (out / "state.json").write_text("{")
    assert "state.json is unreadable" in _refusal(capsys, f"out={out}", "games=16")


def test_a_game_without_patterns_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kuhn, "PLUGIN", dataclasses.replace(kuhn.PLUGIN, ntuple_patterns=None))
    err = _refusal(capsys, f"out={tmp_path / 'k'}", "games=4")
    assert "game 'kuhn_poker' declares no n-tuple patterns (plugin hook ntuple_patterns)" in err
    assert not (tmp_path / "k").exists()
