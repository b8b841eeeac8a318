"""Manifest entries (one small JSON file per shard), sequence keys and reader positions.

A shard becomes visible when its manifest entry exists (:mod:`.shards`). Entries are named by a
sequence key ``<time_ns, 20 digits>-<writer_id>-<counter, 6 digits>`` that is unique (a writer's
time part never repeats) and roughly sorts by creation time; nothing relies on that order, since
it comes from the writers' clocks. A reader's :class:`ManifestPosition` is the set of entry names
it consumed (:class:`.reader.ShardReader`): an entry it has not consumed is new, whenever and by
whatever clock it was named. Positions go into learner checkpoints as JSON
(:meth:`ManifestPosition.to_dict`); an older checkpoint's position loads as a
:class:`LegacyPosition` that the reader converts.
"""

from __future__ import annotations

import base64
import re
import time
import zlib
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Final

__all__ = [
    "KeyClock",
    "LegacyPosition",
    "ManifestEntry",
    "ManifestPosition",
    "key_time_ns",
    "key_writer",
]

_WRITER_ID: Final = re.compile(r"^[A-Za-z0-9_.]{1,64}$")
_KEY: Final = re.compile(r"^\d{20}-[A-Za-z0-9_.]{1,64}-\d{6,}$")


def key_writer(key: str) -> str | None:
    """The writer id of a sequence key ``<time_ns>-<writer_id>-<counter>`` (None: not a key)."""
    return key.split("-")[1] if _KEY.match(key) else None


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


def _tables(value: Any) -> tuple[tuple[int, str, int], ...]:
    def ok(t: Any) -> bool:
        return (isinstance(t, list) and len(t) == 3 and isinstance(t[1], str)
                and all(isinstance(n, int) and not isinstance(n, bool) for n in (t[0], t[2])))  # fmt: skip

    if not isinstance(value, list) or not all(ok(t) for t in value):
        raise ValueError(
            f"manifest field 'tables' = {value!r} must be a list of [players, params, games]"
        )
    return tuple((t[0], t[1], t[2]) for t in value)


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
    # distinct game ids of its rows, ascending: the store's index of games is made of these
    # (None: an entry written before they were recorded; the store reads its game_id column)
    game_ids: tuple[str, ...] | None = None
    # (num_players, game_params JSON, distinct game ids) per table its rows were played at: the
    # run's per-table counts are sums of these (None: an older entry; the store reads its columns)
    tables: tuple[tuple[int, str, int], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("encoder_versions", "champion_versions", "games"):
            data[name] = list(data[name])
        for name in ("game_ids", "tables"):
            value = getattr(self, name)
            if value is None:
                del data[name]
            else:
                data[name] = [list(v) if isinstance(v, tuple) else v for v in value]
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
        game_ids = _require(data, "game_ids", list) if "game_ids" in data else None
        if game_ids is not None and not all(isinstance(g, str) for g in game_ids):
            raise ValueError("manifest field 'game_ids' must be a list of str")
        tables = _tables(data["tables"]) if "tables" in data else None
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
            game_ids=None if game_ids is None else tuple(game_ids),
            tables=tables,
        )
        if entry.rows < 1 or entry.bytes < 1 or not entry.shard_path.startswith("shards/"):
            raise ValueError(f"manifest entry {key} has rows/bytes < 1 or a path outside shards/")
        return entry


