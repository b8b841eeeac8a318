"""omega_cluster.tracking against real MLflow stores: sqlite files under tmp_path and one real
``mlflow server`` subprocess on 127.0.0.1.

Everything is read back through :class:`mlflow.MlflowClient`: params, tags, metric histories
(batching loses no point), the Elo log (JSONL file, JSONL artifact, and a table artifact holding
each row exactly once), champions in the Model Registry (alias ``champion`` on the latest),
resuming a run by id, and fast failures on an unreachable server or an unknown run id. A new
sqlite store costs seconds (MLflow runs its schema migrations), so the module migrates one
database once and copies it wherever a store is needed; most tests share one store.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mlflow import MlflowClient

from omega_cluster.tracking import (
    CHAMPION_ALIAS,
    Tracker,
    TrackingError,
    check_tracking_uri,
    default_tracking_uri,
    read_champion,
)

ROOT = Path(__file__).resolve().parents[2]
MakeTracker = Callable[..., Tracker]


pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty MLflow sqlite database with its schema already migrated (to copy)."""
    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture(scope="module")
def store(migrated_db: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(tracking URI, artifact location) of one sqlite store shared by this module's tests."""
    root = tmp_path_factory.mktemp("store")
    shutil.copy(migrated_db, root / "mlflow.db")
    return f"sqlite:///{root}/mlflow.db", (root / "art").as_uri()


@pytest.fixture
def make_tracker(store: tuple[str, str], tmp_path: Path) -> MakeTracker:
    uri, artifacts = store

    def make(**kwargs: Any) -> Tracker:
        kwargs.setdefault("run_dir", tmp_path / "run")
        return Tracker(uri=uri, artifact_location=artifacts, **kwargs)

    return make


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _artifact_text(client: MlflowClient, run_id: str, path: str, dst: Path) -> str:
    return Path(client.download_artifacts(run_id, path, str(dst))).read_text()


def _checkpoint(directory: Path, payload: bytes) -> Path:
    directory.mkdir(parents=True)
    (directory / "model.safetensors").write_bytes(payload)
    (directory / "metadata.json").write_text(json.dumps({"version": payload.decode()}))
    return directory


def test_default_store_params_tags_git_config_metrics(migrated_db: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(migrated_db, run_dir / "mlflow.db")  # saves the migration: same store as new
    tracker = Tracker(run_dir=run_dir, run_name="first")
    assert tracker.tracking_uri == default_tracking_uri(run_dir)
    assert tracker.tracking_uri == f"sqlite:///{run_dir.resolve()}/mlflow.db"
    assert tracker.artifact_uri.startswith((run_dir / "mlartifacts").resolve().as_uri())
    tracker.log_params(
        {"game": {"name": "leduc_poker", "players": 2}, "lr": 0.01, "long": "x" * 7000}
    )
    tracker.set_tags({"purpose": "test"})
    tracker.log_git(tmp_path)  # not a repository: no error, sha "unknown"
    assert (
        MlflowClient(tracker.tracking_uri).get_run(tracker.run_id).data.tags["git.sha"] == "unknown"
    )
    tracker.log_git(ROOT)
    tracker.log_config("game:\n  name: leduc_poker\n")
    tracker.log_metrics({"loss": 1.5, "bad": float("nan"), "worse": float("inf")}, step=3)
    assert tracker.skipped_metrics == 2
    with pytest.raises(ValueError, match="invalid metric name"):
        tracker.log_metrics({"no*stars": 1.0}, step=0)
    tracker.close()
    tracker.close()  # idempotent

    client = MlflowClient(tracker.tracking_uri)
    run = client.get_run(tracker.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "first"
    assert run.data.params["game.name"] == "leduc_poker" and run.data.params["game.players"] == "2"
    assert run.data.params["lr"] == "0.01" and run.data.params["long"] == "x" * 6000
    tags = run.data.tags
    assert tags["purpose"] == "test"
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    assert tags["git.sha"] == sha.stdout.strip() and len(tags["git.sha"]) == 40
    dirty = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD"], capture_output=True, text=True)
    assert tags["git.dirty"] == ("true" if dirty.stdout.strip() else "false")
    listed = {a.path for a in client.list_artifacts(tracker.run_id, "git")}
    assert ("git/dirty.diff" in listed) == (tags["git.dirty"] == "true")
    config = _artifact_text(client, tracker.run_id, "config/config.yaml", tmp_path / "dl")
    assert config == "game:\n  name: leduc_poker\n"
    assert [m.value for m in client.get_metric_history(tracker.run_id, "loss")] == [1.5]
    assert client.get_metric_history(tracker.run_id, "bad") == []


def test_metrics_are_buffered_and_flushed_in_batches(make_tracker: MakeTracker) -> None:
    tracker = make_tracker(flush_every_s=3600.0, max_buffered=250)
    client = MlflowClient(tracker.tracking_uri)
    for step in range(83):  # 249 points: below the threshold, nothing sent yet
        tracker.log_metrics({"a": step, "b": 2 * step, "c": -step}, step=step)
    assert client.get_metric_history(tracker.run_id, "a") == []
    tracker.log_metrics({"a": 83, "b": 166, "c": -83}, step=83)  # 252 points: one batch
    assert len(client.get_metric_history(tracker.run_id, "a")) == 84
    for step in range(84, 500):
        tracker.log_metrics({"a": step, "b": 2 * step, "c": -step}, step=step)
    tracker.close()
    for key, scale in (("a", 1), ("b", 2), ("c", -1)):
        history = sorted(client.get_metric_history(tracker.run_id, key), key=lambda m: m.step)
        assert [(m.step, m.value) for m in history] == [(s, float(scale * s)) for s in range(500)]

    timed = make_tracker(flush_every_s=0.0)  # every call is due: sent at once
    timed.log_metrics({"games_per_s": 12.5}, step=1, timestamp_ms=1_000)
    [point] = client.get_metric_history(timed.run_id, "games_per_s")
    assert (point.step, point.value, point.timestamp) == (1, 12.5, 1_000)
    timed.close()
    with pytest.raises(TrackingError, match="closed"):
        timed.log_metrics({"late": 1.0}, step=2)


def test_elo_log_rows_appear_exactly_once(make_tracker: MakeTracker, tmp_path: Path) -> None:
    rows = [
        {"version": 0, "parent": None, "elo": 0.0, "games": 0, "promoted": True},
        {"version": 1, "parent": 0, "elo": 35.5, "low": 10.0, "games": 400, "promoted": True},
        {"version": 2, "parent": 1, "elo": 20.0, "low": -5.0, "games": 400, "promoted": False},
    ]
    tracker = make_tracker()
    for row in rows:
        tracker.log_elo_row(row)
    with pytest.raises(ValueError, match="JSON"):
        tracker.log_elo_row({"version": 3, "weights": object()})
    tracker.close()

    local = [json.loads(line) for line in tracker.elo_log_path.read_text().splitlines()]
    assert local == rows
    client = MlflowClient(tracker.tracking_uri)
    logged = _artifact_text(client, tracker.run_id, "elo/elo_log.jsonl", tmp_path / "a")
    assert [json.loads(line) for line in logged.splitlines()] == rows
    table = json.loads(_artifact_text(client, tracker.run_id, "elo/elo_log.json", tmp_path / "b"))
    assert table["columns"] == ["version", "parent", "elo", "games", "promoted", "low"]
    assert [dict(zip(table["columns"], r, strict=True))["version"] for r in table["data"]] == [
        0,
        1,
        2,
    ]
    assert table["data"][1] == [1, 0, 35.5, 400, True, 10.0]
    assert table["data"][0][-1] is None  # a column a row lacks is null
    tags = client.get_run(tracker.run_id).data.tags
    assert {"path": "elo/elo_log.json", "type": "table"} in json.loads(
        tags["mlflow.loggedArtifacts"]
    )
    elo = client.get_metric_history(tracker.run_id, "champion_elo")
    assert sorted((m.step, m.value) for m in elo) == [(0, 0.0), (1, 35.5)]  # promoted rows only


def test_champions_registered_with_alias_on_latest(
    make_tracker: MakeTracker, tmp_path: Path
) -> None:
    tracker = make_tracker()
    first = tracker.log_champion(
        version=1,
        checkpoint_dir=_checkpoint(tmp_path / "ck1", b"v1"),
        onnx_path=None,
        model_name="leduc_champion",
    )
    onnx = tmp_path / "model.onnx"
    onnx.write_bytes(b"onnx-bytes")
    second = tracker.log_champion(
        version=2,
        checkpoint_dir=_checkpoint(tmp_path / "ck2", b"v2"),
        onnx_path=onnx,
        model_name="leduc_champion",
        description="beat v1",
    )
    with pytest.raises(FileNotFoundError, match="not a directory"):
        tracker.log_champion(version=3, checkpoint_dir=onnx, onnx_path=None, model_name="x")
    tracker.close()
    assert (first.registry_version, second.registry_version) == ("1", "2")
    assert second.artifact_uri == f"{tracker.artifact_uri}/champions/v2"

    source, tags = read_champion(tracker.tracking_uri, "leduc_champion")
    assert source == second.artifact_uri and tags == {"omega.version": "2"}
    client = MlflowClient(tracker.tracking_uri, registry_uri=tracker.tracking_uri)
    version = client.get_model_version_by_alias("leduc_champion", CHAMPION_ALIAS)
    assert str(version.version) == "2" and version.run_id == tracker.run_id
    assert version.description == "beat v1"
    names = {a.path for a in client.list_artifacts(tracker.run_id, "champions/v2")}
    assert names == {
        f"champions/v2/{n}" for n in ("model.safetensors", "metadata.json", "model.onnx")
    }
    weights = Path(client.download_artifacts(tracker.run_id, "champions/v1", str(tmp_path / "dl")))
    assert (weights / "model.safetensors").read_bytes() == b"v1"
    with pytest.raises(TrackingError, match="no_such_model"):
        read_champion(tracker.tracking_uri, "no_such_model")


def test_resume_continues_the_same_run(make_tracker: MakeTracker, tmp_path: Path) -> None:
    first = make_tracker(run_dir=tmp_path / "run")
    first.log_params({"lr": 0.01, "game": "leduc_poker"})
    for step in range(5):
        first.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
    first.log_elo_row({"version": 0, "elo": 0.0, "promoted": True})
    first.close("KILLED")  # the process died
    client = MlflowClient(first.tracking_uri)
    assert client.get_run(first.run_id).info.status == "KILLED"

    # resumed in a fresh run_dir (another machine): the Elo log comes back from the run
    resumed = make_tracker(run_dir=tmp_path / "elsewhere", run_id=first.run_id)
    assert resumed.run_id == first.run_id and resumed.experiment_id == first.experiment_id
    assert client.get_run(first.run_id).info.status == "RUNNING"
    resumed.log_params({"lr": 0.01, "game": "leduc_poker"})  # same values: fine
    with pytest.raises(TrackingError, match="lr"):
        resumed.log_params({"lr": 0.02})
    resumed.log_params({"lr": 0.02, "iterations": 9}, on_change="tag")
    for step in range(5, 10):
        resumed.log_metrics({"loss": 1.0 / (step + 1)}, step=step)
    resumed.log_elo_row({"version": 1, "parent": 0, "elo": 30.0, "promoted": True})
    resumed.close()

    run = client.get_run(first.run_id)
    assert run.info.status == "FINISHED"
    assert run.data.params["lr"] == "0.01" and run.data.params["iterations"] == "9"
    assert run.data.tags["param_changed.lr"] == "0.02"
    steps = sorted(m.step for m in client.get_metric_history(first.run_id, "loss"))
    assert steps == list(range(10))
    table = json.loads(_artifact_text(client, first.run_id, "elo/elo_log.json", tmp_path / "dl"))
    assert [row[0] for row in table["data"]] == [0, 1]
    assert len(resumed.elo_log_path.read_text().splitlines()) == 2


def test_bad_inputs_fail_fast_with_clear_errors(make_tracker: MakeTracker, tmp_path: Path) -> None:
    port = _free_port()  # bound then released: nothing listens there
    uri = f"http://127.0.0.1:{port}"
    start = time.monotonic()
    with pytest.raises(TrackingError, match=f"127.0.0.1:{port}.*unreachable"):
        check_tracking_uri(uri, timeout_s=2.0)
    with pytest.raises(TrackingError, match="unreachable"):
        Tracker(run_dir=tmp_path / "r", uri=uri)
    assert time.monotonic() - start < 5.0

    with pytest.raises(TrackingError, match="0123456789abcdef"):
        make_tracker(run_id="0123456789abcdef0123456789abcdef")
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(TrackingError, match="cannot create directory"):
        check_tracking_uri(f"sqlite:///{blocker}/sub/mlflow.db")
    if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() not in ("true", "1"):
        with pytest.raises(TrackingError, match="sqlite"):
            check_tracking_uri(str(tmp_path / "mlruns"))
    tracker = make_tracker()
    with pytest.raises(ValueError, match="FINISHED"):
        tracker.close("DONE")
    with pytest.raises(ValueError, match="not a number"):
        tracker.log_metrics({"loss": "high"}, step=0)
    tracker.close()


def test_context_manager_marks_failed_and_killed(make_tracker: MakeTracker, tmp_path: Path) -> None:
    ids = {}
    for name, exc in (("failed", RuntimeError("boom")), ("killed", KeyboardInterrupt())):
        with pytest.raises(type(exc)), make_tracker(run_dir=tmp_path / name) as tracker:
            ids[name] = tracker.run_id
            raise exc
    with make_tracker(run_dir=tmp_path / "ok") as tracker:
        ids["ok"] = tracker.run_id
    client = MlflowClient(tracker.tracking_uri)
    statuses = {name: client.get_run(run_id).info.status for name, run_id in ids.items()}
    assert statuses == {"failed": "FAILED", "killed": "KILLED", "ok": "FINISHED"}


def test_importing_the_package_does_not_import_mlflow() -> None:
    code = "import sys, omega_cluster, omega_cluster.tracking; print('mlflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.fixture(scope="module")
def mlflow_server(migrated_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``mlflow server`` on a free port of 127.0.0.1 (starts in ~5 s)."""
    root = tmp_path_factory.mktemp("server")
    shutil.copy(migrated_db, root / "mlflow.db")
    port = _free_port()
    command = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--backend-store-uri", f"sqlite:///{root}/mlflow.db", "--workers", "1"]
    command += ["--default-artifact-root", str(root / "art")]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    env["MLFLOW_DISABLE_TELEMETRY"] = "true"
    log = (root / "server.log").open("w")
    # its own process group: `mlflow server` runs uvicorn as a child, which must die with it
    server = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=1):
                    break
            except OSError:
                assert server.poll() is None, (root / "server.log").read_text()
                assert time.monotonic() < deadline, "mlflow server did not start in 90 s"
                time.sleep(0.2)
        yield uri
    finally:
        server.terminate()  # mlflow stops its uvicorn child on SIGTERM
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):  # whatever is left of the group
            os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        log.close()


def test_against_a_real_mlflow_server(mlflow_server: str, tmp_path: Path) -> None:
    check_tracking_uri(mlflow_server)
    with Tracker(run_dir=tmp_path / "run", uri=mlflow_server, max_buffered=50) as tracker:
        tracker.log_params({"game": {"name": "goofspiel"}})
        for step in range(120):
            tracker.log_metrics({"simulations_per_s": 1000.0 + step}, step=step)
        tracker.log_elo_row({"version": 1, "parent": 0, "elo": 12.0, "promoted": True})
        plot = tmp_path / "elo.png"
        plot.write_bytes(b"\x89PNG fake")
        tracker.log_figure_files([plot])
        champion = tracker.log_champion(
            version=1,
            checkpoint_dir=_checkpoint(tmp_path / "ck", b"v1"),
            onnx_path=None,
            model_name="goofspiel_champion",
        )
    client = MlflowClient(mlflow_server)
    run = client.get_run(tracker.run_id)
    assert run.info.status == "FINISHED" and run.data.params["game.name"] == "goofspiel"
    history = client.get_metric_history(tracker.run_id, "simulations_per_s")
    assert sorted(m.step for m in history) == list(range(120))
    assert [a.path for a in client.list_artifacts(tracker.run_id, "plots")] == ["plots/elo.png"]
    source, tags = read_champion(mlflow_server, "goofspiel_champion")
    assert source == champion.artifact_uri and tags["omega.version"] == "1"
