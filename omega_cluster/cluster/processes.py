"""The processes of an embedded Ray, recorded in the run directory so none outlives its driver.

Ray ties the processes it starts to the driver (on Linux the kernel kills them when it dies),
but not the agents the raylet starts in turn: after a SIGKILL of the driver the dashboard agent
and the runtime-env agent try to report the raylet's death to the dead GCS and stay alive for
about a minute, one of them serving metrics over HTTP. So when this process starts the
embedded Ray it writes ``<run>/ray_pids.json``: every Ray process below it (pid, start time,
command line). The next start on the same run directory ends those still alive — SIGTERM, then
SIGKILL for those that ignore it — before it starts its own Ray. A process is ended only if its
pid *and* start time match the record and its command line still names Ray, so a pid the system
has given to another program since is never touched; and nothing is ended while the driver that
wrote the record still runs (a copy of a live run's directory names the live run's processes).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import ray  # noqa: F401  (first: Ray puts its vendored psutil on the path)

# isort: split
import psutil

__all__ = ["PIDS_FILE", "end_recorded", "record_ray_processes"]

log = logging.getLogger(__name__)

PIDS_FILE = "ray_pids.json"
TERM_WAIT_S = 3.0  # after SIGTERM, before SIGKILL
CMDLINE_CHARS = 300  # of each command line, for whoever reads the record


def _is_ray(proc: psutil.Process) -> bool:
    command = " ".join(proc.cmdline())
    return command.startswith("ray::") or f"{os.sep}ray{os.sep}" in command


def record_ray_processes(run_dir: Path) -> list[dict[str, Any]]:
    """Write ``<run_dir>/ray_pids.json``: the Ray processes below this one (the embedded Ray)."""
    rows = []
    for proc in psutil.Process().children(recursive=True):
        try:
            with proc.oneshot():
                if _is_ray(proc):
                    command = " ".join(proc.cmdline())[:CMDLINE_CHARS]
                    rows.append({"pid": proc.pid, "start_time": proc.create_time(),
                                 "cmdline": command})  # fmt: skip
        except psutil.Error:  # ended meanwhile
            continue
    path = run_dir / PIDS_FILE
    temp = path.with_suffix(".tmp")
    driver = {"pid": os.getpid(), "start_time": psutil.Process().create_time()}
    temp.write_text(json.dumps({"driver": driver, "processes": rows}, indent=1))
    temp.replace(path)
    return rows


def _still_alive(row: dict[str, Any]) -> psutil.Process | None:
    """The recorded process if it is the same process (and a Ray one, unless ``row["ray"]`` is
    false) and still running, else None."""
    try:
        proc = psutil.Process(int(row["pid"]))
        same = abs(proc.create_time() - float(row["start_time"])) < 0.01
        same = same and (_is_ray(proc) or not row.get("ray", True))
        return proc if same and proc.status() != psutil.STATUS_ZOMBIE else None
    except (psutil.Error, KeyError, TypeError, ValueError):
        return None


def end_recorded(run_dir: Path) -> list[int]:
    """End the Ray processes an earlier driver of ``run_dir`` recorded and left running;
    returns their pids (none: an empty list)."""
    path = run_dir / PIDS_FILE
    try:
        record = json.loads(path.read_text())
        rows, driver = list(record["processes"]), record["driver"]
    except (OSError, ValueError, TypeError, KeyError):
        return []
    if isinstance(driver, dict) and _still_alive({**driver, "ray": False}) is not None:
        return []  # its driver runs: these are a live run's processes, not debris
    alive = [p for p in map(_still_alive, rows) if p is not None and p.pid != os.getpid()]
    left = _signal_and_wait(alive, psutil.Process.terminate)
    _signal_and_wait(left, psutil.Process.kill)  # the agents ignore SIGTERM (module docstring)
    if alive:
        log.warning("ended %d Ray processes left running by an earlier driver of %s: pids %s",
                    len(alive), run_dir, ", ".join(str(p.pid) for p in alive))  # fmt: skip
    path.unlink(missing_ok=True)
    return [p.pid for p in alive]


def _signal_and_wait(procs: list[psutil.Process], send: Any) -> list[psutil.Process]:
    """Send each process a signal (``send(proc)``), wait up to :data:`TERM_WAIT_S` for them to
    end (a zombie has ended); returns those still running."""
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            send(proc)
    deadline = time.monotonic() + TERM_WAIT_S
    while procs and time.monotonic() < deadline:
        procs = [p for p in procs if _running(p)]
        time.sleep(0.05)
    return [p for p in procs if _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
