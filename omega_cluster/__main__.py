"""``python -m omega_cluster <command> …`` and the ``omega-cluster`` script: the command line.

The command line (:mod:`omega_cluster.cli`) is imported here, inside :func:`main`, because
importing it takes seconds (torch): a Ctrl-C during that import ends the process with one line
and status 130 (:func:`~omega_cluster.errors.exit_on_interrupt`), as one later on does
(``cli.main``), not with a ``KeyboardInterrupt`` traceback — or not at all, when an import that
catches everything swallows the ``KeyboardInterrupt``. So the console script names this
module's :func:`main`, not ``omega_cluster.cli:main``, which is imported before any code of
ours could catch anything.
"""

from __future__ import annotations

import os
import signal
import sys

from omega_cluster.errors import INTERRUPTED, exit_interrupted, exit_on_interrupt

PROG = "omega-cluster"  # as omega_cluster.cli.args.PROG, which is not imported yet


def main() -> int:
    """Import the command line and run it; 130 after a Ctrl-C at any point, with one line."""
    with exit_on_interrupt(PROG):
        from omega_cluster.cli import main as run_command  # seconds: torch
    status = run_command()
    if status == INTERRUPTED:
        # the command has stopped what it started (Ray, MLflow) and printed its line; the
        # interpreter's teardown after an embedded Ray's shutdown can crash in native code
        # (SIGSEGV instead of 130), so an interrupted command ends here, its streams flushed
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    # what runs after (Ray's and MLflow's exit handlers) must not print a traceback either
    signal.signal(signal.SIGINT, lambda signum, frame: exit_interrupted(PROG))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
