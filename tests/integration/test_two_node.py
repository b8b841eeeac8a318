"""A real two-node Ray cluster on this machine, sent a smoke run with ``ray job submit``.

``scripts/local_cluster.sh up`` starts a Ray head with 1 CPU and an MLflow server;
``add-worker`` starts a second Ray node (``ray start --address 127.0.0.1:<port> --block``, 1 CPU,
custom resource ``worker``) that joins it. Both must be listed ALIVE by the head's state API (what
``ray list nodes`` reads) and by the script's ``status``. Then ``submit`` sends the smoke run with
two self-play actors: each reserves one CPU and each node has one, so one actor runs on each node
whatever Ray's scheduler prefers, while the learner, bench workers and gatekeeper (0 CPUs each)
still schedule on the full nodes. The run must succeed; its shard manifest must name both Ray
node ids (each self-play actor writes its node id into every shard's entry), and MLflow must
hold a promotion: the registered model's ``champion`` alias and a ``gate/promoted`` point of 1.
The gate is made permissive (``gate.margin=-1``, as in test_local_cluster) so that a promotion
is certain in 3 smoke iterations: this test is about the cluster, not about learning.

While the job runs, every TCP socket of the three services and all their descendants (both
raylets, GCS, dashboard, agents, the driver and actors on each node) must be bound to loopback;
the test must have seen the worker node's ports and both nodes' actors.

``stop`` must end every process of the three services (worker node first, then the head and
MLflow): their process groups and all their descendants, recorded before the stop. A finalizer
stops the cluster by its PID files if anything fails on the way.
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
from omega_cluster.tracking import read_champion

pytestmark = [pytest.mark.xdist_group("ray"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "scripts/local_cluster.sh"
JOB_ID = "omega-test-two-node"
JOB_TIMEOUT_S = 420.0  # the smoke run takes ~1 min here when the 2 cores are free
SMOKE = (
    "run=smoke run.iterations=3 gate.margin=-1.0 gate.require_no_worse_slice=false "
    "cluster.self_play_actors=2"
)


def _script(env: dict[str, str], *args: str, timeout: float = 300.0) -> str:
    done = subprocess.run(["sh", SCRIPT, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{SCRIPT} {' '.join(args)} failed ({done.returncode}):\n{output}"
    return output


@pytest.fixture
def cluster_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The script's environment (free ports, private state and token); stops what is left."""
    ray_port, dashboard, mlflow, client, agent = free_ports(5)
    # nothing of the calling process's Ray or MLflow settings (an earlier Ray test may set some)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_", "MLFLOW_"))}
    env.update(
        VENV=sys.prefix,  # the venv running the tests: its ray, mlflow and python
        LOCAL_CLUSTER_DIR=str(tmp_path / "state"),
        RAY_PORT=str(ray_port),
        DASHBOARD_PORT=str(dashboard),
        MLFLOW_PORT=str(mlflow),
        RAY_CLIENT_PORT=str(client),
        DASHBOARD_AGENT_PORT=str(agent),
        RAY_TEMP_DIR=f"/tmp/omega-test-2n-{os.getpid()}-{ray_port}",  # short: socket paths
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


def _wait_for_job(env: dict[str, str], job: str, timeout_s: float,
                  watch: Callable[[], None]) -> None:  # fmt: skip
    """Poll the job until it ends (it must succeed), calling ``watch`` between polls."""
    deadline = time.monotonic() + timeout_s
    status = "?"
    while time.monotonic() < deadline:
        status = _api(env, f"jobs/{job}")["status"]
        if status in ("SUCCEEDED", "FAILED", "STOPPED"):
            break
        watch()
        time.sleep(2.0)
    if status != "SUCCEEDED":
        logs = _api(env, f"jobs/{job}/logs").get("logs", "")
        pytest.fail(f"job {job} is {status} after {timeout_s:.0f} s; logs:\n{logs[-4000:]}")


def test_two_nodes_share_a_smoke_run_and_stop_ends_both(cluster_env: dict[str, str]) -> None:
    env = cluster_env
    state = Path(env["LOCAL_CLUSTER_DIR"])
    _script(env, "up")
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

    _script(env, "submit", *SMOKE.split())
    # loopback only: the sockets of both nodes and MLflow, sampled while the job runs
    leaders = [int((state / f"{name}.pid").read_text())
               for name in ("ray-worker-1", "ray-head", "mlflow")]  # fmt: skip
    seen: set[tuple[str, str, int]] = set()
    on_worker: set[tuple[str, str, int]] = set()  # the worker node's tree alone

    def watch() -> None:
        on_worker.update(listening_below(leaders[0]))
        seen.update(on_worker, listening_below(*leaders[1:]))

    _wait_for_job(env, JOB_ID, JOB_TIMEOUT_S, watch)
    worker_ports = re.search(r"node manager port (\d+), object manager (\d+), agent (\d+)", joined)
    assert worker_ports, joined
    ports = [int(env[name]) for name in ("RAY_PORT", "DASHBOARD_PORT", "MLFLOW_PORT")]
    ports += [int(port) for port in worker_ports.groups()]
    actors = ["ray::SelfPlayActor", "ray::LearnerActor", "ray::DashboardAgent"]
    assert_loopback_only(seen, ports, ["python -m omega_cluster train cluster=local", *actors])
    assert any(cmd.startswith("ray::SelfPlayActor") for cmd, _, _ in on_worker), sorted(on_worker)

    # shards written from both nodes: each self-play actor stamps its Ray node id on its entries
    run_dir = state / "runs" / JOB_ID  # absolute, on this machine's disk
    entries = ShardStore(str(run_dir / "shards")).entries()
    assert {e.node_id for e in entries} == {head_id, worker_id}, [e.node_id for e in entries]
    pipeline = json.loads((run_dir / "pipeline.json").read_text())
    assert pipeline["decisions"] == 3 and pipeline["promotions"] >= 1

    # a promotion recorded in MLflow: the champion alias and a gate/promoted point of 1
    from mlflow import MlflowClient

    mlflow_url = f"http://127.0.0.1:{env['MLFLOW_PORT']}"
    _, tags = read_champion(mlflow_url, "omega-mexican_train")
    assert int(tags["omega.version"]) >= 1
    client = MlflowClient(tracking_uri=mlflow_url)
    promoted = client.get_metric_history(pipeline["mlflow_run_id"], "gate/promoted")
    assert any(m.value == 1.0 for m in promoted), promoted
    assert client.get_run(pipeline["mlflow_run_id"]).info.status == "FINISHED"

    # stop: the worker node, then the head and MLflow; nothing they spawned survives
    spawned = spawned_by(*leaders)
    worker_group = spawned_by(leaders[0])
    assert any("raylet" in cmd for cmd in worker_group.values()), worker_group
    output = _script(env, "stop")
    assert output.index("stopping Ray worker node") < output.index("stopping Ray head"), output
    live = live_processes()
    left = {pid: cmd for pid, cmd in spawned.items() if pid in live and live[pid][2] == cmd}
    assert not left, f"still running after stop: {left}"
    assert not list(state.glob("*.pid")) and not list(state.glob("*.node"))
    for port in (env["DASHBOARD_PORT"], env["MLFLOW_PORT"], env["RAY_PORT"]):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(port))) != 0, f"port {port} still answers"
