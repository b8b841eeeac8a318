"""Helpers of the cluster tests (test_local_cluster): free ports, the process tree
of what a cluster script started and the sockets it listens on; and the fresh embedded Ray of
the RLlib tests."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from train_process import listening


@contextmanager
def fresh_ray() -> Iterator[None]:
    """An embedded two-CPU Ray for the block, started fresh (another module's Ray of the same
    xdist group is shut down first) and shut down after."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    try:
        yield
    finally:
        ray.shutdown()


LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def live_processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent, process group, command) of every process that is not a zombie (``ps``)."""
    columns = ["-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat=", "-o", "args="]
    out = subprocess.run(["ps", "-A", "-ww", *columns], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    live = {}
    for line in out.splitlines():
        pid, ppid, pgid, stat, *command = line.split(maxsplit=4)
        if not stat.startswith("Z"):
            live[int(pid)] = (int(ppid), int(pgid), command[0] if command else "")
    return live


def spawned_by(*leaders: int) -> dict[int, str]:
    """pid -> command of the leaders, their process groups and all their descendants (Ray's
    workers and a job's driver run in process groups of their own, under the raylet)."""
    live = live_processes()
    found = {pid for pid, (_, pgid, _) in live.items() if pgid in leaders or pid in leaders}
    grew = True
    while grew:
        children = {pid for pid, (ppid, _, _) in live.items() if ppid in found} - found
        found |= children
        grew = bool(children)
    return {pid: live[pid][2] for pid in found}


def listening_below(*leaders: int) -> set[tuple[str, str, int]]:
    """(command, address, port) of every TCP socket that the leaders and their descendants listen
    on (test_sockets' helper, over the process trees of the services a cluster script started)."""
    found: set[tuple[str, str, int]] = set()
    for leader in leaders:
        found |= listening(leader)
    return found


def assert_loopback_only(seen: set[tuple[str, str, int]], ports: list[int],
                         commands: list[str]) -> None:  # fmt: skip
    """Nothing in ``seen`` listens beyond loopback; and ``seen`` is the cluster's whole story:
    every port in ``ports`` and a socket of a process whose command starts with each of
    ``commands`` are in it (so the check looked at the sockets it means to judge)."""
    found = sorted(seen)
    missing_ports = set(ports) - {port for _, _, port in seen}
    assert not missing_ports, f"no process listened on {sorted(missing_ports)}: {found}"
    missing = [c for c in commands if not any(cmd.startswith(c) for cmd, _, _ in seen)]
    assert not missing, f"no socket of {missing} seen: {found}"
    outside = [s for s in found if s[1] not in LOOPBACK]
    assert not outside, f"listening beyond loopback: {outside}"
