"""The embedded Ray's security defaults and process hygiene, on a smoke train as a user runs it.

* Loopback only: while the run trains (to its first gate decision), every TCP socket that the
  driver and all its descendants (GCS, raylet, dashboard agent with its metrics export,
  runtime-env agent, autoscaler monitor, actors) listen on is bound to 127.0.0.1 or ::1 —
  nothing on 0.0.0.0, ::, or the machine's address, which Ray uses unless told otherwise. The
  test sees a dozen sockets, so it can fail.
* No debris: after a SIGKILL of the driver, the Ray agents it started outlive it (they try to
  reach the dead GCS for about a minute). Its watchdog ends them within seconds
  (test_startup_faults); killed with the driver here, it leaves them to the fallback: the driver
  recorded them in ``ray_pids.json``, and a resume of the run ends every recorded process still
  running before it starts its own Ray.

One smoke train serves both (each start of a train and its Ray costs the 2 cores most of a
minute): it is watched to its first gate decision, then killed with its watchdog and resumed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest
from train_process import (
    find_process,
    is_running,
    listening,
    pipeline_state,
    start_train,
    wait_for,
)

pytestmark = pytest.mark.xdist_group("ray")

LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


def test_the_embedded_ray_listens_on_loopback_only_and_a_resume_ends_what_a_killed_driver_left(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    first = start_train(run, "run.iterations=50")
    seen: set[tuple[str, str, int]] = set()
    try:
        wait_for("the actors", lambda: find_process(first.pid, "ray::GatekeeperActor"), first)
        # every process of the run listens by its first gate decision (self-play, learner, gate)
        deadline = time.monotonic() + 120
        while first.poll() is None and time.monotonic() < deadline:
            seen |= listening(first.pid)
            state = pipeline_state(run)
            if state and state["decisions"]:
                break
            time.sleep(0.5)
        assert first.poll() is None, first.communicate()
        record = json.loads((run / "ray_pids.json").read_text())
        assert record["driver"]["pid"] == first.pid
        watchdog = record["watchdog"]
        assert watchdog and is_running(watchdog["pid"], watchdog["start_time"]), record
        os.kill(watchdog["pid"], signal.SIGKILL)  # its own end is test_startup_faults'
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    finally:
        first.kill()
    by_process = sorted(seen)
    assert len({name for name, _, _ in seen}) >= 6, by_process  # GCS, raylet, agents, actors...
    assert any(name.startswith("ray::DashboardAgent") for name, _, _ in seen), by_process
    outside = [s for s in by_process if s[1] not in LOOPBACK]
    assert not outside, f"listening beyond loopback: {outside}"
    recorded = [(r["pid"], r["start_time"], r["cmdline"]) for r in record["processes"]]
    names = {c.split()[0] for _, _, c in recorded}
    assert {"ray::DashboardAgent", "ray::RuntimeEnvAgent"} <= names, names
    time.sleep(2.0)  # what dies with the driver has died by now (the kernel kills Ray's children)
    left = [(pid, c) for pid, t, c in recorded if is_running(pid, t)]
    assert left, "no Ray process outlived the driver: the resume has nothing to end"
    second = start_train(run, "run.iterations=2", resume=True)
    out, err = second.communicate(timeout=600)
    assert second.returncode == 0, f"{out}\n{err}"
    ended = re.search(
        r"ended \d+ Ray processes left running by an earlier driver .*: pids (.*)", err
    )
    assert ended, err  # (workers still dying when `left` was taken may be gone by then)
    agents = [pid for pid, c in left if c.startswith(("ray::DashboardAgent", "ray::RuntimeEnv"))]
    assert agents and set(agents) <= {int(p) for p in ended.group(1).split(", ")}, (agents, err)
    still = [(pid, c) for pid, t, c in recorded if is_running(pid, t)]
    assert not still, f"left running after the resume: {still}"
