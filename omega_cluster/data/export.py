"""Parquet copies of a store's shards, for the query tools that do not read Arrow IPC files.

DuckDB, the tool most people reach for first to look at a table of records, reads Parquet files
natively but Arrow IPC files only through a community extension; pandas, Spark and every
dataframe library read Parquet too. :func:`export_parquet` mirrors the manifest into a local
directory, one ``<key>.parquet`` (zstd) per shard the manifest holds, so that one line reads a
whole run::

    duckdb -c "SELECT player, count(*) FROM 'runs/<run>/parquet/*.parquet' GROUP BY player"

Each call brings the directory up to date with the manifest: a shard not there yet is read
through :meth:`.shards.ShardStore.read` (so it is checked as every reader checks it, and one that
fails is quarantined and never written), written to a temporary name and renamed (a query never
sees half a file); a shard already there is left as it is (a shard never changes once written);
a file whose entry left the manifest (quarantined since) is removed. The columns and their docs
are the shards' own (:data:`.schema.SCHEMA`), one row per decision.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from omega_cluster.data.shards import CorruptShardError, ShardStore

__all__ = ["ParquetExport", "export_parquet"]

SUFFIX = ".parquet"


@dataclass(frozen=True)
class ParquetExport:
    """What one :func:`export_parquet` call did."""

    directory: Path
    written: int  # new files
    rows: int  # records in the new files
    kept: int  # files already there for shards of the manifest
    removed: int  # files of shards that left the manifest
    quarantined: int  # shards that failed their checks while being read (none written)

    @property
    def files(self) -> int:
        """Parquet files in the directory now: one per shard of the manifest."""
        return self.written + self.kept


def export_parquet(store: ShardStore, directory: str | Path) -> ParquetExport:
    """Mirror ``store``'s manifest into ``directory`` as Parquet files (module docstring)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    entries = {entry.key: entry for entry in store.entries()}
    present = {p.name[: -len(SUFFIX)] for p in out.glob(f"*{SUFFIX}")}
    removed = 0
    for key in sorted(present - entries.keys()):
        (out / f"{key}{SUFFIX}").unlink()
        removed += 1
    written = rows = quarantined = 0
    for key, entry in entries.items():
        if key in present:
            continue
        try:
            table = store.read(entry)
        except CorruptShardError:  # quarantined by the read, with its reason
            quarantined += 1
            continue
        temp = out / f".{key}{SUFFIX}.tmp-{os.getpid()}"
        pq.write_table(table, temp, compression="zstd")
        temp.replace(out / f"{key}{SUFFIX}")
        written += 1
        rows += table.num_rows
    kept = len(present & entries.keys())
    return ParquetExport(out, written, rows, kept, removed, quarantined)
