"""Serving the app: the bind address, the listening socket and uvicorn.

The table has no login, so by default it listens on the loopback address only (127.0.0.1):
nobody else on the network can reach it. A non-loopback address (``0.0.0.0``, a LAN address, a
name that resolves to one) is refused unless the person asked for it by name (``host=`` on the
command line, ``explicit=True`` here); even then a line on stderr says the table is reachable
from other machines. The socket is bound before uvicorn starts, so a port in use or an address
this machine does not have is one line naming it, not a server log.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path

from omega_cluster.errors import UserError

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "BindError", "bind", "check_host", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


class BindError(UserError, OSError):
    """An address the server will not or cannot listen on."""


def _addresses(host: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        raise BindError(f"host={host}: not an address this machine can resolve ({err})") from None
    return sorted({str(info[4][0]) for info in infos})


def check_host(host: str, *, explicit: bool) -> bool:
    """Whether ``host`` is loopback only; a non-loopback one without ``explicit`` is refused."""
    loopback = all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in _addresses(host))
    if not loopback and not explicit:
        raise BindError(
            f"refusing to listen on {host}: it is not a loopback address and the table has no "
            f"login; give host={host} explicitly to serve it to other machines"
        )
    return loopback


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (BindError naming them when it cannot be had)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise BindError(f"cannot listen on {host}:{port}: {err.strerror or err}") from None
    sock.set_inheritable(True)
    return sock


def serve(
    runs: str | Path | None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    *,
    explicit: bool = False,
) -> None:
    """Serve the table and the game viewer until Ctrl-C (module docstring)."""
    import uvicorn

    from omega_cluster.play.web.app import create_app

    loopback = check_host(host, explicit=explicit)
    app = create_app(runs)
    sock = bind(host, port)
    where = f"[{host}]" if ":" in host else host
    url = f"http://{where}:{sock.getsockname()[1]}"
    shown = f"; game viewer {url}/replay (runs: {runs})" if runs is not None else ""
    print(f"serving the table at {url}/{shown}; Ctrl-C stops", flush=True)
    if not loopback:
        print(f"warning: {host} is reachable from other machines; the table has no login",
              file=sys.stderr, flush=True)  # fmt: skip
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
