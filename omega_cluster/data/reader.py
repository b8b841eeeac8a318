"""Reading a shard store's manifest once each entry, from a remembered position.

:class:`ShardReader` is what the replay window (:mod:`.replay`) reads new shards with: it lists
the manifest and takes every entry whose name it has not consumed
(:class:`.manifest.ManifestPosition`), however that name sorts: a writer whose clock runs ahead,
or an entry published late, neither hides nor loses anything. A shard that fails its checks is skipped (and counted);
:meth:`.shards.ShardStore.read` has moved it to quarantine.
"""

from __future__ import annotations

import pyarrow as pa

from omega_cluster.data.manifest import LegacyPosition, ManifestEntry, ManifestPosition
from omega_cluster.data.shards import CorruptShardError, ShardStore

__all__ = ["ShardReader"]


class ShardReader:
    """Reads a store's new manifest entries, once each, remembering which it consumed.

    Each call of :meth:`new_entries` lists the manifest names (a listing, no file reads) and
    loads only the entries not consumed yet, in name order; :meth:`consume` records them in the
    order they were consumed (the position's order).
    """

    def __init__(
        self, store: ShardStore, *, start: ManifestPosition | LegacyPosition | None = None
    ) -> None:
        self.store = store
        if isinstance(start, LegacyPosition):  # an old checkpoint: its rule over today's listing
            start = start.resolve(store.entry_names())
        start = start or ManifestPosition()
        self._consumed = list(start.consumed)
        self._seen = set(self._consumed)
        self._rows_seen = start.rows_seen
        self.quarantined = 0  # shards that failed their checks while this reader read them

    @property
    def position(self) -> ManifestPosition:
        return ManifestPosition(tuple(self._consumed), self._rows_seen)

    @property
    def rows_seen(self) -> int:
        """Rows of every shard consumed so far."""
        return self._rows_seen

    def consumed_names(self) -> list[str]:
        """Names of the consumed entries, in the order they were consumed (a copy)."""
        return list(self._consumed)

    def new_entries(self) -> list[ManifestEntry]:
        """Entries not consumed yet, in name order (loads only manifest files it has not seen)."""
        return self.store.entries(skip=self._seen)

    def consume(self, entry: ManifestEntry, rows: int) -> None:
        """Mark an entry consumed (``rows``: rows it added; 0 for a quarantined shard)."""
        if entry.key in self._seen:
            return
        self._seen.add(entry.key)
        self._consumed.append(entry.key)
        self._rows_seen += rows

    def read_new(self) -> list[tuple[ManifestEntry, pa.Table]]:
        """Read every new shard; quarantined ones are skipped and counted in ``quarantined``."""
        out = []
        for entry in self.new_entries():
            try:
                table = self.store.read(entry)
            except CorruptShardError:
                self.quarantined += 1
                self.consume(entry, 0)
                continue
            self.consume(entry, table.num_rows)
            out.append((entry, table))
        return out
