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

from omega_cluster.cli.args import Command, UsageError, integer, parse_key_values

__all__ = ["SERVE", "SERVE_KEYS"]

SERVE_KEYS: dict[str, str] = {
    "runs": "a run directory, or a folder of run directories, for the game viewer (optional)",
    "host": "address to listen on (default 127.0.0.1; another address only when given here)",
    "port": "TCP port (default 8000)",
}


def _configure_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("settings", nargs="*", metavar="key=value", help="serve keys")


def run_serve(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    unknown = [key for key in pairs if key not in SERVE_KEYS]
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r}; serve keys: {', '.join(SERVE_KEYS)}")
    from omega_cluster.play.web.server import DEFAULT_HOST, DEFAULT_PORT, serve

    port = integer("port", pairs.get("port", str(DEFAULT_PORT)), minimum=1)
    if port > 65535:
        raise UsageError(f"port={port} must be an int in 1..65535")
    runs = pairs.get("runs") or None
    if runs is not None and not Path(runs).is_dir():
        raise UsageError(
            f"runs={runs}: no such directory (give a run directory or a folder of them)"
        )
    host = pairs.get("host") or DEFAULT_HOST
    serve(runs, host, port, explicit="host" in pairs)
    return 0


SERVE = Command(
    "serve",
    "serve the web table (play any seats) and the game viewer (replay a run's games)",
    _configure_serve,
    run_serve,
    epilog="serve keys:\n"
    + "\n".join(f"  {k:<6} {v}" for k, v in SERVE_KEYS.items())
    + "\nexample: omega-cluster serve runs=runs  (then open http://127.0.0.1:8000/)",
)
