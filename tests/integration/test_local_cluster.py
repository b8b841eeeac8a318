"""``make local-cluster`` end to end on this machine, then ``make stop-cluster``.

The real targets run (``make -o <stamp>``: the venv is not re-installed), with free ports, a state
directory in ``tmp_path``, a private Ray temp dir and a fresh Ray token file that the script
creates: a Ray head (``ray start --head --block``) and an MLflow server come up, a ``run=smoke``
job goes in through ``ray job submit`` (``python -m omega_cluster train cluster=local ...``), and
the test waits for the job to succeed through the job REST API with the token (the job API
refuses callers without it). Then: the champion read from the MLflow server's registry (alias
``champion``) loads from the server's artifact root without pickle, the run directory holds the
3 gate decisions and the MLflow run finished. A second job goes in with the script's ``submit``
and is still running when ``make stop-cluster`` asks it to stop and then must end every process
the two services spawned (their process groups and descendants, recorded before the stop) and free
the ports. While the first job runs, every TCP socket that the head, MLflow and all their
descendants (GCS, raylet, dashboard, agents, the Ray client server, the job's driver and actors)
listen on must be bound to loopback; the test must have seen the sockets of each of them.

The gate is made permissive (``gate.margin=-1``: a candidate that scores anything is promoted)
so that a champion is registered whatever 3 smoke candidates learn: this test is about the
cluster plumbing; promotions on merit are test_service_ray's. A finalizer stops the cluster
(by its PID files) if anything fails on the way.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cluster_helpers import (
    assert_loopback_only,
    free_ports,
    listening_below,
    live_processes,
    spawned_by,
)

from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.tracking import read_champion

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)  # the venv running the tests: its ray, mlflow and python
JOB_ID = "omega-test-local-cluster"
SECOND_JOB = "omega-test-second"
JOB_TIMEOUT_S = 480.0  # a smoke run takes ~1 min here when the 2 cores are free
SMOKE = "run=smoke run.iterations=3 gate.margin=-1.0 gate.require_no_worse_slice=false"


def _make(env: dict[str, str], target: str, *args: str, timeout: float = 600.0) -> str:
    """Run a Makefile target as a user does, without re-installing the venv (``-o stamp``)."""
    command = ["make", "-o", str(VENV / ".installed"), f"VENV={VENV}", target, *args]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{output}"
    return output


@pytest.fixture
def cluster_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of the make calls; stops the cluster afterwards if it still runs."""
    ray_port, dashboard, mlflow, client, agent = free_ports(5)
    # no RAY_ADDRESS or auth settings of the calling process (an earlier Ray test may set some)
    # nor the flags of an outer make (make test): this make is a fresh one
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RAY_", "MLFLOW_")) and k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # fmt: skip
    env.update(
        VENV=str(VENV),  # also for the script's direct calls (submit, the finalizer's stop)
        LOCAL_CLUSTER_DIR=str(tmp_path / "state"),
        RAY_PORT=str(ray_port),
        DASHBOARD_PORT=str(dashboard),
        MLFLOW_PORT=str(mlflow),
        RAY_CLIENT_PORT=str(client),
        DASHBOARD_AGENT_PORT=str(agent),
        RAY_TEMP_DIR=f"/tmp/omega-test-ray-{os.getpid()}-{ray_port}",  # short: socket paths
        RAY_AUTH_TOKEN_PATH=str(tmp_path / "auth_token"),  # the script creates it
        NUM_CPUS="2",
        JOB_ID=JOB_ID,
        START_TIMEOUT="240",
    )
    try:
        yield env
    finally:
        state = tmp_path / "state"
        if any(state.glob("*.pid")):
            subprocess.run(["sh", "scripts/local_cluster.sh", "stop"], cwd=ROOT, env=env,
                           capture_output=True, timeout=180, check=False)  # fmt: skip
        shutil.rmtree(env["RAY_TEMP_DIR"], ignore_errors=True)


def _job_api(env: dict[str, str], path: str) -> Any:
    url = f"http://127.0.0.1:{env['DASHBOARD_PORT']}/api/jobs/{path}"
    token = Path(env["RAY_AUTH_TOKEN_PATH"]).read_text().strip()
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _wait_for_job(env: dict[str, str], job: str, until: tuple[str, ...], timeout_s: float,
                  watch: Callable[[], None] = lambda: None) -> str:  # fmt: skip
    """Poll the job's status until it is one of ``until`` or the job ended, calling ``watch``
    between polls; its status."""
    deadline = time.monotonic() + timeout_s
    status = "?"
    while time.monotonic() < deadline:
        status = _job_api(env, job)["status"]
        if status in (*until, "SUCCEEDED", "FAILED", "STOPPED"):
            break
        watch()
        time.sleep(2.0)
    if status not in until:
        logs = _job_api(env, f"{job}/logs").get("logs", "")
        pytest.fail(f"job {job} is {status} after {timeout_s:.0f} s; logs:\n{logs[-4000:]}")
    return status


