"""Manifest entries (one small JSON file per shard), sequence keys and reader positions.

A shard becomes visible when its manifest entry exists (:mod:`.shards`). Entries are named by a
sequence key ``<time_ns, 20 digits>-<writer_id>-<counter, 6 digits>`` that sorts by creation time
and is unique per writer; a reader's :class:`ManifestPosition` is the newest key it consumed plus
the keys it consumed just before it, so that an entry published a little late (its writer took its
key, then a slower upload finished after a newer entry was already read) is still picked up (see
:class:`.shards.ShardReader`). Positions go into learner checkpoints as JSON
(:meth:`ManifestPosition.to_dict`).
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Final

__all__ = ["KeyClock", "ManifestEntry", "ManifestPosition", "key_time_ns"]

_WRITER_ID: Final = re.compile(r"^[A-Za-z0-9_.]{1,64}$")
_KEY: Final = re.compile(r"^\d{20}-[A-Za-z0-9_.]{1,64}-\d{6,}$")


def key_time_ns(key: str) -> int:
    """The time (ns since the epoch) a sequence key was taken at."""
    return int(key[:20])


class KeyClock:
    """Monotonic sequence keys for one writer: the time part never repeats or goes back."""

    def __init__(self, writer_id: str) -> None:
        if not _WRITER_ID.match(writer_id):
            raise ValueError(
                f"writer_id {writer_id!r} must be 1-64 characters of letters, digits, '_' or '.'"
            )
        self.writer_id = writer_id
        self._last_ns = 0
        self._counter = 0

    def next_key(self) -> str:
        # Clocks can step back (NTP): keep the time part strictly increasing for this writer.
        now = max(time.time_ns(), self._last_ns + 1)
        self._last_ns = now
        self._counter += 1
        return f"{now:020d}-{self.writer_id}-{self._counter:06d}"


def _require(data: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    if name not in data:
        raise ValueError(f"manifest entry has no field {name!r}")
    value = data[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"manifest field {name!r} = {value!r} has the wrong type")
    return value


def _int_tuple(data: dict[str, Any], name: str) -> tuple[int, ...]:
    values = _require(data, name, list)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ValueError(f"manifest field {name!r} = {values!r} must be a list of ints")
    return tuple(values)


@dataclass(frozen=True)
class ManifestEntry:
    """What a reader knows about a shard before opening it; the shard is visible iff this exists."""

    key: str  # sequence key, also the manifest file name (<key>.json); sorts by time
    shard_path: str  # path of the shard file relative to the store root ("shards/<name>.arrow")
    rows: int  # records in the shard
    bytes: int  # size of the shard file
    sha256: str  # hex digest of the shard file
    schema_version: int  # SCHEMA_VERSION of the shard
    encoder_versions: tuple[int, ...]  # distinct encoder versions of its rows, ascending
    champion_versions: tuple[int, ...]  # distinct champion versions of its rows, ascending
    games: tuple[str, ...]  # distinct game names of its rows, ascending
    writer_id: str  # the ShardWriter that wrote it
    node_id: str  # machine of the writer (hostname unless overridden)
    created_unix: float  # seconds since the epoch when the manifest entry was made

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("encoder_versions", "champion_versions", "games"):
            data[name] = list(data[name])
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ManifestEntry:
        """Parse and check a decoded manifest JSON object (ValueError naming the bad field)."""
        if not isinstance(data, dict):
            raise ValueError(f"manifest entry must be a JSON object, got {type(data).__name__}")
        key = _require(data, "key", str)
        if not _KEY.match(key):
            raise ValueError(f"manifest key {key!r} is not <time_ns>-<writer_id>-<counter>")
        games = _require(data, "games", list)
        if not all(isinstance(g, str) for g in games):
            raise ValueError(f"manifest field 'games' = {games!r} must be a list of str")
        entry = cls(
            key=key,
            shard_path=_require(data, "shard_path", str),
            rows=_require(data, "rows", int),
            bytes=_require(data, "bytes", int),
            sha256=_require(data, "sha256", str),
            schema_version=_require(data, "schema_version", int),
            encoder_versions=_int_tuple(data, "encoder_versions"),
            champion_versions=_int_tuple(data, "champion_versions"),
            games=tuple(games),
            writer_id=_require(data, "writer_id", str),
            node_id=_require(data, "node_id", str),
            created_unix=float(_require(data, "created_unix", (int, float))),
        )
        if entry.rows < 1 or entry.bytes < 1 or not entry.shard_path.startswith("shards/"):
            raise ValueError(f"manifest entry {key} has rows/bytes < 1 or a path outside shards/")
        return entry


@dataclass(frozen=True)
class ManifestPosition:
    """How far a reader has consumed the manifest; a restarted learner resumes from it."""

    key: str = ""  # newest sequence key consumed ("" = nothing yet)
    rows_seen: int = 0  # rows of every shard consumed so far (grows the replay window)
    recent: tuple[str, ...] = ()  # keys consumed within the settle time before `key`, ascending

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "rows_seen": self.rows_seen, "recent": list(self.recent)}

    @classmethod
    def from_dict(cls, data: Any) -> ManifestPosition:
        if not isinstance(data, dict) or set(data) != {"key", "rows_seen", "recent"}:
            raise ValueError(f"a manifest position is {{key, rows_seen, recent}}, got {data!r}")
        key, rows, recent = data["key"], data["rows_seen"], data["recent"]
        if not isinstance(key, str) or not isinstance(rows, int) or not isinstance(recent, list):
            raise ValueError(f"malformed manifest position {data!r}")
        return cls(key=key, rows_seen=rows, recent=tuple(sorted(str(k) for k in recent)))