@dataclass(frozen=True)
class ManifestPosition:
    """How far a reader has consumed the manifest: the names of the entries it consumed.

    The position is the *set* of consumed entry names, kept in consumption order, not "the newest
    key": keys are chosen by writers (their clocks), so one key that sorts after every other (a
    node whose clock runs ahead, a hand-made ``09999...`` entry) would otherwise hide every entry
    written after it. Here any name not in ``consumed`` is new, whatever it sorts like, and the
    order is the reader's own (the replay window keeps its newest shards by it).

    Why names and not per-writer counters: a writer id is reused (a retried self-play chunk has
    its chunk's id, its counter starts again at 1), so counters would take a new entry for a
    consumed one. Names never repeat. Their cost: the set grows with the run, so :meth:`to_dict`
    stores it zlib-compressed (the shard names share long prefixes).
    """

    consumed: tuple[str, ...] = ()  # names of consumed manifest entries, oldest consumed first
    rows_seen: int = 0  # rows of every shard consumed so far (grows the replay window)

    def to_dict(self) -> dict[str, Any]:
        packed = zlib.compress("\n".join(self.consumed).encode(), 1)  # fast: every checkpoint
        return {
            "consumed": base64.b64encode(packed).decode(),
            "count": len(self.consumed),
            "rows_seen": self.rows_seen,
        }

    @classmethod
    def from_dict(cls, data: Any) -> ManifestPosition | LegacyPosition:
        """Parse :meth:`to_dict`'s JSON, or an old checkpoint's ``{key, rows_seen, recent}``."""
        if isinstance(data, dict) and set(data) == set(_LEGACY_FIELDS):
            return LegacyPosition.from_dict(data)
        if not isinstance(data, dict) or set(data) != {"consumed", "count", "rows_seen"}:
            raise ValueError(
                f"a manifest position is {{consumed, count, rows_seen}} (or, from an older "
                f"checkpoint, {{{', '.join(_LEGACY_FIELDS)}}}), got {data!r}"
            )
        packed, count, rows = data["consumed"], data["count"], data["rows_seen"]
        if not isinstance(packed, str) or not isinstance(rows, int) or not isinstance(count, int):
            raise ValueError(f"malformed manifest position {data!r}")
        try:
            text = zlib.decompress(base64.b64decode(packed, validate=True)).decode()
        except (ValueError, zlib.error) as err:  # binascii.Error is a ValueError
            raise ValueError(f"manifest position: 'consumed' does not decode: {err}") from err
        names = tuple(text.split("\n")) if text else ()
        if len(names) != count:
            raise ValueError(f"manifest position lists {len(names)} names, 'count' says {count}")
        return cls(consumed=names, rows_seen=rows)


_LEGACY_FIELDS: Final = ("key", "rows_seen", "recent")
LEGACY_SETTLE_NS: Final = 60 * 10**9  # the settle time every old reader used (its default)


@dataclass(frozen=True)
class LegacyPosition:
    """A position as older checkpoints stored it: the newest key consumed, plus ``recent``.

    The old reader took every entry with a key up to ``key`` as consumed, except those in the
    last minute before it (its settle time) that are not in ``recent``: it would still read
    those. :meth:`resolve` turns that rule into the consumed names of a manifest listing, in
    key order (the order the old reader consumed them in), so an old run resumes where it was.
    """

    key: str
    rows_seen: int
    recent: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "rows_seen": self.rows_seen, "recent": list(self.recent)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LegacyPosition:
        key, rows, recent = data["key"], data["rows_seen"], data["recent"]
        if not isinstance(key, str) or not isinstance(rows, int) or not isinstance(recent, list):
            raise ValueError(f"malformed manifest position {data!r}")
        if key and not _KEY.match(key):
            raise ValueError(f"manifest position key {key!r} is not <time_ns>-<writer>-<counter>")
        return cls(key=key, rows_seen=rows, recent=tuple(sorted(str(k) for k in recent)))

    def resolve(self, names: Iterable[str]) -> ManifestPosition:
        """The same position over the manifest entry ``names`` listed now."""
        if not self.key:
            return ManifestPosition(rows_seen=self.rows_seen)
        horizon = f"{max(key_time_ns(self.key) - LEGACY_SETTLE_NS, 0):020d}"
        recent = set(self.recent)
        consumed = sorted(n for n in names if n <= self.key and (n <= horizon or n in recent))
        return ManifestPosition(consumed=tuple(consumed), rows_seen=self.rows_seen)
