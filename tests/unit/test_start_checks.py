"""The checks a run makes before Ray starts, and the ending of a killed driver's Ray processes.

* The shard store: a URI pyarrow cannot open, or a root that cannot be created, is one
  :class:`StoreError` line naming ``run.shard_store``, the URI without its credentials and the
  cause; a usable store keeps no probe file.
* The tracking URI: a scheme MLflow has no store for is refused (credentials not shown); the
  schemes of MLflow's own database and Databricks stores pass without a network call.
* The cluster address: malformed, nothing listening, something that is not a Ray GCS, and
  ``auto`` resolved through ``RAY_ADDRESS`` — each a :class:`ClusterError` naming the value.
* Recorded Ray processes: those still running are ended (SIGTERM, then SIGKILL for one that
  ignores it); a recorded pid whose start time differs — the pid was reused — is left alone, and
  so is every process of a record whose driver still runs. The watchdog does the same once the
  driver it watches has ended (and leaves all alone while it runs), then ends itself.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray  # noqa: F401  (first: Ray puts its vendored psutil on the path)

# isort: split
import psutil

from omega_cluster.cluster import check_cluster_address
from omega_cluster.cluster.backend import ClusterError
from omega_cluster.cluster.processes import (
    PIDS_FILE,
    WATCH_POLL_S,
    _start_watchdog,
    end_recorded,
    stop_watchdogs,
)
from omega_cluster.data.probe import StoreError, check_store_uri
from omega_cluster.tracking import TrackingError, check_tracking_uri


def test_a_store_pyarrow_cannot_open_is_one_line_without_credentials() -> None:
    uri = "foo://AKIAEXAMPLEKEY:VERYSECRET@bucket/prefix?secret_key=ALSOSECRET"
    with pytest.raises(StoreError) as caught:
        check_store_uri(uri)
    message = str(caught.value)
    assert message.startswith("run.shard_store=foo://bucket/prefix: the shard store cannot be used")
    assert "Unrecognized filesystem type" in message and "\n" not in message
    assert "SECRET" not in message and "AKIA" not in message


def test_a_store_root_that_cannot_be_created_names_the_cause(tmp_path: Path) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(StoreError, match=f"run.shard_store={blocker}/store: .*cannot create"):
        check_store_uri(str(blocker / "store"))


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_a_usable_store_keeps_no_probe_file(tmp_path: Path, scheme: str) -> None:
    root = tmp_path / "store"
    check_store_uri(f"{scheme}{root}")
    assert sorted(p.name for p in root.iterdir()) == ["manifest", "quarantine", "shards"]


def test_a_tracking_scheme_mlflow_has_no_store_for_is_refused() -> None:
    with pytest.raises(TrackingError, match="no tracking store for scheme 'ftp'") as caught:
        check_tracking_uri("ftp://user:hunter22@example.org/runs")
    assert "hunter22" not in str(caught.value)
    for uri in ("postgresql+psycopg2://u:p@db.invalid/mlflow", "mysql://db.invalid/mlflow",
                "databricks", "databricks://profile"):  # fmt: skip
        check_tracking_uri(uri)  # left to MLflow: no connection is tried here


@pytest.fixture
def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_port() -> Iterator[int]:
    """A plain HTTP server: it accepts the connection, but it is no Ray GCS."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()


def test_cluster_addresses_without_a_ray_cluster_fail_in_seconds(
    free_port: int, http_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    started = time.monotonic()
    with pytest.raises(ClusterError, match="cluster.address='nowhere': expected host:port"):
        check_cluster_address("nowhere")
    with pytest.raises(ClusterError, match=f"=127.0.0.1:{free_port}: no Ray cluster answers"):
        check_cluster_address(f"127.0.0.1:{free_port}")
    with pytest.raises(ClusterError, match=f"cluster.address=127.0.0.1:{http_port}: "):
        check_cluster_address(f"127.0.0.1:{http_port}", timeout_s=2.0)
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{free_port}")
    with pytest.raises(ClusterError, match=rf"cluster.address=auto \(resolved to .*:{free_port}\)"):
        check_cluster_address("auto")
    assert time.monotonic() - started < 10.0


def _sleeper(tmp_path: Path, *, ignore_term: bool) -> subprocess.Popen[bytes]:
    """A process whose command line names Ray (as Ray's own do), optionally deaf to SIGTERM."""
    code = "import signal, time\n"
    code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else ""
    code += "print('up', flush=True)\ntime.sleep(120)\n"
    script = tmp_path / "ray" / f"agent_{int(ignore_term)}.py"  # ".../ray/...": Ray's path
    script.parent.mkdir(exist_ok=True)
    script.write_text(code)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    return proc


def test_recorded_ray_processes_are_ended_and_reused_pids_left_alone(tmp_path: Path) -> None:
    polite, deaf, other = (_sleeper(tmp_path, ignore_term=i) for i in (False, True, False))
    rows = [{"pid": p.pid, "start_time": psutil.Process(p.pid).create_time(), "cmdline": "x"}
            for p in (polite, deaf)]  # fmt: skip
    rows.append({"pid": other.pid, "start_time": 1.0, "cmdline": "x"})  # its pid, reused since
    (tmp_path / PIDS_FILE).write_text(json.dumps({"driver": 1, "processes": rows}))
    try:
        ended = end_recorded(tmp_path)
        assert sorted(ended) == sorted([polite.pid, deaf.pid])
        assert polite.wait(5) == -15 and deaf.wait(5) == -9  # SIGTERM, then SIGKILL
        assert other.poll() is None  # not the recorded process: untouched
        assert not (tmp_path / PIDS_FILE).exists()
        assert end_recorded(tmp_path) == []  # nothing recorded: nothing to do
        # the record of a driver that still runs (here this process) names no debris
        me = {"pid": os.getpid(), "start_time": psutil.Process().create_time()}
        live = {"pid": other.pid, "start_time": psutil.Process(other.pid).create_time()}
        (tmp_path / PIDS_FILE).write_text(json.dumps({"driver": me, "processes": [live]}))
        assert end_recorded(tmp_path) == [] and other.poll() is None
    finally:
        for proc in (polite, deaf, other):
            proc.kill()
            proc.wait()


def test_the_watchdog_ends_the_recorded_processes_once_the_driver_is_gone(tmp_path: Path) -> None:
    driver, polite, deaf = (_sleeper(tmp_path, ignore_term=i) for i in (False, False, True))
    rows = [{"pid": p.pid, "start_time": psutil.Process(p.pid).create_time(), "cmdline": "x"}
            for p in (driver, polite, deaf)]  # fmt: skip
    watchdog = _start_watchdog({"driver": rows[0], "processes": rows[1:]})
    try:
        assert watchdog is not None
        time.sleep(2 * WATCH_POLL_S)
        assert polite.poll() is None and deaf.poll() is None  # the driver runs: left alone
        driver.kill()
        driver.wait(5)
        assert polite.wait(10) == -15 and deaf.wait(10) == -9  # SIGTERM, then SIGKILL
        watched = psutil.Process(watchdog["pid"])
        assert watched.wait(10) == 0  # then it ends itself
    finally:
        stop_watchdogs()
        for proc in (driver, polite, deaf):
            proc.kill()
