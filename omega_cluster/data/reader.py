"""Reading a shard store in manifest order, once each, from a remembered position.

:class:`ShardReader` is what the replay window (:mod:`.replay`) reads new shards with: it lists
only manifest entries it has not consumed (:class:`.manifest.ManifestPosition`), still picks up
an entry published a little late, and skips (and counts) a shard that fails its checks, which
:meth:`.shards.ShardStore.read` has moved to quarantine.
"""

from __future__ import annotations

import pyarrow as pa

from omega_cluster.data.manifest import ManifestEntry, ManifestPosition, key_time_ns
from omega_cluster.data.shards import CorruptShardError, ShardStore

__all__ = ["ShardReader"]


class ShardReader:
    """Reads a store's shards in manifest order, once each, remembering its position.

    ``settle_s``: a manifest entry whose key is older than the newest consumed key by less than
    this is still picked up when it appears late (writers take the key just before the manifest
    PUT, and node clocks differ a little); older late arrivals are ignored. Keep it above the
    clock skew between nodes plus the slowest manifest PUT.
    """

    def __init__(
        self, store: ShardStore, *, start: ManifestPosition | None = None, settle_s: float = 60.0
    ) -> None:
        self.store = store
        self.settle_ns = int(settle_s * 1e9)
        self._position = start or ManifestPosition()
        self.quarantined = 0  # shards that failed their checks while this reader read them

    @property
    def position(self) -> ManifestPosition:
        return self._position

    def horizon(self, key: str) -> str:
        return f"{max(key_time_ns(key) - self.settle_ns, 0):020d}" if key else ""

    def new_entries(self) -> list[ManifestEntry]:
        """Entries not consumed yet, in key order (reads only manifest files it has not seen)."""
        pos = self._position
        recent = set(pos.recent)
        return [
            e
            for e in self.store.entries(after=self.horizon(pos.key))
            if e.key > pos.key or e.key not in recent
        ]

    def consume(self, entry: ManifestEntry, rows: int) -> None:
        """Mark an entry consumed (``rows``: rows it added; 0 for a quarantined shard)."""
        pos = self._position
        newest = max(pos.key, entry.key)
        horizon = self.horizon(newest)
        recent = tuple(sorted(k for k in {*pos.recent, entry.key} if k > horizon))
        self._position = ManifestPosition(newest, pos.rows_seen + rows, recent)

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
