"""A shard store's audit at the start of a run, and its totals recomputed from the manifest.

Readers trust only the manifest (:mod:`.shards`), so a shard whose entry is gone (a writer died
between its rename and its manifest PUT, or someone deleted the entry) is invisible, and an entry
whose shard file is gone fails every read. :func:`audit_store` lists both and repairs what it can:

* an orphan shard file (in ``shards/``, no entry names it) older than the grace period that reads
  back and passes every check of a shard (:func:`.schema.validate_table`: schema and values) is
  **re-committed**: a new manifest entry is built from the file itself — rows, bytes, sha256, the
  distinct versions and games of its columns — named by the file's own key
  ``<time>-<writer>-<n>`` (a writer never uses one key twice, so the name cannot clash) and with
  its writer id (the self-play retry finds its chunk's shard by writer id);
* an orphan that does not read back, a temporary file of an upload that never finished, or a
  file that is not named like a shard, is **quarantined** with the reason;
* an entry whose shard file is gone is **quarantined** (its manifest file moves away);
* an orphan younger than the grace period is left alone (its writer may still be publishing).

A re-committed shard is new to every reader (its entry name was never consumed): if its old entry
had been consumed before it was lost, its rows are read a second time.

:func:`store_totals` counts the shards, records and games in the manifest (the pipeline's
counters, recomputed on resume); it reads only the ``game_id`` column of each shard.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs

from omega_cluster.data.manifest import key_writer
from omega_cluster.data.schema import SCHEMA, validate_table
from omega_cluster.data.shards import CorruptShardError, ShardStore, new_entry

__all__ = ["GRACE_S", "AuditReport", "StoreTotals", "audit_store", "store_totals"]

GRACE_S = 600.0  # an orphan younger than this may be a shard whose entry is being written


@dataclass(frozen=True)
class AuditReport:
    """What :func:`audit_store` found and did (paths relative to the store root)."""

    store: str  # the store's URI (no credentials)
    recommitted: tuple[str, ...] = ()  # orphan shard files given a new manifest entry
    quarantined: tuple[tuple[str, str], ...] = ()  # (shard file or entry name, reason)
    pending: tuple[str, ...] = ()  # orphans younger than the grace period, left alone
    grace_s: float = GRACE_S  # the grace period

    @property
    def clean(self) -> bool:
        return not (self.recommitted or self.quarantined or self.pending)

    def lines(self) -> list[str]:
        """One line per finding, for the run's log (empty when the store is clean)."""
        head = f"shard store {self.store}:"
        return [
            *(f"{head} re-committed orphan shard {path} (no manifest entry)" for path in
              self.recommitted),
            *(f"{head} quarantined {name}: {reason}" for name, reason in self.quarantined),
            *(f"{head} orphan {path} is younger than {self.grace_s:.0f} s: left for its writer"
              for path in self.pending),
        ]  # fmt: skip


def audit_store(store: ShardStore, *, grace_s: float = GRACE_S) -> AuditReport:
    """Report and repair orphan shards and entries without a shard file (module docstring)."""
    entries = store.entries()
    selector = pafs.FileSelector(store.path("shards"), allow_not_found=True)
    files = {f"shards/{i.base_name}": i for i in store.fs.get_file_info(selector) if i.is_file}
    quarantined: list[tuple[str, str]] = []
    for entry in entries:
        if entry.shard_path not in files:
            reason = f"its shard file {entry.shard_path} is missing (store audit)"
            store.quarantine(entry, reason)
            quarantined.append((entry.key, reason))
    named = {e.shard_path for e in entries}
    names = set(store.entry_names())
    cutoff = time.time_ns() - int(grace_s * 1e9)
    recommitted: list[str] = []
    pending: list[str] = []
    for relative in sorted(set(files) - named):
        mtime = files[relative].mtime_ns
        if mtime is not None and mtime > cutoff:
            pending.append(relative)
            continue
        refused = _recommit(store, relative, names)
        if refused is None:
            recommitted.append(relative)
            continue
        store.quarantine_orphan(relative, f"orphan shard file: {refused}")
        quarantined.append((relative, f"orphan shard file: {refused}"))
    return AuditReport(store.uri, tuple(recommitted), tuple(quarantined), tuple(pending), grace_s)


def _recommit(store: ShardStore, relative: str, names: set[str]) -> str | None:
    """Give the orphan ``relative`` a manifest entry; None if done, else why it cannot be."""
    base = relative.rsplit("/", 1)[-1]
    key = base[: -len(".arrow")] if base.endswith(".arrow") else ""
    writer_id = key_writer(key)
    if writer_id is None:
        return "not named <key>.arrow (an unfinished upload's temporary file, or foreign)"
    if key in names:
        return f"its name {key} is taken by another manifest entry"
    try:
        with store.fs.open_input_file(store.path(relative)) as f:
            payload = f.read_buffer()
        table = pa.ipc.open_file(pa.BufferReader(payload)).read_all()
        if table.num_rows == 0:
            return "holds no rows"
        validate_table(table)
    except (pa.ArrowException, ValueError) as err:  # SchemaError is a ValueError
        return f"does not read back as a shard: {err or type(err).__name__}"
    sha256 = hashlib.sha256(payload).hexdigest()
    entry = new_entry(table, key=key, shard_path=relative, size=payload.size, sha256=sha256,
                      writer_id=writer_id, node_id=f"recovered:{store.node_id}")  # fmt: skip
    store.commit(entry)
    return None


@dataclass(frozen=True)
class StoreTotals:
    """What the manifest holds: its entries, their rows, and the games in them."""

    shards: int  # manifest entries
    records: int  # sum of the entries' rows
    games: int  # distinct game ids per shard, summed over shards


def store_totals(store: ShardStore) -> StoreTotals:
    """Count the manifest's shards, records and games (reads only each shard's game_id column).

    A shard whose ``game_id`` column does not read back is read in full, which quarantines it
    if it fails its checks; it then no longer counts (it left the manifest).
    """
    options = pa.ipc.IpcReadOptions(included_fields=[SCHEMA.get_field_index("game_id")])
    shards = records = games = 0
    for entry in store.entries():
        try:
            with store.fs.open_input_file(store.shard_file(entry)) as f:
                column = pa.ipc.open_file(f, options=options).read_all().column("game_id")
        except (pa.ArrowException, OSError, KeyError, ValueError):
            try:
                column = store.read(entry).column("game_id")
            except CorruptShardError:
                continue
        shards, records = shards + 1, records + entry.rows
        games += len(pc.unique(column))
    return StoreTotals(shards=shards, records=records, games=games)
