"""Is a shard store usable? Checked once, in the driver, before any actor starts.

A store URI that pyarrow cannot open (``foo://x``), or a root that cannot be created or written,
would otherwise fail in every self-play actor's constructor, and the driver would see only dead
actors. :func:`check_store_uri` opens the store as the workers do (:class:`.shards.ShardStore`),
writes a small probe file under its root and deletes it, and turns any failure into one
:class:`StoreError` line naming ``run.shard_store``, the URI without its credentials and the cause.
"""

from __future__ import annotations

import os
import socket
import time
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa

from omega_cluster.data.shards import ShardStore, _sanitized
from omega_cluster.errors import UserError, one_line

__all__ = ["StoreError", "check_store_uri"]


class StoreError(UserError, OSError):
    """The shard store cannot be opened or written (names the key, the URI and the cause)."""


def check_store_uri(uri: str, *, key: str = "run.shard_store") -> None:
    """Raise :class:`StoreError` unless ``uri`` opens, its root can be created, and a file can
    be written and deleted there."""
    shown = _sanitized(uri)
    try:
        store = ShardStore(uri)
        name = f".probe-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}"
        store.put(name, b"omega_cluster store probe\n")
        store.fs.delete_file(store.path(name))
    except (OSError, ValueError, pa.ArrowException) as err:
        cause = _without_secrets(one_line(err), uri, shown)
        raise StoreError(f"{key}={shown}: the shard store cannot be used: {cause}") from None


def _without_secrets(text: str, uri: str, shown: str) -> str:
    """``text`` with the URI's credentials (user info, query values) replaced."""
    text = text.replace(uri, shown)
    parts = urlsplit(uri)
    secrets = [parts.username, parts.password, *(v for _, v in parse_qsl(parts.query))]
    for secret in filter(None, secrets):
        if len(secret) >= 4:  # a short value (scheme=http) is no secret and too common to replace
            text = text.replace(secret, "***")
    return text
