"""``make local-cluster`` as a two-node Ray cluster on this machine, then ``make stop-cluster``.

One cluster, brought up once, for what a user does with it (the bring-up and a smoke job are the
costly part; the checks share them). The real script and targets run (``make -o <stamp>``: the
venv is not re-installed), with free ports, a state directory in ``tmp_path``, a private Ray temp
dir and a fresh Ray token file that the script creates:

* ``scripts/local_cluster.sh up`` starts a Ray head with 1 CPU and an MLflow server;
  ``add-worker`` starts a second Ray node (``ray start --address 127.0.0.1:<port> --block``, 1 CPU,
  custom resource ``worker``) that joins it. Both must be listed ALIVE by the head's state API
  (what ``ray list nodes`` reads) and by the script's ``status``.
* ``make local-cluster`` reuses the running head and server and sends a ``run=smoke`` job through
  ``ray job submit`` (``python -m omega_cluster train cluster=local ...``) with two self-play
  actors: each reserves one CPU and each node has one, so one actor runs on each node whatever
  Ray's scheduler prefers, while the learner, bench workers and gatekeeper (0 CPUs each) still
  schedule on the full nodes. The test waits for the job to succeed through the job REST API with
  the token (the API refuses callers without it). While it runs, every TCP socket that the three
  services and all their descendants (both raylets, GCS, dashboard, agents, the Ray client server,
  the job's driver and actors on each node) listen on must be bound to loopback; the test must
  have seen the worker node's ports and both nodes' actors.
* Then: the shard manifest names both Ray node ids (each self-play actor writes its node id into
  every shard's entry); the champion read from the MLflow server's registry (alias ``champion``)
  loads from the server's artifact root without pickle; MLflow holds a ``gate/promoted`` point of
  1 and the finished run; the run directory holds the 3 gate decisions.
* A second job goes in with the script's ``submit`` and is still running when ``make
  stop-cluster`` asks it to stop and then must end every process the three services spawned
  (worker node first, then the head and MLflow: their process groups and descendants, recorded
  before the stop) and free the ports.

The gate is made permissive (``gate.margin=-1``: a candidate that scores anything is promoted)
so that a champion is registered whatever 3 smoke candidates learn: this test is about the
cluster plumbing; promotions on merit are test_service_ray's. A finalizer stops the cluster
(by its PID files) if anything fails on the way.
"""

from __future__ import annotations

import json
import os
import re
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

from omega_cluster.data import ShardStore
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.tracking import read_champion

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)  # the venv running the tests: its ray, mlflow and python
SCRIPT = "scripts/local_cluster.sh"
JOB_ID = "omega-test-local-cluster"
SECOND_JOB = "omega-test-second"
JOB_TIMEOUT_S = 480.0  # a smoke run takes ~1 min here when the 2 cores are free
SMOKE = (
    "run=smoke run.iterations=3 gate.margin=-1.0 gate.require_no_worse_slice=false "
    "cluster.self_play_actors=2"
)


def _make(env: dict[str, str], target: str, *args: str, timeout: float = 600.0) -> str:
    """Run a Makefile target as a user does, without re-installing the venv (``-o stamp``)."""
    command = ["make", "-o", str(VENV / ".installed"), f"VENV={VENV}", target, *args]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{' '.join(command)} failed ({done.returncode}):\n{output}"
    return output


