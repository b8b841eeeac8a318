"""Helpers of the cluster tests (test_local_cluster, test_two_node): free ports and the process
tree of what a cluster script started."""

from __future__ import annotations

import socket
import subprocess


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
