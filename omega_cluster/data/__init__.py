"""Records, Arrow shards, the shard store with its manifest and quarantine, and the replay window.

Self-play turns decisions into :class:`Record` rows; a :class:`ShardWriter` writes tables of them
as Arrow IPC shards to a :class:`ShardStore` (any ``pyarrow.fs`` URI: local, ``s3://``); the
learner's :class:`ReplayWindow` reads new shards from the manifest and samples
:class:`TrainingBatch` arrays; :func:`audit_store` repairs a store's orphans at the start of a run
and :func:`store_totals` recounts what its manifest holds; :func:`export_parquet` copies a store's shards
as Parquet files for DuckDB. This is the only package that imports pyarrow: everything it hands
out to the model and learner is numpy or plain Python.
"""

from omega_cluster.data._columns import count_distinct
from omega_cluster.data.audit import AuditReport, StoreTotals, audit_store, store_totals
from omega_cluster.data.batch import TrainingBatch, table_to_batch
from omega_cluster.data.export import ParquetExport, export_parquet
from omega_cluster.data.manifest import LegacyPosition, ManifestEntry, ManifestPosition
from omega_cluster.data.reader import ShardReader
from omega_cluster.data.replay import GrowingWindow, ReplayWindow
from omega_cluster.data.schema import (
    SCHEMA,
    SCHEMA_VERSION,
    Record,
    SchemaError,
    records_to_table,
    table_to_records,
    validate_table,
)
from omega_cluster.data.shards import (
    CorruptShardError,
    DuplicateGamesError,
    QuarantineNote,
    ShardInfo,
    ShardStore,
    ShardWriter,
)
from omega_cluster.data.slices import SliceLabels, Slicing

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "AuditReport",
    "CorruptShardError",
    "DuplicateGamesError",
    "GrowingWindow",
    "LegacyPosition",
    "ManifestEntry",
    "ManifestPosition",
    "ParquetExport",
    "QuarantineNote",
    "Record",
    "ReplayWindow",
    "SchemaError",
    "ShardInfo",
    "ShardReader",
    "ShardStore",
    "ShardWriter",
    "SliceLabels",
    "Slicing",
    "StoreTotals",
    "TrainingBatch",
    "audit_store",
    "count_distinct",
    "export_parquet",
    "records_to_table",
    "store_totals",
    "table_to_batch",
    "table_to_records",
    "validate_table",
]
