"""Arrow IPC shards of records on any ``pyarrow.fs`` filesystem, with a manifest and a quarantine.

Layout under a store root::

    shards/<key>.arrow        Arrow IPC files (zstd), one table of records each
    manifest/<key>.json       one small JSON entry per shard (:class:`.manifest.ManifestEntry`)
    quarantine/               shards that failed a check, their manifest entries and reason files

A :class:`ShardWriter` writes the IPC file to a temporary name, renames it, then writes the manifest
entry. On S3 a rename is a copy, so a half-copied shard can exist: readers therefore trust only the
manifest (written last, in one PUT) and never list ``shards/``. A shard without a manifest entry (its
writer died in between) is an orphan: invisible until :func:`.audit.audit_store` re-commits it.
:meth:`ShardStore.read` checks size, sha256, schema version, schema and values (finite, in range:
:func:`.schema.validate_table`, which writers apply too); a shard that fails is moved
to ``quarantine/`` with a ``<key>.reason.json``, logged, and :class:`CorruptShardError` is raised
(:class:`.reader.ShardReader` and the replay window skip it and count it): it is never trained on.

Stores: ``ShardStore("/data/run1")``, ``ShardStore("file:///data/run1")``, or S3 either as
``ShardStore("s3://bucket/prefix", filesystem=pyarrow.fs.S3FileSystem(endpoint_override=...,
scheme="http", access_key=..., secret_key=..., region=...))`` or with the options in the URI, as
pyarrow parses it: ``s3://KEY:SECRET@bucket/prefix?endpoint_override=host:port&scheme=http&
region=us-east-1`` (credentials may also come from the usual AWS environment variables). The store
never prints credentials (:attr:`ShardStore.uri` drops them).

Shards are plain Arrow IPC files, so polars and pyarrow read them as they are, and DuckDB scans
a pyarrow dataset of them in place::

    import duckdb, polars as pl, pyarrow.dataset as ds
    files = [store.shard_file(e) for e in store.entries()]   # local paths of manifested shards
    shards = ds.dataset(files, format="ipc")                  # lazy; DuckDB scans it in place
    duckdb.sql("SELECT player, avg(weight) AS w, count(*) AS n FROM shards GROUP BY player")
    pl.read_ipc(files[0]).group_by("player").agg(pl.col("returns").list.get(0).mean())

DuckDB reads ``.arrow`` files by name only through a community extension: for a query in one line
(the shell, DuckDB's own CLI), ``omega-cluster shards run=<run dir>`` writes the shards as Parquet
(:mod:`.export`), then ``duckdb.sql("SELECT ... FROM '<run dir>/parquet/*.parquet'")``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Container, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from omega_cluster.data.manifest import KeyClock, ManifestEntry
from omega_cluster.data.schema import (
    SCHEMA,
    SCHEMA_VERSION,
    Record,
    SchemaError,
    records_to_table,
    validate_table,
)

__all__ = [
    "CorruptShardError",
    "DuplicateGamesError",
    "QuarantineNote",
    "ShardInfo",
    "ShardStore",
    "ShardWriter",
]

log = logging.getLogger(__name__)

_IPC_CODECS = ("zstd", "lz4", None)  # the codecs of the Arrow IPC format
_OBJECT_STORES = frozenset({"s3", "gcs", "abfs"})  # a PUT is atomic there: no temp + rename needed


class CorruptShardError(RuntimeError):
    """A shard failed its checks and was moved to quarantine (``reason`` says why)."""

    def __init__(self, entry: ManifestEntry, reason: str) -> None:
        super().__init__(f"shard {entry.shard_path} (manifest {entry.key}) quarantined: {reason}")
        self.entry = entry
        self.reason = reason


class DuplicateGamesError(CorruptShardError):
    """A shard holds games another live shard already holds: it was quarantined, not committed.

    ``games`` are the game ids found twice, ``holders`` the manifest keys of the shards that
    hold them already.
    """

    def __init__(self, entry: ManifestEntry, games: Sequence[str], holders: Sequence[str]) -> None:
        super().__init__(entry, duplicate_reason(games, holders))
        self.games = tuple(games)
        self.holders = tuple(holders)


def duplicate_reason(games: Sequence[str], holders: Sequence[str], shown: int = 8) -> str:
    """One line naming the games found twice (the first ``shown``) and where they are."""
    more = f" and {len(games) - shown} more" if len(games) > shown else ""
    where = ", ".join(sorted(set(holders)))
    return (
        f"duplicate games: {len(games)} game id(s) already stored in shard(s) {where}: "
        f"{', '.join(games[:shown])}{more}"
    )


@dataclass(frozen=True)
class ShardInfo:
    """What :meth:`ShardWriter.write` did."""

    entry: ManifestEntry  # the manifest entry that made the shard visible
    shard_file: str  # path of the shard on the store's filesystem
    manifest_file: str  # path of the manifest entry on the store's filesystem
    seconds: float  # wall-clock time of the write (encode, upload, rename, manifest)


@dataclass(frozen=True)
class QuarantineNote:
    """One quarantined item, read back from its reason file."""

    name: str  # manifest key, or the orphan file's name
    reason: str  # why it was quarantined
    time_unix: float  # when
    node_id: str  # which machine quarantined it


def _sanitized(uri: str) -> str:
    parts = urlsplit(uri)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else uri


class ShardStore:
    """A root on a ``pyarrow.fs`` filesystem holding shards, their manifest and a quarantine."""

    def __init__(self, uri: str | os.PathLike[str], *, filesystem: pafs.FileSystem | None = None):
        text = os.fspath(uri)
        if filesystem is not None:
            parts = urlsplit(text)
            path = f"{parts.hostname or ''}{parts.path}" if parts.scheme else text
            self.fs, self.root = filesystem, path.rstrip("/")
        elif "://" not in text:
            self.fs, self.root = pafs.LocalFileSystem(), str(Path(text).resolve())
        else:
            self.fs, self.root = pafs.FileSystem.from_uri(text)
            self.root = self.root.rstrip("/")
        self.uri = _sanitized(text)  # for messages: no credentials, no query
        self.node_id = socket.gethostname()
        self._cache: dict[str, ManifestEntry] = {}
        self._ids: dict[str, tuple[str, ...]] = {}  # entry key -> its game ids (read once)
        self._tables: dict[str, tuple[tuple[int, str, int], ...]] = {}  # and its tables
        self._index: dict[str, str] = {}  # game id -> key of the live entry that holds it
        self._indexed: set[str] = set()  # the keys whose games are in _index
        self.bad_manifests = 0  # manifest files found unreadable and quarantined
        for sub in ("shards", "manifest", "quarantine"):
            try:
                self.fs.create_dir(self.path(sub), recursive=True)
            except OSError as err:
                raise OSError(f"cannot create {sub}/ under shard store {self.uri}: {err}") from err

    def __repr__(self) -> str:
        return f"ShardStore({self.uri!r})"

    def path(self, relative: str) -> str:
        """Filesystem path of a path relative to the root."""
        return f"{self.root}/{relative}"

    def shard_file(self, entry: ManifestEntry) -> str:
        """Filesystem path of an entry's shard (a local path on a local store)."""
        return self.path(entry.shard_path)

    @property
    def atomic_put(self) -> bool:
        return self.fs.type_name in _OBJECT_STORES

    def put(self, relative: str, payload: bytes | pa.Buffer) -> None:
        """Write a small file so readers see it whole (temp + rename, except on object stores)."""
        target = self.path(relative)
        temp = target if self.atomic_put else f"{target}.tmp-{os.getpid()}-{time.time_ns()}"
        with self.fs.open_output_stream(temp) as out:
            out.write(payload)
        if temp != target:
            self.fs.move(temp, target)

    def entry_names(self) -> list[str]:
        """Names (keys) of the manifest entries, sorted; one listing, no file read."""
        selector = pafs.FileSelector(self.path("manifest"), allow_not_found=True)
        return sorted(
            info.base_name[:-5]
            for info in self.fs.get_file_info(selector)
            if info.is_file and info.base_name.endswith(".json")
        )

    def entries(self, *, skip: Container[str] = ()) -> list[ManifestEntry]:
        """Manifest entries ordered by name, except those named in ``skip`` (never loaded).

        Only these shards exist for readers. The order is the writers' (their clocks): use it
        for a stable listing, never as "what came first".
        """
        out = []
        for key in self.entry_names():
            if key in skip:
                continue
            entry = self.entry(key)
            if entry is not None:
                out.append(entry)
        return out

    def entry(self, key: str) -> ManifestEntry | None:
        """The manifest entry named ``key`` (None if it is gone or was unreadable)."""
        return self._cache.get(key) or self._load_entry(key)

    def _load_entry(self, key: str) -> ManifestEntry | None:
        relative = f"manifest/{key}.json"
        try:
            with self.fs.open_input_stream(self.path(relative)) as f:
                entry = ManifestEntry.from_dict(json.loads(f.read()))
            if entry.key != key:
                raise ValueError(f"entry key {entry.key} differs from its file name")
        except FileNotFoundError:
            return None  # quarantined by another reader since the listing
        except ValueError as err:  # json.JSONDecodeError is a ValueError
            self.bad_manifests += 1
            self._quarantine_files(
                key, f"unreadable manifest entry: {err}", [(relative, "manifest")]
            )
            return None
        self._cache[key] = entry
        return entry

    def read(self, entry: ManifestEntry) -> pa.Table:
        """The shard's table, checked; a failing shard is quarantined and CorruptShardError raised.

        A missing shard file counts as a failure; other I/O errors (a network hiccup) propagate
        without quarantining anything, so a transient fault never discards a good shard.
        """
        try:
            with self.fs.open_input_file(self.shard_file(entry)) as f:
                payload = f.read_buffer()
        except FileNotFoundError as err:
            self.quarantine(entry, "shard file missing")
            raise CorruptShardError(entry, "shard file missing") from err
        try:
            return _checked_table(entry, payload)
        except (pa.ArrowException, ValueError) as err:  # SchemaError is a ValueError
            reason = str(err) or type(err).__name__
            self.quarantine(entry, reason)
            raise CorruptShardError(entry, reason) from err

    def quarantine(self, entry: ManifestEntry, reason: str) -> None:
        """Move a shard and its manifest entry to ``quarantine/`` with a reason file; log it."""
        moves = [(entry.shard_path, "shard"), (f"manifest/{entry.key}.json", "manifest")]
        self._quarantine_files(entry.key, reason, moves)
        self._cache.pop(entry.key, None)
        self._unindex(entry.key)

    # -- the index of game ids -------------------------------------------------------------
    def game_ids(self, entry: ManifestEntry) -> tuple[str, ...] | None:
        """The distinct game ids of an entry's shard: from the entry itself, or (an entry
        written before they were recorded) its shard's ``game_id`` column, read once. None when
        that column does not read back and the full read quarantined the shard."""
        if entry.game_ids is not None:
            return entry.game_ids
        if entry.key not in self._ids:
            self._read_index_columns(entry)
        return self._ids.get(entry.key)

    def tables(self, entry: ManifestEntry) -> tuple[tuple[int, str, int], ...] | None:
        """(num_players, game_params JSON, games) per table of an entry's shard: from the
        entry, or (an older entry) its shard's columns, read once; None as for :meth:`game_ids`."""
        if entry.tables is not None:
            return entry.tables
        if entry.key not in self._tables:
            self._read_index_columns(entry)
        return self._tables.get(entry.key)

    def _read_index_columns(self, entry: ManifestEntry) -> None:
        """An older entry's game ids and tables from its shard's columns."""
        table = self.index_columns(entry)
        if table is not None:
            self._ids[entry.key] = _distinct(table, "game_id")
            self._tables[entry.key] = table_counts(table)

    def index_columns(self, entry: ManifestEntry) -> pa.Table | None:
        """The ``game_id``, ``num_players`` and ``game_params`` columns of an entry's shard
        (only those are read; the whole shard, checked, when they do not read back: a failing
        one is quarantined and None returned)."""
        names = ["game_id", "num_players", "game_params"]
        options = pa.ipc.IpcReadOptions(included_fields=[SCHEMA.get_field_index(n) for n in names])
        try:
            with self.fs.open_input_file(self.shard_file(entry)) as f:
                return pa.ipc.open_file(f, options=options).read_all().select(names)
        except (pa.ArrowException, OSError, KeyError, ValueError):
            try:
                return self.read(entry).select(names)
            except CorruptShardError:
                return None

    def game_index(self) -> dict[str, str]:
        """Game id -> manifest key of the live shard holding it, for every live entry.

        Kept up to date incrementally: one manifest listing, then only the entries added since
        the last call are loaded and those gone (quarantined) dropped, so a commit never
        re-reads the store's shards. Where two live shards hold a game (two writers racing,
        or a store written before the check) the first indexed keeps it: :func:`.audit.
        audit_store` quarantines the other at the next start.
        """
        names = self.entry_names()
        live = set(names)
        for key in sorted(self._indexed - live):
            self._unindex(key)
        for key in names:
            if key in self._indexed:
                continue
            entry = self.entry(key)
            ids = None if entry is None else self.game_ids(entry)
            if ids is None:
                continue
            self._indexed.add(key)
            for game in ids:
                self._index.setdefault(game, key)
        return self._index

    def indexed_entries(self) -> list[ManifestEntry]:
        """The live entries :meth:`game_index` indexed at its last call, ordered by key."""
        return [e for k in sorted(self._indexed) if (e := self._cache.get(k)) is not None]

    def _unindex(self, key: str) -> None:
        if key not in self._indexed:
            return
        self._indexed.discard(key)
        self._index = {g: k for g, k in self._index.items() if k != key}
        self._ids.pop(key, None)
        self._tables.pop(key, None)

    def clashes(self, entry: ManifestEntry) -> dict[str, str]:
        """The games of ``entry`` some other live shard already holds: game id -> its key."""
        ids = self.game_ids(entry) or ()
        index = self.game_index()
        return {g: index[g] for g in ids if g in index and index[g] != entry.key}

    def _quarantine_files(self, name: str, reason: str, moves: Sequence[tuple[str, str]]) -> None:
        note = {"name": name, "reason": reason, "time_unix": time.time(), "node_id": self.node_id}
        note["files"] = [relative for relative, _ in moves]
        reason_file = f"quarantine/{name}.reason.json"
        # Another reader may have quarantined it first: keep its (original) reason.
        if self.fs.get_file_info(self.path(reason_file)).type == pafs.FileType.NotFound:
            self.put(reason_file, json.dumps(note, indent=1).encode())
        for relative, kind in moves:
            suffix = ".manifest.json" if kind == "manifest" else ""
            target = f"quarantine/{relative.rsplit('/', 1)[-1]}{suffix}"
            try:
                self.fs.move(self.path(relative), self.path(target))
            except OSError:  # already moved by another reader, or never written
                log.debug("quarantine of %s: %s is gone", name, relative)
        log.warning("shard store %s: quarantined %s: %s", self.uri, name, reason)

    def quarantined(self) -> list[QuarantineNote]:
        """The reason files in ``quarantine/``, ordered by name."""
        selector = pafs.FileSelector(self.path("quarantine"), allow_not_found=True)
        notes = []
        for info in sorted(self.fs.get_file_info(selector), key=lambda i: i.base_name):
            if info.is_file and info.base_name.endswith(".reason.json"):
                with self.fs.open_input_stream(info.path) as f:
                    data = json.loads(f.read())
                notes.append(
                    QuarantineNote(data["name"], data["reason"], data["time_unix"], data["node_id"])
                )
        return notes

    def quarantine_orphan(self, relative: str, reason: str) -> None:
        """Move a file of ``shards/`` that no entry names to ``quarantine/`` with a reason file."""
        self._quarantine_files(relative.rsplit("/", 1)[-1], reason, [(relative, "shard")])

    def commit(self, entry: ManifestEntry) -> str:
        """Write ``entry`` to the manifest (its shard becomes visible); its file's path.

        Each game is stored once: a shard holding a game that a live shard already holds is not
        committed but quarantined (its entry beside it, a reason naming the games) and
        :class:`DuplicateGamesError` raised. Two writers committing the same game at the same
        moment can both pass; the next start's audit quarantines the later one.
        """
        clashes = self.clashes(entry)
        if clashes:
            games = sorted(clashes)
            error = DuplicateGamesError(entry, games, [clashes[g] for g in games])
            held = f"quarantine/{entry.key}.json.manifest.json"
            self.put(held, json.dumps(entry.to_dict(), indent=1).encode())
            self._quarantine_files(entry.key, error.reason, [(entry.shard_path, "shard")])
            raise error
        manifest = f"manifest/{entry.key}.json"
        self.put(manifest, json.dumps(entry.to_dict(), indent=1).encode())
        self._cache[entry.key] = entry
        self._indexed.add(entry.key)
        for game in self.game_ids(entry) or ():
            self._index.setdefault(game, entry.key)
        return self.path(manifest)


