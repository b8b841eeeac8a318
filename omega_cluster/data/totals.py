"""What a shard store holds in all: shards, records and games, counted from the manifest.

The driver's counters (``pipeline.json``) are saved after each chunk it hears of; a driver killed
between a shard's commit and that save undercounts it. :func:`store_totals` counts what is really
there (the manifest's entries, their rows, the distinct ``game_id`` of each shard, reading only
that column), so a resumed run starts from the truth.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.compute as pc
import pyarrow.ipc as ipc

from omega_cluster.data.shards import ShardStore

__all__ = ["StoreTotals", "store_totals"]


@dataclass(frozen=True)
class StoreTotals:
    """Visible shards, their records, and their games (each game lies in exactly one shard)."""

    shards: int
    records: int
    games: int


def store_totals(store: ShardStore) -> StoreTotals:
    """Count the shards, records (the manifest's rows) and games (distinct ``game_id`` summed
    over the shards) of ``store``; a shard whose file is missing counts no games."""
    entries = store.entries()
    games = 0
    for entry in entries:
        try:
            with store.fs.open_input_file(store.shard_file(entry)) as f:
                column = ipc.open_file(f).read_all().column("game_id")
        except FileNotFoundError:
            continue
        games += len(pc.unique(column))
    return StoreTotals(len(entries), sum(e.rows for e in entries), games)
