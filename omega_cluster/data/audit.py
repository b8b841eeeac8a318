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
* an entry whose shard file is gone, or has another size than its entry says (truncated), is
  **quarantined** (its manifest file moves away); the sizes come from the same listing, no shard
  is read;
* each game is stored once: the store's index of game ids is rebuilt from the entries (their
  ``game_ids``; an older entry's shard gives its ``game_id`` column) and an entry holding a game
  that an entry committed before it holds (by commit time, then key) is **quarantined** with
  one line naming the games (two writers racing past the commit-time check, a store written
  before it, a shard copied in by hand);
* an orphan younger than the grace period is left alone (its writer may still be publishing).

A re-committed shard is new to every reader (its entry name was never consumed): if its old entry
had been consumed before it was lost, its rows are read a second time.

:func:`store_totals` counts the shards, records and games of the manifest's live entries: the
pipeline's counters, recomputed on resume and after every event of a run, so a quarantined shard
stops counting as soon as it leaves the manifest, and so do its games in the per-table counts
(``tables``: games per table size and parameters). It reads the manifest only (an older entry
without ``game_ids`` or ``tables``: its shard's columns, once per store object).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.fs as pafs

from omega_cluster.data.manifest import ManifestEntry, key_writer
from omega_cluster.data.schema import validate_table
from omega_cluster.data.shards import (
    DuplicateGamesError,
    ShardStore,
    duplicate_reason,
    new_entry,
    table_counts,
)

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
        info = files.get(entry.shard_path)
        if info is None:
            reason = f"its shard file {entry.shard_path} is missing (store audit)"
        elif info.size is not None and info.size != entry.bytes:
            reason = (f"shard has {info.size} bytes, manifest says {entry.bytes} "
                      "(truncated? store audit)")  # fmt: skip
        else:
            continue
        store.quarantine(entry, reason)
        quarantined.append((entry.key, reason))
    quarantined += _duplicates(store)
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
        if refused.startswith("duplicate games"):  # already in quarantine, with its reason
            quarantined.append((relative, f"orphan shard file: {refused}"))
            continue
        store.quarantine_orphan(relative, f"orphan shard file: {refused}")
        quarantined.append((relative, f"orphan shard file: {refused}"))
    return AuditReport(store.uri, tuple(recommitted), tuple(quarantined), tuple(pending), grace_s)


def _duplicates(store: ShardStore) -> list[tuple[str, str]]:
    """Quarantine every live entry holding a game that an earlier-committed entry holds."""
    holder: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    ordered: list[tuple[ManifestEntry, tuple[str, ...]]] = []
    for entry in sorted(store.entries(), key=lambda e: (e.created_unix, e.key)):
        ids = store.game_ids(entry)
        if ids is None:  # its shard failed its read and was quarantined with the reason
            continue
        ordered.append((entry, ids))
    for entry, ids in ordered:
        twice = sorted(g for g in ids if g in holder)
        if twice:
            reason = duplicate_reason(twice, [holder[g] for g in twice]) + " (store audit)"
            store.quarantine(entry, reason)
            found.append((entry.key, reason))
            continue
        holder.update(dict.fromkeys(ids, entry.key))
    return found


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
    try:
        store.commit(entry)
    except DuplicateGamesError as err:  # commit quarantined it with the reason: say so
        return err.reason
    return None


@dataclass(frozen=True)
class StoreTotals:
    """What the manifest's live entries hold: the entries, their rows, and the games in them."""

    shards: int  # live manifest entries
    records: int  # sum of the entries' rows
    games: int  # distinct game ids over the live entries
    # games per table they were played at: (num_players, game_params JSON) -> games
    tables: dict[tuple[int, str], int] = field(default_factory=dict)


def store_totals(store: ShardStore) -> StoreTotals:
    """Count the live manifest entries' shards, records and games (module docstring).

    An older entry whose ``game_id`` column does not read back is read in full, which
    quarantines it if it fails its checks; it then no longer counts (it left the manifest).
    """
    index = store.game_index()  # one manifest listing; only new entries are loaded
    entries = store.indexed_entries()
    tables: dict[tuple[int, str], int] = {}
    for entry in entries:
        ids = store.game_ids(entry) or ()
        if all(index.get(g) == entry.key for g in ids):
            counts = store.tables(entry) or ()
        else:  # a game another live entry holds too (until the audit): it counts there only
            counts = _own_tables(store.index_columns(entry), entry.key, index)
        for players, params, n in counts:
            tables[players, params] = tables.get((players, params), 0) + n
    return StoreTotals(shards=len(entries), records=sum(e.rows for e in entries),
                       games=len(index), tables=tables)  # fmt: skip


def _own_tables(
    columns: pa.Table | None, key: str, index: dict[str, str]
) -> tuple[tuple[int, str, int], ...]:
    """The per-table counts of an entry's games that the index gives to that entry."""
    if columns is None:
        return ()
    ids = columns.column("game_id").to_pylist()
    own = pa.array([index.get(g) == key for g in ids], pa.bool_())
    return table_counts(columns.filter(own))
