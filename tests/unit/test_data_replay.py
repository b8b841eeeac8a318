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
    LegacyPosition,
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
    # one chunk, not one per shard: a sampled batch is gathered from it, not shard by shard
    assert {window.table().column(n).num_chunks for n in window.table().column_names} == {1}
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


FAR_FUTURE_NS = 9_999_999_999_000_000_000  # year 2286: a node whose clock runs far ahead


def _skewed_writer(store: ShardStore, writer_id: str = "skewed") -> ShardWriter:
    """A writer whose clock runs ahead: every key it takes sorts after every real one."""
    writer = ShardWriter(store, writer_id=writer_id)
    writer._clock._last_ns = FAR_FUTURE_NS
    return writer


def _small(seed: int) -> list[Record]:
    return synthetic_records(3, np.random.default_rng(seed), observation_size=4, feature_size=2)


def test_a_writer_whose_clock_runs_ahead_hides_no_later_shard(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 2)
    window = ReplayWindow(store, window_rows=25)
    assert window.refresh() == 20
    skewed = _skewed_writer(store).write(_small(9)).entry
    assert skewed.key.startswith("0999999999")
    assert window.refresh() == 3
    saved = json.loads(json.dumps(window.position.to_dict()))
    for first in (2, 3, 4):  # normal writers keep writing: every shard is still new
        _write_shards(store, 1, first=first)
        assert window.refresh() == SHARD_ROWS
    assert window.position.rows_seen == 53 and window.refresh() == 0
    # consumption order, not key order: the far-future shard ages out like any other
    assert [e.writer_id for e in window.entries] == ["w2", "w3", "w4"]
    resumed = ReplayWindow(store, window_rows=25, start=ManifestPosition.from_dict(saved))
    assert [e.writer_id for e in resumed.entries] == ["w0", "w0", "skewed"]  # as at `saved`
    assert resumed.refresh() == 3 * SHARD_ROWS and resumed.entries == window.entries
    assert resumed.position == window.position


def test_an_entry_published_late_under_an_old_key_is_read(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write_shards(store, 2)
    window = ReplayWindow(store, window_rows=1000)
    window.refresh()
    late = ShardWriter(store, writer_id="late").write(_small(9)).entry
    data = late.to_dict() | {"key": "00000000000000000001-late-000009"}  # long before the rest
    (tmp_path / "manifest" / f"{late.key}.json").rename(
        tmp_path / "manifest" / f"{data['key']}.json"
    )
    (tmp_path / "manifest" / f"{data['key']}.json").write_text(json.dumps(data))
    assert window.refresh() == 3 and window.refresh() == 0
    assert [e.writer_id for e in window.entries] == ["w0", "w0", "late"]  # consumption order
    resumed = ReplayWindow(store, window_rows=1000, start=window.position)
    assert resumed.entries == window.entries and resumed.refresh() == 0


def test_an_old_checkpoints_position_converts_to_the_consumed_names(tmp_path: Path) -> None:
    """The old ``{key, rows_seen, recent}``: keys up to ``key`` count as consumed, except those
    within its minute of settle time that are not in ``recent`` (the old reader still read those)."""
    store = ShardStore(tmp_path)
    _write_shards(store, 3)
    names = store.entry_names()
    settle = int(60e9)
    newest = int(names[-1][:20])
    unread = f"{newest - 1:020d}-late-000001"  # just before the old key, not in recent: unread
    stale = f"{newest - 2 * settle:020d}-stale-000001"  # long before: the old reader skipped it
    for key, seed in ((unread, 7), (stale, 8)):
        entry = ShardWriter(store, writer_id="x").write(_small(seed)).entry
        (tmp_path / "manifest" / f"{entry.key}.json").unlink()
        (tmp_path / "manifest" / f"{key}.json").write_text(
            json.dumps(entry.to_dict() | {"key": key})
        )
    old = {"key": names[-1], "rows_seen": 30, "recent": names}  # written within its minute
    legacy = ManifestPosition.from_dict(json.loads(json.dumps(old)))
    assert isinstance(legacy, LegacyPosition) and legacy.to_dict() == old
    window = ReplayWindow(store, window_rows=1000, start=legacy)
    assert window.position == ManifestPosition((stale, *names), 30)  # in key order
    assert [e.key for e in window.entries] == [stale, *names]  # the window it had, rebuilt
    assert window.refresh() == 3 and window.entries[-1].key == unread
    assert ManifestPosition.from_dict(window.position.to_dict()) == window.position


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
    with pytest.raises(ValueError, match="consumed, count, rows_seen"):
        ManifestPosition.from_dict({"key": ""})
    packed = ManifestPosition(("a", "b"), 5).to_dict()
    with pytest.raises(ValueError, match="lists 2 names, 'count' says 3"):
        ManifestPosition.from_dict(packed | {"count": 3})
    with pytest.raises(ValueError, match="does not decode"):
        ManifestPosition.from_dict(packed | {"consumed": "not base64!"})
    with pytest.raises(ValueError, match="is not <time_ns>"):
        ManifestPosition.from_dict({"key": "x", "rows_seen": 0, "recent": []})