def _script(env: dict[str, str], *args: str, timeout: float = 300.0) -> str:
    done = subprocess.run(["sh", SCRIPT, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{SCRIPT} {' '.join(args)} failed ({done.returncode}):\n{output}"
    return output


@pytest.fixture
def cluster_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of the script and make calls (free ports, private state and token);
    stops the cluster afterwards if it still runs."""
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
        NUM_CPUS="1",  # the head: one self-play actor
        WORKER_CPUS="1",  # the worker node: the other one
        WORKER_LABEL="worker",
        JOB_ID=JOB_ID,
        START_TIMEOUT="240",
    )
    try:
        yield env
    finally:
        state = tmp_path / "state"
        if any(state.glob("*.pid")):
            subprocess.run(["sh", SCRIPT, "stop"], cwd=ROOT, env=env, capture_output=True,
                           timeout=180, check=False)  # fmt: skip
        shutil.rmtree(env["RAY_TEMP_DIR"], ignore_errors=True)


def _api(env: dict[str, str], path: str) -> Any:
    """GET the head's dashboard API with the cluster's token (it refuses callers without it)."""
    token = Path(env["RAY_AUTH_TOKEN_PATH"]).read_text().strip()
    request = urllib.request.Request(f"http://127.0.0.1:{env['DASHBOARD_PORT']}/api/{path}",
                                     headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _alive_nodes(env: dict[str, str]) -> list[dict[str, Any]]:
    """The cluster's ALIVE nodes, from the state API that ``ray list nodes`` uses."""
    nodes = _api(env, "v0/nodes?limit=100&detail=true")["data"]["result"]["result"]
    return [n for n in nodes if n["state"] == "ALIVE"]


def _wait_for_job(env: dict[str, str], job: str, until: tuple[str, ...], timeout_s: float,
                  watch: Callable[[], None] = lambda: None) -> str:  # fmt: skip
    """Poll the job's status until it is one of ``until`` or the job ended, calling ``watch``
    between polls; its status."""
    deadline = time.monotonic() + timeout_s
    status = "?"
    while time.monotonic() < deadline:
        status = _api(env, f"jobs/{job}")["status"]
        if status in (*until, "SUCCEEDED", "FAILED", "STOPPED"):
            break
        watch()
        time.sleep(2.0)
    if status not in until:
        logs = _api(env, f"jobs/{job}/logs").get("logs", "")
        pytest.fail(f"job {job} is {status} after {timeout_s:.0f} s; logs:\n{logs[-4000:]}")
    return status


def test_make_local_cluster_on_two_nodes_runs_a_smoke_job_and_stop_cluster_ends_it(
    cluster_env: dict[str, str],
) -> None:
    env = cluster_env
    state = Path(env["LOCAL_CLUSTER_DIR"])
    _script(env, "up")
    assert (Path(env["RAY_AUTH_TOKEN_PATH"]).stat().st_mode & 0o777) == 0o600
    joined = _script(env, "add-worker")
    match = re.search(r"joined: node id ([0-9a-f]+)", joined)
    assert match, joined
    worker_id = match.group(1)
    assert (state / "ray-worker-1.node").read_text().strip() == worker_id

    # two ALIVE nodes: the head with 1 CPU, the worker with 1 CPU and its label
    nodes = {n["node_id"]: n for n in _alive_nodes(env)}
    assert len(nodes) == 2, nodes
    (head_id,) = [i for i, n in nodes.items() if n["is_head_node"]]
    assert worker_id in nodes and worker_id != head_id
    assert nodes[head_id]["resources_total"]["CPU"] == 1.0
    assert nodes[worker_id]["resources_total"]["CPU"] == 1.0
    assert nodes[worker_id]["resources_total"]["worker"] == 1.0
    assert "worker" not in nodes[head_id]["resources_total"]
    status = _script(env, "status")
    assert f"node {head_id} head   ALIVE  CPU=1" in status, status
    assert f"node {worker_id} worker ALIVE  CPU=1 GPU=0 worker=1" in status, status

    # make local-cluster: the running head and server are reused, the job goes in
    output = _make(env, "local-cluster", f"ARGS={SMOKE}")
    dashboard = f"http://127.0.0.1:{env['DASHBOARD_PORT']}"
    mlflow_url = f"http://127.0.0.1:{env['MLFLOW_PORT']}"
    assert "Ray head already running" in output and "MLflow server already running" in output
    assert dashboard in output and mlflow_url in output
    assert f"ray job logs --address {dashboard} --follow {JOB_ID}" in output

    # the job API refuses a caller without the token
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{dashboard}/api/jobs/", timeout=10)
    assert refused.value.code == 401

    # loopback only: the sockets of both nodes and MLflow, sampled while the job runs
    leaders = [int((state / f"{name}.pid").read_text())
               for name in ("ray-worker-1", "ray-head", "mlflow")]  # fmt: skip
    seen: set[tuple[str, str, int]] = set()
    on_worker: set[tuple[str, str, int]] = set()  # the worker node's tree alone

    def watch() -> None:
        on_worker.update(listening_below(leaders[0]))
        seen.update(on_worker, listening_below(*leaders[1:]))

    _wait_for_job(env, JOB_ID, ("SUCCEEDED",), JOB_TIMEOUT_S, watch)
    worker_ports = re.search(r"node manager port (\d+), object manager (\d+), agent (\d+)", joined)
    assert worker_ports, joined
    ports = [int(env[name]) for name in ("RAY_PORT", "DASHBOARD_PORT", "MLFLOW_PORT",
                                         "RAY_CLIENT_PORT", "DASHBOARD_AGENT_PORT")]  # fmt: skip
    ports += [int(port) for port in worker_ports.groups()]
    driver = "python -m omega_cluster train cluster=local"
    actors = ["ray::SelfPlayActor", "ray::LearnerActor", "ray::GatekeeperActor"]
    agents = ["ray::DashboardAgent", "ray::RuntimeEnvAgent", "ray::JobSupervisor"]
    assert_loopback_only(seen, ports, [driver, *actors, *agents])
    assert any(cmd.startswith("ray::SelfPlayActor") for cmd, _, _ in on_worker), sorted(on_worker)

    # shards written from both nodes: each self-play actor stamps its Ray node id on its entries
    run_dir = state / "runs" / JOB_ID  # absolute, on this machine's disk
    entries = ShardStore(str(run_dir / "shards")).entries()
    assert {e.node_id for e in entries} == {head_id, worker_id}, [e.node_id for e in entries]
    pipeline = json.loads((run_dir / "pipeline.json").read_text())
    assert pipeline["decisions"] == 3 and pipeline["promotions"] >= 1

    # the champion, through the MLflow server's registry; its files in the server's artifact root
    source, tags = read_champion(mlflow_url, "omega-mexican_train")
    assert int(tags["omega.version"]) >= 1
    assert source.startswith("mlflow-artifacts:/"), source
    champion_dir = state / "mlflow" / "artifacts" / source.removeprefix("mlflow-artifacts:/")
    loaded = load_checkpoint(champion_dir, expected_game="mexican_train", load_optimizer=False)
    assert loaded.model is not None
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_url)
    promoted = client.get_metric_history(pipeline["mlflow_run_id"], "gate/promoted")
    assert any(m.value == 1.0 for m in promoted), promoted
    run = client.get_run(pipeline["mlflow_run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.params["cluster.address"] == "auto"  # cluster=local: joined the head

    # a second job, sent with `submit` to the running cluster, still running when it stops
    second = subprocess.run(["sh", SCRIPT, "submit", *SMOKE.split()], cwd=ROOT,
                            env={**env, "JOB_ID": SECOND_JOB}, capture_output=True, text=True,
                            timeout=120, check=False)  # fmt: skip
    assert second.returncode == 0, second.stdout + second.stderr
    _wait_for_job(env, SECOND_JOB, ("RUNNING",), 120.0)

    # stop: the worker node, then the head and MLflow; nothing they spawned survives
    spawned = spawned_by(*leaders)
    # ray start, GCS, raylets, dashboard, agents, idle workers, ..., the MLflow server and uvicorn
    assert len(spawned) >= 8, spawned
    assert any(f"run.dir={state}/runs/{SECOND_JOB}" in cmd for cmd in spawned.values())  # driver
    worker_group = spawned_by(leaders[0])
    assert any("raylet" in cmd for cmd in worker_group.values()), worker_group
    output = _make(env, "stop-cluster", timeout=300)
    assert output.index("stopping Ray worker node") < output.index("stopping Ray head"), output
    assert "stopping MLflow server" in output
    assert f"job {SECOND_JOB}" in output and "RUNNING -> stop requested" in output
    live = live_processes()
    left = {pid: cmd for pid, cmd in spawned.items() if pid in live and live[pid][2] == cmd}
    assert not left, f"still running after stop-cluster: {left}"
    assert not list(state.glob("*.pid")) and not list(state.glob("*.node"))
    for port in (env["DASHBOARD_PORT"], env["MLFLOW_PORT"], env["RAY_PORT"]):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(port))) != 0, f"port {port} still answers"