class ShardWriter:
    """Writes tables of records as shards of one store: IPC file, rename, then manifest entry."""

    def __init__(
        self,
        store: ShardStore,
        *,
        writer_id: str,
        node_id: str | None = None,
        compression: str | None = "zstd",
        compression_level: int | None = None,
        rows_per_shard: int = 8192,
    ) -> None:
        if compression not in _IPC_CODECS:
            raise ValueError(f"compression {compression!r}: Arrow IPC allows one of {_IPC_CODECS}")
        if rows_per_shard < 1:
            raise ValueError(f"rows_per_shard must be >= 1, got {rows_per_shard}")
        self.store = store
        self.writer_id = writer_id
        self.node_id = node_id or socket.gethostname()
        self.rows_per_shard = rows_per_shard  # used by append(): records buffered per shard
        self._clock = KeyClock(writer_id)
        codec = None if compression is None else pa.Codec(compression, compression_level)
        self._options = pa.ipc.IpcWriteOptions(compression=codec)
        self._buffer: list[Record] = []

    def write(self, data: Sequence[Record] | pa.Table) -> ShardInfo:
        """Write one shard now (validated first; an empty input is an error)."""
        start = time.perf_counter()
        table = data if isinstance(data, pa.Table) else records_to_table(data)
        if table.num_rows == 0:
            raise ValueError("cannot write an empty shard")
        validate_table(table)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, table.schema, options=self._options) as ipc:
            ipc.write_table(table)
        payload = sink.getvalue()
        name = self._clock.next_key()
        shard_path = f"shards/{name}.arrow"
        temp = self.store.path(f"shards/.{name}.arrow.tmp")
        # hashlib and the file write both release the GIL: checksum while the bytes go out.
        with ThreadPoolExecutor(max_workers=1) as pool:
            digest = pool.submit(lambda: hashlib.sha256(payload).hexdigest())
            with self.store.fs.open_output_stream(temp) as out:
                out.write(payload)
            sha256 = digest.result()
        self.store.fs.move(temp, self.store.path(shard_path))
        # The manifest key is another key of this writer's clock than the shard's name: an
        # orphan's recovered entry (.audit) can then take the shard's name without a clash.
        entry = new_entry(table, key=self._clock.next_key(), shard_path=shard_path,
                          size=payload.size, sha256=sha256, writer_id=self.writer_id,
                          node_id=self.node_id)  # fmt: skip
        manifest_file = self.store.commit(entry)
        seconds = time.perf_counter() - start
        return ShardInfo(entry, self.store.path(shard_path), manifest_file, seconds)

    def append(self, records: Sequence[Record]) -> list[ShardInfo]:
        """Buffer records; write a shard of whole games each time ``rows_per_shard`` are
        buffered and a game ends there or after (each game is stored once: a game's rows, which
        must be contiguous, never straddle two shards; a shard may then hold more rows)."""
        self._buffer.extend(records)
        written = []
        while len(self._buffer) >= self.rows_per_shard:
            cut = self.rows_per_shard
            while cut < len(self._buffer) and (
                self._buffer[cut].game_id == self._buffer[cut - 1].game_id
            ):
                cut += 1
            if cut == len(self._buffer):  # the last game may go on in the next records
                break
            chunk, self._buffer = self._buffer[:cut], self._buffer[cut:]
            written.append(self.write(chunk))
        return written

    def flush(self) -> ShardInfo | None:
        """Write whatever is buffered (None if nothing is)."""
        if not self._buffer:
            return None
        chunk, self._buffer = self._buffer, []
        return self.write(chunk)


