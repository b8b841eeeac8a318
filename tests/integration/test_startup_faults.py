"""Faults in what the command starts, each one line or no debris (real processes, real Ray).

* A Ctrl-C while ``python -m omega_cluster train`` still imports (torch, then Ray and MLflow:
  seconds) exits 130 with one line, no ``KeyboardInterrupt`` traceback; so does one a little
  later, in the command's own imports (a ``KeyboardInterrupt`` there used to be swallowed at
  times, and the run went on).
* An embedded Ray that does not start — forced for real with Ray's own GCS start deadline set to
  0 s (``RAY_gcs_server_port_wait_time_s=0``: the GCS cannot write its port file in time, as on
  a machine at a load of 20) — is one line naming Ray's reason, the likely cause (a loaded
  machine) and what to do, exit 2; a process that catches the error is left with no Ray process
  of that start.
* Actors killed by Ray's memory monitor (a machine low on memory) are retried like dead
  actors; where no retry is possible the run stops with one line naming the cause, exit 2.
* A driver SIGKILLed (alone, or with its whole process group) leaves no Ray process running:
  its watchdog ends the agents that outlive it (they would wait about a minute for the dead
  GCS) within seconds, with no next start of the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from train_process import ROOT, is_running

pytestmark = pytest.mark.xdist_group("ray")

SMOKE = ["run=smoke", "game=kuhn_poker", "tracking.enabled=false", "run.progress=false"]
GONE_WITHIN_S = 30.0  # the watchdog: 0.5 s to see the driver gone, 3 s SIGTERM, then SIGKILL


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}  # no outer cluster
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**env, **extra}


def _sigint_default() -> None:
    """In the child: SIGINT as a terminal delivers it (a shell's background job ignores it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("delay_s", [1.0, 3.0, 6.0])
def test_a_ctrl_c_while_the_command_imports_is_one_line_and_130(
    tmp_path: Path, delay_s: float
) -> None:
    command = [sys.executable, "-m", "omega_cluster", "train", *SMOKE, f"run.dir={tmp_path / 'r'}"]
    proc = subprocess.Popen(command, cwd=tmp_path, env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_sigint_default)  # fmt: skip
    time.sleep(delay_s)  # importing omega_cluster.cli alone takes seconds (torch)
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert proc.returncode == 130, (proc.returncode, err)
    lines = [line for line in err.splitlines() if "interrupted" in line]
    assert len(lines) == 1 and lines[0].startswith("omega-cluster"), err


def test_a_ray_that_does_not_start_is_one_line_and_exit_2(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "omega_cluster", "train", *SMOKE, f"run.dir={tmp_path / 'r'}"]
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=_env(RAY_gcs_server_port_wait_time_s="0"))  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("omega-cluster")]
    assert len(errors) == 1, proc.stderr
    line = errors[0]
    assert line.startswith("omega-cluster train: error: the embedded Ray did not start ("), line
    for words in ("Timed out", "loaded machine", "retry", "cluster.backend=local",
                  "RAY_gcs_server_port_wait_time_s=120"):  # fmt: skip
        assert words in line, (words, line)


def test_actors_killed_by_rays_memory_monitor_stop_the_run_with_one_line(tmp_path: Path) -> None:
    """Ray's memory monitor, set to act at 5% of the machine's memory, kills every actor that
    runs a task (as on a machine that ran low on memory): the driver retries the calls inside
    its loop and, for the first registry read at the pipeline's start, stops with one line
    naming the cause and how to resume, exit 2, no traceback; nothing it wrote is lost."""
    run = tmp_path / "r"
    command = [sys.executable, "-m", "omega_cluster", "train", *SMOKE, f"run.dir={run}"]
    env = _env(RAY_memory_usage_threshold="0.05", RAY_memory_monitor_refresh_ms="100")
    proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=env)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("omega-cluster")]
    assert len(errors) == 1, proc.stderr
    for words in ("the run stopped", "running low on memory", f"run.resume={run}"):
        assert words in errors[0], (words, errors[0])
    assert (run / "config.yaml").is_file()  # the run directory stays, to resume


FAILED_START = """
import json, os
from omega_cluster.cluster.backend import RayStartError, start_embedded_ray
from omega_cluster.cluster.processes import psutil
try:
    start_embedded_ray(num_cpus=1, include_dashboard=False)
except RayStartError as err:
    children = [" ".join(p.cmdline())[:80] for p in psutil.Process().children(recursive=True)
                if p.status() != psutil.STATUS_ZOMBIE]
    print(json.dumps({"error": str(err), "children": children}))
"""


def test_a_failed_start_leaves_no_ray_process_in_a_process_that_goes_on(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", FAILED_START], cwd=tmp_path, timeout=300,
                          capture_output=True, text=True,
                          env=_env(RAY_gcs_server_port_wait_time_s="0"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout.splitlines()[-1])
    assert "the embedded Ray did not start" in found["error"], found
    assert not found["children"], found  # the GCS it had started was shut down


DRIVER = """
import sys, time
from pathlib import Path
from omega_cluster.cluster.backend import start_embedded_ray
start_embedded_ray(run_dir=Path(sys.argv[1]), num_cpus=1, include_dashboard=False)
print("up", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("kill", ["driver", "process group"])
def test_a_killed_drivers_ray_processes_end_with_no_next_start(tmp_path: Path, kill: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(tmp_path)], cwd=tmp_path,
                            env=_env(), stdout=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "up\n", proc.poll()
        record = json.loads((tmp_path / "ray_pids.json").read_text())
        assert record["driver"]["pid"] == proc.pid
        watchdog = record["watchdog"]
        assert watchdog and is_running(watchdog["pid"], watchdog["start_time"]), record
        names = {r["cmdline"].split()[0] for r in record["processes"]}
        assert {"ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names, names  # those outlive
        if kill == "driver":
            proc.send_signal(signal.SIGKILL)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        proc.kill()
    recorded = [(r["pid"], r["start_time"], r["cmdline"]) for r in record["processes"]]
    deadline = time.monotonic() + GONE_WITHIN_S
    alive = recorded
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = [(pid, t, c) for pid, t, c in recorded if is_running(pid, t)]
    assert not alive, f"still running {GONE_WITHIN_S:g} s after the driver's SIGKILL: {alive}"
    while is_running(watchdog["pid"], watchdog["start_time"]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not is_running(watchdog["pid"], watchdog["start_time"]), "the watchdog stays"
