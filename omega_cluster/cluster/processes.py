"""The processes of an embedded Ray, ended when their driver dies, however it dies.

Ray ties the processes it starts to the driver (on Linux the kernel kills them when it dies),
but not the agents the raylet starts in turn: after a SIGKILL of the driver the dashboard agent
and the runtime-env agent try to report the raylet's death to the dead GCS and stay alive for
about a minute, one of them serving metrics over HTTP. So when this process starts the embedded
Ray it records every Ray process below it (pid, start time, command line) and hands the record
to a **watchdog**: a small process (this module run as a script: the standard library and
psutil, no Ray, no torch) in a session of its own, so that neither a SIGKILL of the driver nor
one of the driver's whole process group (nor a Ctrl-C or a hang-up of its terminal) reaches
it. It polls the driver every :data:`WATCH_POLL_S`; once the driver has ended it ends the
recorded processes still alive — SIGTERM, then SIGKILL for those that ignore it — and exits.
On a normal exit Ray has ended them already, and the watchdog just exits.

The record is also written to ``<run>/ray_pids.json`` (with the driver and the watchdog): if
the watchdog was killed too, the next start on the same run directory ends what is left before
it starts its own Ray. A process is ended only if its pid *and* start time match the record and
its command line still names Ray, so a pid the system has given to another program since is
never touched; and nothing is ended while the driver that made the record still runs (a copy of
a live run's directory names the live run's processes).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

try:
    import psutil
except ImportError:  # Ray's vendored copy only: importing Ray puts it on the path
    import ray  # noqa: F401

    # isort: split
    import psutil

__all__ = [
    "PIDS_FILE",
    "end_new_ray_children",
    "end_recorded",
    "ray_children",
    "record_ray_processes",
    "stop_watchdogs",
]

log = logging.getLogger(__name__)

PIDS_FILE = "ray_pids.json"
TERM_WAIT_S = 3.0  # after SIGTERM, before SIGKILL
CMDLINE_CHARS = 300  # of each command line, for whoever reads the record
WATCH_POLL_S = 0.5  # the watchdog's look at the driver

_watchdogs: list[subprocess.Popen[bytes]] = []  # this process's (stop_watchdogs)


def _is_ray(proc: psutil.Process) -> bool:
    command = " ".join(proc.cmdline())
    return command.startswith("ray::") or f"{os.sep}ray{os.sep}" in command


def _identity(proc: psutil.Process) -> dict[str, Any]:
    return {"pid": proc.pid, "start_time": proc.create_time()}


def ray_children() -> list[dict[str, Any]]:
    """The Ray processes below this one: pid, start time, command line."""
    rows = []
    for proc in psutil.Process().children(recursive=True):
        try:
            with proc.oneshot():
                if _is_ray(proc):
                    command = " ".join(proc.cmdline())[:CMDLINE_CHARS]
                    rows.append({**_identity(proc), "cmdline": command})
        except psutil.Error:  # ended meanwhile
            continue
    return rows


def end_new_ray_children(before: list[dict[str, Any]]) -> list[int]:
    """End the Ray processes below this one that ``before`` (:func:`ray_children`) lacks: what
    a failed start left (``ray.shutdown`` does not end the GCS a failed ``ray.init`` started);
    returns their pids."""
    old = {(row["pid"], row["start_time"]) for row in before}
    return _end([r for r in ray_children() if (r["pid"], r["start_time"]) not in old])


def record_ray_processes(run_dir: Path | None, *, watch: bool = True) -> list[dict[str, Any]]:
    """Record the Ray processes below this one (the embedded Ray): hand them to a watchdog
    (``watch``) and, with a ``run_dir``, write ``<run_dir>/ray_pids.json``; returns the rows."""
    rows = ray_children()
    record: dict[str, Any] = {"driver": _identity(psutil.Process()), "processes": rows}
    if watch:
        record["watchdog"] = _start_watchdog(record)
    if run_dir is None:
        return rows
    path = run_dir / PIDS_FILE
    temp = path.with_suffix(".tmp")
    temp.write_text(json.dumps(record, indent=1))
    temp.replace(path)
    return rows


def _start_watchdog(record: dict[str, Any]) -> dict[str, Any] | None:
    """Start the watchdog of ``record`` (module docstring); its pid and start time, or None
    if it could not start (the next start on the run directory is then the only cleanup)."""
    psutil_dir = str(Path(psutil.__file__).resolve().parents[1])  # Ray's vendored copy, maybe
    try:
        watchdog = subprocess.Popen(  # the record on stdin: its command line names no Ray
            [sys.executable, "-P", "-s", str(Path(__file__).resolve())],
            env={**os.environ, "PYTHONPATH": psutil_dir}, stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        assert watchdog.stdin is not None
        with watchdog.stdin:
            watchdog.stdin.write(json.dumps(record).encode())
        _watchdogs.append(watchdog)
        return _identity(psutil.Process(watchdog.pid))
    except (OSError, psutil.Error) as err:
        log.warning("no watchdog for the embedded Ray (%s): if this process is killed, its "
                    "Ray processes are ended on the next start of the run", err)  # fmt: skip
        return None


def stop_watchdogs() -> None:
    """Stop this process's watchdogs: the Ray they watch was shut down (a process that starts
    Ray again, as the tests do, would else gather one per start until it exits)."""
    while _watchdogs:
        watchdog = _watchdogs.pop()
        watchdog.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            watchdog.wait(TERM_WAIT_S)


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
    """End the Ray processes an earlier driver of ``run_dir`` recorded and left running (its
    watchdog killed too); returns their pids (none: an empty list)."""
    path = run_dir / PIDS_FILE
    try:
        record = json.loads(path.read_text())
        rows, driver = list(record["processes"]), record["driver"]
    except (OSError, ValueError, TypeError, KeyError):
        return []
    if isinstance(driver, dict) and _still_alive({**driver, "ray": False}) is not None:
        return []  # its driver runs: these are a live run's processes, not debris
    ended = _end(rows)
    if ended:
        log.warning("ended %d Ray processes left running by an earlier driver of %s: pids %s",
                    len(ended), run_dir, ", ".join(map(str, ended)))  # fmt: skip
    path.unlink(missing_ok=True)
    return ended


def _end(rows: list[dict[str, Any]]) -> list[int]:
    """End the recorded processes still alive (SIGTERM, then SIGKILL); returns their pids."""
    alive = [p for p in map(_still_alive, rows) if p is not None and p.pid != os.getpid()]
    left = _signal_and_wait(alive, psutil.Process.terminate)
    _signal_and_wait(left, psutil.Process.kill)  # the agents ignore SIGTERM (module docstring)
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


def watch(record: dict[str, Any], poll_s: float = WATCH_POLL_S) -> list[int]:
    """The watchdog: wait for the recorded driver to end, then end its recorded Ray processes
    still alive; returns their pids."""
    driver = {**record["driver"], "ray": False}
    while _still_alive(driver) is not None:
        time.sleep(poll_s)
    return _end(list(record["processes"]))


if __name__ == "__main__":  # the watchdog: python -P processes.py < the record as JSON
    watch(json.loads(sys.stdin.read()))