def test_make_local_cluster_runs_a_smoke_job_and_stop_cluster_ends_it(
    cluster_env: dict[str, str],
) -> None:
    env = cluster_env
    state = Path(env["LOCAL_CLUSTER_DIR"])
    output = _make(env, "local-cluster", f"ARGS={SMOKE}")
    dashboard = f"http://127.0.0.1:{env['DASHBOARD_PORT']}"
    mlflow_url = f"http://127.0.0.1:{env['MLFLOW_PORT']}"
    assert dashboard in output and mlflow_url in output
    assert f"ray job logs --address {dashboard} --follow {JOB_ID}" in output
    assert (Path(env["RAY_AUTH_TOKEN_PATH"]).stat().st_mode & 0o777) == 0o600

    # the job API refuses a caller without the token
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{dashboard}/api/jobs/", timeout=10)
    assert refused.value.code == 401

    # loopback only: the sockets of the whole cluster, sampled while the job runs
    leaders = [int((state / f"{name}.pid").read_text()) for name in ("ray-head", "mlflow")]
    seen: set[tuple[str, str, int]] = set()
    _wait_for_job(env, JOB_ID, ("SUCCEEDED",), JOB_TIMEOUT_S,
                  watch=lambda: seen.update(listening_below(*leaders)))  # fmt: skip
    ports = [int(env[name]) for name in ("RAY_PORT", "DASHBOARD_PORT", "MLFLOW_PORT",
                                         "RAY_CLIENT_PORT", "DASHBOARD_AGENT_PORT")]  # fmt: skip
    driver = "python -m omega_cluster train cluster=local"
    actors = ["ray::SelfPlayActor", "ray::LearnerActor", "ray::GatekeeperActor"]
    agents = ["ray::DashboardAgent", "ray::RuntimeEnvAgent", "ray::JobSupervisor"]
    assert_loopback_only(seen, ports, [driver, *actors, *agents])

    # the champion, through the MLflow server's registry; its files in the server's artifact root
    source, tags = read_champion(mlflow_url, "omega-mexican_train")
    assert int(tags["omega.version"]) >= 1
    assert source.startswith("mlflow-artifacts:/"), source
    champion_dir = state / "mlflow" / "artifacts" / source.removeprefix("mlflow-artifacts:/")
    loaded = load_checkpoint(champion_dir, expected_game="mexican_train", load_optimizer=False)
    assert loaded.model is not None

    run_dir = state / "runs" / JOB_ID
    pipeline = json.loads((run_dir / "pipeline.json").read_text())
    assert pipeline["decisions"] == 3 and pipeline["promotions"] >= 1
    from mlflow import MlflowClient

    run = MlflowClient(tracking_uri=mlflow_url).get_run(pipeline["mlflow_run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.params["cluster.address"] == "auto"  # cluster=local: joined the head

    # a second job, sent with `submit` to the running cluster, still running when it stops
    second = subprocess.run(["sh", "scripts/local_cluster.sh", "submit", *SMOKE.split()],
                            cwd=ROOT, env={**env, "JOB_ID": SECOND_JOB}, capture_output=True,
                            text=True, timeout=120, check=False)  # fmt: skip
    assert second.returncode == 0, second.stdout + second.stderr
    _wait_for_job(env, SECOND_JOB, ("RUNNING",), 120.0)

    head_pid = int((state / "ray-head.pid").read_text())
    mlflow_pid = int((state / "mlflow.pid").read_text())
    spawned = spawned_by(head_pid, mlflow_pid)
    # ray start, GCS, raylet, dashboard, agents, idle workers, ..., the MLflow server and uvicorn
    assert len(spawned) >= 8, spawned
    assert any(f"run.dir={state}/runs/{SECOND_JOB}" in cmd for cmd in spawned.values())  # driver

    output = _make(env, "stop-cluster", timeout=300)
    assert "stopping Ray head" in output and "stopping MLflow server" in output
    assert f"job {SECOND_JOB}" in output and "RUNNING -> stop requested" in output
    live = live_processes()
    left = {pid: cmd for pid, cmd in spawned.items() if pid in live and live[pid][2] == cmd}
    assert not left, f"still running after stop-cluster: {left}"
    assert not list(state.glob("*.pid"))
    for port in (env["DASHBOARD_PORT"], env["MLFLOW_PORT"], env["RAY_PORT"]):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(port))) != 0, f"port {port} still answers"


def test_stop_cluster_without_a_cluster_stops_nothing(cluster_env: dict[str, str]) -> None:
    state = Path(cluster_env["LOCAL_CLUSTER_DIR"])
    state.mkdir(parents=True)
    # a stale PID file naming a live process that is not ours (this test's own process)
    (state / "mlflow.pid").write_text(str(os.getpid()))
    output = _make(cluster_env, "stop-cluster")
    assert "MLflow server: not running (stale PID file removed)" in output
    assert "stopping" not in output
    assert os.getpid() in live_processes()  # not stopped
    assert not (state / "mlflow.pid").exists()
