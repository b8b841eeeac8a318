"""``omega-cluster serve [runs=<dir>] [host=127.0.0.1] [port=8000]``: the web table and the
game viewer (:mod:`omega_cluster.play.web`).

``runs`` is a run directory or a folder of them (``runs/``): the game viewer replays their
recorded games and links their ratings and plots. The server listens on 127.0.0.1 unless
``host=`` names another address; a non-loopback address is served only when given so, with a
warning (:mod:`omega_cluster.play.web.server`). Keys are listed in :data:`SERVE_KEYS`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from omega_cluster.cli.args import Settings, UsageError, key_command

__all__ = ["SERVE", "SERVE_KEYS"]

SERVE_KEYS: dict[str, str] = {
    "runs": "a run directory, or a folder of run directories, for the game viewer (optional)",
    "host": "address to listen on (default 127.0.0.1; another address only when given here)",
    "port": "TCP port (default 8000)",
}


def run_serve(args: argparse.Namespace) -> int:
    s = Settings("serve", args.settings, SERVE_KEYS)
    from omega_cluster.play.web.server import DEFAULT_HOST, DEFAULT_PORT, serve

    port = s.integer("port", DEFAULT_PORT, minimum=1, maximum=65535)
    runs = s.text("runs") or None
    if runs is not None and not Path(runs).is_dir():
        raise UsageError(
            f"runs={runs}: no such directory (give a run directory or a folder of them)"
        )
    serve(runs, s.text("host", DEFAULT_HOST), port, explicit="host" in s)
    return 0


SERVE = key_command(
    "serve",
    "serve the web table (play any seats) and the game viewer (replay a run's games)",
    SERVE_KEYS,
    run_serve,
    usage=("omega-cluster serve runs=runs  (then open http://127.0.0.1:8000/)",),
)
