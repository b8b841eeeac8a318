"""``python -m omega_cluster <command> …`` and the ``omega-cluster`` script: the command line.

The command line (:mod:`omega_cluster.cli`) is imported here, inside :func:`main`, because
importing it takes seconds (torch, then a command's Ray and MLflow): a Ctrl-C during those
imports ends with one line and status 130, as one later on does (``cli.main``), not with a
``KeyboardInterrupt`` traceback. So the console script names this module's :func:`main`, not
``omega_cluster.cli:main``, whose import would happen before any of our code could catch it.
"""

from __future__ import annotations

import os
import signal
import sys

PROG = "omega-cluster"  # as omega_cluster.cli.args.PROG, which is not imported yet
INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C


def main() -> int:
    """Import the command line and run it; 130 after a Ctrl-C at any point, with one line."""
    try:
        from omega_cluster.cli import main as run_command  # seconds: torch

        status = run_command()
    except KeyboardInterrupt:  # while importing (cli.main reports one during a command itself)
        print(f"{PROG}: interrupted", file=sys.stderr)
        status = INTERRUPTED
    # what runs after this (Ray's and MLflow's exit handlers) must not print a traceback either
    signal.signal(signal.SIGINT, _exit_interrupted)
    return status


def _exit_interrupted(signum: int, frame: object) -> None:
    """A Ctrl-C while the interpreter shuts down: one line, status 130, now."""
    os.write(2, f"{PROG}: interrupted\n".encode())
    os._exit(INTERRUPTED)


if __name__ == "__main__":
    raise SystemExit(main())
