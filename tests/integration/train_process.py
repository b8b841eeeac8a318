"""A smoke training as a user starts it — ``python -m omega_cluster train ...`` in a process of its
own, on the embedded Ray — and what the tests of test_hangs and test_sockets look at while it
runs: its process tree, the sockets the tree listens on, its ``pipeline.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import ray  # noqa: F401  (first: Ray puts its vendored psutil on the path)

# isort: split
import psutil

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["run=smoke", "game=kuhn_poker", "tracking.enabled=false", "run.progress=false"]
T = TypeVar("T")


def start_train(run_dir: Path, *overrides: str, resume: bool = False) -> subprocess.Popen[str]:
    """``omega-cluster train run=smoke game=kuhn_poker`` on ``run_dir`` (or resuming it)."""
    where = f"run.resume={run_dir}" if resume else f"run.dir={run_dir}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}  # no outer cluster
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    command = [sys.executable, "-m", "omega_cluster", "train", *SMOKE, where, *overrides]
    return subprocess.Popen(command, cwd=run_dir.parent, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip


def wait_for(what: str, probe: Callable[[], T | None], proc: subprocess.Popen[str],
             timeout_s: float = 240.0) -> T:  # fmt: skip
    """``probe()`` once it is not None; fails if the run ends first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the run ended before {what}: {proc.returncode}\n{out}\n{err}")
        time.sleep(0.2)
    proc.kill()
    raise AssertionError(f"no {what} within {timeout_s} s")


def tree(pid: int) -> list[psutil.Process]:
    """The process and all its descendants (Ray's agents and workers are below the raylet)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def find_process(pid: int, prefix: str) -> int | None:
    """The pid of a process below ``pid`` whose command line starts with ``prefix``."""
    for proc in tree(pid):
        try:
            if " ".join(proc.cmdline()).startswith(prefix):
                return proc.pid
        except psutil.Error:
            continue
    return None


def listening(pid: int) -> set[tuple[str, str, int]]:
    """(process name, address, port) of every TCP socket the tree of ``pid`` listens on."""
    found = set()
    for proc in tree(pid):
        try:
            name = " ".join(proc.cmdline())[:60]
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    found.add((name, conn.laddr.ip, conn.laddr.port))
        except psutil.Error:
            continue
    return found


def is_running(pid: int, start_time: float) -> bool:
    """Whether the process ``pid`` that started at ``start_time`` still runs (a zombie has ended)."""
    try:
        proc = psutil.Process(pid)
        same = abs(proc.create_time() - start_time) < 0.01
        return same and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pipeline_state(run_dir: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads((run_dir / "pipeline.json").read_text()))
    except (OSError, ValueError):
        return None
