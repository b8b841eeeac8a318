"""The replay window: the most recent N rows of a shard store, sampled into training batches.

The learner (:mod:`omega_cluster.train`) owns a :class:`ReplayWindow`; self-play actors write
shards (:mod:`.shards`). :meth:`ReplayWindow.refresh` reads only manifest entries it has not
consumed (:class:`.reader.ShardReader`), appends their shards in the order it consumes them (not
by key: keys come from the writers' clocks, and a far-future key must not stay "newest" forever)
and drops whole shards from the old end once the newer ones alone hold N rows;
:meth:`ReplayWindow.sample` draws a batch among the newest N rows, uniformly or in proportion to
the record ``weight``, with an explicit ``numpy.random.Generator``. :attr:`ReplayWindow.position`
goes into the learner's checkpoint; ``ReplayWindow(store, start=position)`` rebuilds the same
window (the last consumed shards, by the position's consumption order) and continues from there.
Quarantined shards are skipped and counted.

With a :class:`~.slices.Slicing` the window knows the slice (table size × objective) of each row
(:meth:`ReplayWindow.slice_labels`, :meth:`ReplayWindow.slice_rows`) and, given slice weights,
samples so that each slice present gets its weight's share of the samples (:mod:`.slices`);
without weights, or with fewer than two slices in the window, it samples exactly as without one.

N is fixed (``window_rows``) or grows with the rows seen (:class:`GrowingWindow`, KataGo's rule):
early on, when the network changes fast, old data is stale and the window is small; later it grows
sub-linearly so that the data stays diverse without training forever on ancient games.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from omega_cluster.data.batch import TrainingBatch, table_to_batch
from omega_cluster.data.manifest import LegacyPosition, ManifestEntry, ManifestPosition
from omega_cluster.data.reader import ShardReader
from omega_cluster.data.shards import CorruptShardError, ShardStore
from omega_cluster.data.slices import SliceLabels, Slicing, balanced_cumulative, label_rows

__all__ = ["GrowingWindow", "ReplayWindow"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GrowingWindow:
    """KataGo's growing window (Wu 2019, "Accelerating Self-Play Learning in Go", appendix C).

    ``rows(T) = c * (1 + β * ((T / c) ** α - 1) / α)`` for ``T > c`` rows seen (``c`` below),
    capped at ``max_rows``: the window holds everything up to ``c`` rows, then grows with slope
    ``β`` at first and ever slower (``T ** α``). KataGo: c = 250k, α = 0.75, β = 0.4.
    """

    min_rows: int = 250_000  # c: the window before it starts growing
    exponent: float = 0.75  # α in (0, 1]: how fast growth slows
    rate: float = 0.4  # β: the window's growth per row seen, at T = c
    max_rows: int | None = None  # cap (None: none)

    def __post_init__(self) -> None:
        if self.min_rows < 1 or not 0 < self.exponent <= 1 or self.rate < 0:
            raise ValueError(
                f"GrowingWindow needs min_rows >= 1, 0 < exponent <= 1, rate >= 0: {self}"
            )
        if self.max_rows is not None and self.max_rows < self.min_rows:
            raise ValueError(f"max_rows {self.max_rows} < min_rows {self.min_rows}")

    def rows(self, rows_seen: int) -> int:
        c = self.min_rows
        if rows_seen <= c:
            return c
        alpha = self.exponent
        size = int(c * (1 + self.rate * ((rows_seen / c) ** alpha - 1) / alpha))
        return size if self.max_rows is None else min(size, self.max_rows)


class ReplayWindow:
    """The newest N rows of a store, refreshed from its manifest, sampled into batches.

    ``accept`` filters manifest entries before their shards are read (e.g. one game and encoder
    version: ``lambda e: e.encoder_versions == (3,)``); rejected entries count as consumed.
    ``slicing``: label rows by slice and, with weights, balance the slices (module docstring).
    """

    def __init__(
        self,
        store: ShardStore,
        *,
        window_rows: int = 250_000,
        growing: GrowingWindow | None = None,
        start: ManifestPosition | LegacyPosition | None = None,
        accept: Callable[[ManifestEntry], bool] | None = None,
        slicing: Slicing | None = None,
    ) -> None:
        if window_rows < 1:
            raise ValueError(f"window_rows must be >= 1, got {window_rows}")
        self.store = store
        self.window_rows = window_rows  # N when `growing` is None
        self.growing = growing
        self.accept = accept or (lambda entry: True)
        self._reader = ShardReader(store, start=start)
        self._shards: list[tuple[ManifestEntry, pa.Table]] = []
        self._table: pa.Table | None = None  # concatenation of the window's shards (lazy)
        self._cumulative: np.ndarray | None = None  # cumulative weights of sampled rows (lazy)
        self.slicing = slicing
        self._labels: SliceLabels | None = None  # the slice of each row of table() (lazy)
        self._balanced: dict[bool, np.ndarray | None] = {}  # weighted -> cumulative mass (lazy)
        self._backfill_quarantined = 0
        if start is not None:
            self._backfill()

    @property
    def position(self) -> ManifestPosition:
        """How far the manifest was read (store it in checkpoints; pass it back as ``start``)."""
        return self._reader.position

    @property
    def capacity(self) -> int:
        """N, the rows sampled from: fixed, or grown from the rows seen."""
        if self.growing is None:
            return self.window_rows
        return self.growing.rows(self._reader.rows_seen)

    @property
    def rows(self) -> int:
        """Rows that :meth:`sample` draws from: min(N, rows held)."""
        return min(self.capacity, self._held())

    def __len__(self) -> int:
        return self.rows

    @property
    def quarantined(self) -> int:
        """Shards this window found corrupt (quarantined, never sampled)."""
        return self._reader.quarantined + self._backfill_quarantined

    @property
    def entries(self) -> list[ManifestEntry]:
        """Manifest entries of the shards held, oldest first."""
        return [entry for entry, _ in self._shards]

    def _held(self) -> int:
        return sum(table.num_rows for _, table in self._shards)

    def _backfill(self) -> None:
        """Reload the shards the window held at its start position: the last consumed (and
        accepted) shards, newest first, until they hold N rows."""
        listed = set(self.store.entry_names())
        chosen: list[ManifestEntry] = []
        held = 0
        for name in reversed(self._reader.consumed_names()):
            if held >= self.capacity:
                break
            entry = self.store.entry(name) if name in listed else None
            if entry is not None and self.accept(entry):
                chosen.append(entry)
                held += entry.rows
        for entry in reversed(chosen):
            try:
                self._shards.append((entry, self.store.read(entry)))
            except CorruptShardError:
                self._backfill_quarantined += 1

    def refresh(self) -> int:
        """Read new shards from the manifest; returns the rows added."""
        added = 0
        for entry in self._reader.new_entries():
            if not self.accept(entry):
                log.info("replay window skips shard %s (not accepted)", entry.key)
                self._reader.consume(entry, 0)
                continue
            try:
                table = self.store.read(entry)
            except CorruptShardError:
                self._reader.quarantined += 1
                self._reader.consume(entry, 0)
                continue
            self._reader.consume(entry, table.num_rows)
            self._shards.append((entry, table))
            added += table.num_rows
        if added:
            self._evict()
            self._table = self._cumulative = self._labels = None
            self._balanced = {}
        return added

    def _evict(self) -> None:
        # Keep the shortest suffix of shards holding >= N rows: the oldest shard may be partly
        # outside the window; sample() only draws from its newest rows.
        capacity = self.capacity
        held = self._held()
        while self._shards and held - self._shards[0][1].num_rows >= capacity:
            held -= self._shards.pop(0)[1].num_rows

    def table(self) -> pa.Table:
        """The rows held (oldest first), of which the last :attr:`rows` are sampled."""
        if self._table is None:
            if not self._shards:
                raise ValueError(f"replay window over {self.store.uri} is empty; refresh() first")
            # one chunk: ``take`` on a table of one chunk per shard gathers shard by shard, which
            # makes every sampled batch cost in proportion to the shards held; combined once per
            # refresh, a batch costs in proportion to its own rows
            tables = [table for _, table in self._shards]
            self._table = pa.concat_tables(tables).combine_chunks()
        return self._table

    def sample_indices(
        self, batch_size: int, rng: np.random.Generator, *, weighted: bool = False
    ) -> np.ndarray:
        """int64[batch_size] row indices of :meth:`table`, drawn with replacement from the newest N."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        table = self.table()
        offset = table.num_rows - self.rows
        balanced = self._balanced_cumulative(weighted)
        if balanced is not None:
            draws = rng.random(batch_size) * float(balanced[-1])
            return np.searchsorted(balanced, draws, side="right").astype(np.int64) + offset
        if not weighted:
            return rng.integers(offset, table.num_rows, size=batch_size, dtype=np.int64)
        if self._cumulative is None:
            weights = table.column("weight").to_numpy()[offset:].astype(np.float64)
            self._cumulative = np.cumsum(weights)
        total = float(self._cumulative[-1])
        if not total > 0:
            raise ValueError("every record weight in the replay window is 0; sample uniformly")
        draws = rng.random(batch_size) * total
        return np.searchsorted(self._cumulative, draws, side="right").astype(np.int64) + offset

    def slice_labels(self) -> SliceLabels:
        """The slice of every row of :meth:`table` (needs a ``slicing``)."""
        if self.slicing is None:
            raise ValueError("this replay window was built without a slicing")
        if self._labels is None:
            self._labels = label_rows(self.table(), self.slicing.key_of)
        return self._labels

    def slice_rows(self) -> dict[str, int]:
        """Rows per slice among the newest N (those :meth:`sample` draws from)."""
        return self.slice_labels().counts(self.table().num_rows - self.rows)

    def _balanced_cumulative(self, weighted: bool) -> np.ndarray | None:
        """The cumulative sampling mass of balanced sampling, or None to sample as without."""
        if self.slicing is None or not self.slicing.weights:
            return None
        if weighted not in self._balanced:
            table = self.table()
            offset = table.num_rows - self.rows
            rows = table.column("weight").to_numpy()[offset:] if weighted else None
            labels = self.slice_labels()
            self._balanced[weighted] = balanced_cumulative(
                labels, offset, self.slicing.weights, rows
            )
        return self._balanced[weighted]

    def sample(
        self, batch_size: int, rng: np.random.Generator, *, weighted: bool = False
    ) -> TrainingBatch:
        """A batch drawn with replacement: uniform over the newest N rows, or ∝ record weight
        (with slice weights: balanced over the slices, module docstring)."""
        return self.sample_rows(batch_size, rng, weighted=weighted)[0]

    def sample_rows(
        self, batch_size: int, rng: np.random.Generator, *, weighted: bool = False
    ) -> tuple[TrainingBatch, np.ndarray]:
        """:meth:`sample`, with the row indices (of :meth:`table`) it drew."""
        indices = self.sample_indices(batch_size, rng, weighted=weighted)
        return table_to_batch(self.table().take(indices), validate=False), indices