def _checked_table(entry: ManifestEntry, payload: pa.Buffer) -> pa.Table:
    if entry.schema_version != SCHEMA_VERSION:
        raise SchemaError(
            f"manifest says schema version {entry.schema_version}; this code reads {SCHEMA_VERSION}"
        )
    if payload.size != entry.bytes:
        raise ValueError(
            f"shard has {payload.size} bytes, manifest says {entry.bytes} (truncated?)"
        )
    # Checksum before decoding: Arrow does not fully validate IPC buffers, so bytes that fail
    # the checksum are never parsed (this order costs the read ~sha256 time; see bench_shards).
    digest = hashlib.sha256(payload).hexdigest()
    if digest != entry.sha256:
        raise ValueError(f"sha256 {digest} differs from the manifest's {entry.sha256}")
    table = pa.ipc.open_file(pa.BufferReader(payload)).read_all()
    validate_table(table)
    if table.num_rows != entry.rows:
        raise ValueError(f"shard has {table.num_rows} rows, manifest says {entry.rows}")
    return table


def new_entry(
    table: pa.Table,
    *,
    key: str,
    shard_path: str,
    size: int,
    sha256: str,
    writer_id: str,
    node_id: str,
) -> ManifestEntry:
    """The manifest entry of a shard holding ``table`` (``size`` bytes, hex ``sha256``)."""
    return ManifestEntry(
        key=key,
        shard_path=shard_path,
        rows=table.num_rows,
        bytes=size,
        sha256=sha256,
        schema_version=SCHEMA_VERSION,
        encoder_versions=_distinct(table, "encoder_version"),
        champion_versions=_distinct(table, "champion_version"),
        games=_distinct(table, "game"),
        writer_id=writer_id,
        node_id=node_id,
        created_unix=time.time(),
        game_ids=_distinct(table, "game_id"),
        tables=table_counts(table),
    )


def table_counts(table: pa.Table) -> tuple[tuple[int, str, int], ...]:
    """(num_players, game_params JSON, distinct game ids) of each table ``table``'s rows were
    played at, ordered."""
    games: dict[tuple[int, str], set[str]] = {}
    columns = table.select(["num_players", "game_params", "game_id"]).to_pydict()
    for players, params, game in zip(*columns.values(), strict=True):
        games.setdefault((players, params), set()).add(game)
    return tuple((p, q, len(ids)) for (p, q), ids in sorted(games.items()))


def _distinct(table: pa.Table, name: str) -> tuple[Any, ...]:
    return tuple(sorted(set(table.column(name).to_pylist())))
