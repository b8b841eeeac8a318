"""The replay window: order, size, growth, resume from a position, late arrivals, sampling."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from omega_cluster.data import (
    GrowingWindow,
    ManifestEntry,
    ManifestPosition,
    Record,
    ReplayWindow,
    ShardStore,
    ShardWriter,
)
from omega_cluster.data.synthetic import synthetic_records

SHARD_ROWS = 10


def _write_shards(store: ShardStore, count: int, *, first: int = 0, **kwargs: object) -> None:
    """``count`` shards of SHARD_ROWS rows; row r of shard s has decision_index 100*s + r."""
    writer = ShardWriter(store, writer_id=f"w{first}")
    for shard in range(first, first + count):
        rng = np.random.default_rng(shard)
        rows = synthetic_records(SHARD_ROWS, rng, observation_size=4, feature_size=2, **kwargs)  # type: ignore[arg-type]
        writer.write([replace(r, decision_index=100 * shard + i) for i, r in enumerate(rows)])


def _sampled_decisions(window: ReplayWindow, size: int = 4000, seed: int = 0) -> set[int]:
    indices = window.sample_indices(size, np.random.default_rng(seed))
    column = window.table().column("decision_index").to_numpy()
    return set(column[indices].tolist())


def test_window_keeps_the_newest_rows_in_manifest_order(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    window = ReplayWindow(store, window_rows=25)
    with pytest.raises(ValueError, match="empty; refresh"):
        window.sample(4, np.random.default_rng(0))
    _write_shards(store, 5)
    assert window.refresh() == 50
    assert window.refresh() == 0  # nothing new
    # shards 2, 3, 4 hold 30 >= 25 rows; dropping shard 2 would leave 20 < 25
    assert len(window.entries) == 3 and window.rows == 25 == len(window)
    decisions = window.table().column("decision_index").to_numpy()
    assert decisions.tolist() == [100 * s + r for s in (2, 3, 4) for r in range(SHARD_ROWS)]
    # only the newest 25 rows are sampled: the last 5 of shard 2, all of shards 3 and 4
    assert _sampled_decisions(window) == {205, 206, 207, 208, 209} | {
        100 * s + r for s in (3, 4) for r in range(SHARD_ROWS)
    }
    assert window.position.rows_seen == 50


def test_refresh_reads_only_new_shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ShardStore(tmp_path)
    read: list[str] = []
    original = store.read

    def counting_read(entry: ManifestEntry) -> pa.Table:
        read.append(entry.key)
        return original(entry)

    monkeypatch.setattr(store, "read", counting_read)
    window = ReplayWindow(store, window_rows=1000)
    _write_shards(store, 2)
    window.refresh()
    _write_shards(store, 3, first=2)
    assert window.refresh() == 30
    assert len(read) == len(set(read)) == 5
    assert window.table().num_rows == 50


def test_growing_window_follows_katago_rule(tmp_path: Path) -> None:
    rule = GrowingWindow(min_rows=20, exponent=0.5, rate=0.5)
    assert rule.rows(0) == rule.rows(20) == 20
    assert rule.rows(80) == 40  # 20 * (1 + 0.5 * (sqrt(4) - 1) / 0.5)
    assert rule.rows(180) == 60
    assert replace(rule, max_rows=50).rows(180) == 50
    with pytest.raises(ValueError, match="exponent"):
        GrowingWindow(exponent=1.5)
    with pytest.raises(ValueError, match="max_rows 5 < min_rows"):
        GrowingWindow(min_rows=10, max_rows=5)
    store = ShardStore(tmp_path)
    window = ReplayWindow(store, growing=rule)
    _write_shards(store, 2)
    window.refresh()
    assert (window.capacity, window.rows) == (20, 20)
    _write_shards(store, 6, first=2)
    window.refresh()
    assert (window.capacity, window.rows, len(window.entries)) == (40, 40, 4)


def test_resume_from_a_position_rebuilds_the_same_window(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 6)
    window = ReplayWindow(store, window_rows=35)
    window.refresh()
    saved = json.loads(json.dumps(window.position.to_dict()))  # as a checkpoint stores it
    resumed = ReplayWindow(store, window_rows=35, start=ManifestPosition.from_dict(saved))
    assert resumed.entries == window.entries and resumed.position == window.position
    rng_a, rng_b = np.random.default_rng(5), np.random.default_rng(5)
    a, b = window.sample(64, rng_a, weighted=True), resumed.sample(64, rng_b, weighted=True)
    np.testing.assert_array_equal(a.observations, b.observations)
    _write_shards(store, 2, first=6)
    assert window.refresh() == resumed.refresh() == 20
    assert resumed.entries == window.entries
    np.testing.assert_array_equal(
        window.sample_indices(100, rng_a), resumed.sample_indices(100, rng_b)
    )


def _rekey(store_root: Path, entry: ManifestEntry, key: str) -> None:
    """Publish ``entry`` late under an older key (as a writer whose PUT was slow would)."""
    data = entry.to_dict() | {"key": key}
    (store_root / "manifest" / f"{entry.key}.json").unlink()
    (store_root / "manifest" / f"{key}.json").write_text(json.dumps(data))


def test_late_manifest_entries_within_the_settle_time_are_read(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 2)
    window = ReplayWindow(store, window_rows=1000, settle_s=60)
    window.refresh()
    newest = int(window.position.key[:20])
    late, stale = (
        ShardWriter(store, writer_id=w)
        .write(synthetic_records(3, np.random.default_rng(9), observation_size=4, feature_size=2))
        .entry
        for w in ("late", "stale")
    )
    _rekey(tmp_path, late, f"{newest - 1:020d}-late-000009")  # 1 ns before the newest
    _rekey(tmp_path, stale, f"{newest - 120 * 10**9:020d}-stale-000009")  # 2 min before
    saved = window.position
    assert window.refresh() == 3  # the late one only; the stale one is taken as consumed
    assert [e.writer_id for e in window.entries] == ["w0", "late", "w0"]  # key order
    assert window.refresh() == 0
    resumed = ReplayWindow(store, window_rows=1000, start=saved, settle_s=60)
    assert resumed.refresh() == 3
    # a rebuilt window cannot tell the stale entry from a consumed one: it loads it (documented)
    assert [e for e in resumed.entries if e.writer_id != "stale"] == window.entries


def test_quarantined_shards_are_counted_and_never_sampled(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 3)
    middle = store.entries()[1]
    shard = tmp_path / middle.shard_path
    shard.write_bytes(shard.read_bytes()[:-1] + b"\x00")
    window = ReplayWindow(store, window_rows=1000)
    assert window.refresh() == 20
    assert window.quarantined == 1 and middle not in window.entries
    assert _sampled_decisions(window).isdisjoint(range(100, 100 + SHARD_ROWS))
    assert window.position.rows_seen == 20


def test_accept_filters_shards_before_reading_them(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 2, encoder_version=1)
    _write_shards(store, 1, first=2, encoder_version=2)
    window = ReplayWindow(store, accept=lambda e: e.encoder_versions == (2,))
    assert window.refresh() == 10
    assert window.position.rows_seen == 10 and window.refresh() == 0


def _weighted_store(tmp_path: Path) -> ShardStore:
    store = ShardStore(tmp_path)
    rows: list[Record] = []
    for i, r in enumerate(synthetic_records(200, np.random.default_rng(1), observation_size=4)):
        weight = (1.0, 0.25, 0.0)[i % 3]
        rows.append(replace(r, weight=weight, decision_index=i))
    ShardWriter(store, writer_id="w").write(rows)
    return store


def test_weighted_sampling_honours_record_weights(tmp_path: Path) -> None:
    """Rows of weight 1, 0.25 and 0 in equal numbers: weighted draws hit them 80 % / 20 % / 0 %.

    20,000 draws give a standard error of 0.3 % on the 80 % share; the margin is 2 % (~7 σ).
    """
    window = ReplayWindow(_weighted_store(tmp_path))
    window.refresh()
    weights = window.table().column("weight").to_numpy()
    drawn = weights[window.sample_indices(20_000, np.random.default_rng(11), weighted=True)]
    assert not (drawn == 0).any()
    assert abs((drawn == 1.0).mean() - 0.8) < 0.02
    uniform = weights[window.sample_indices(20_000, np.random.default_rng(12))]
    assert abs((uniform == 0).mean() - 1 / 3) < 0.02  # uniform ignores weights
    batch = window.sample(32, np.random.default_rng(3), weighted=True)
    assert batch.size == 32 and (batch.weights > 0).all()


def test_sampling_is_reproducible_and_checks_its_arguments(tmp_path: Path) -> None:
    window = ReplayWindow(_weighted_store(tmp_path))
    window.refresh()
    first = window.sample(16, np.random.default_rng(4))
    again = window.sample(16, np.random.default_rng(4))
    np.testing.assert_array_equal(first.observations, again.observations)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        window.sample(0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="window_rows must be >= 1"):
        ReplayWindow(window.store, window_rows=0)
    with pytest.raises(ValueError, match="key, rows_seen, recent"):
        ManifestPosition.from_dict({"key": ""})
