"""The store audit (orphans re-committed or quarantined, lost files quarantined) and its totals."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from test_data_values import write_unchecked

from omega_cluster.data import (
    AuditReport,
    ReplayWindow,
    ShardStore,
    ShardWriter,
    StoreTotals,
    audit_store,
    records_to_table,
    store_totals,
)
from omega_cluster.data.audit import GRACE_S
from omega_cluster.data.synthetic import synthetic_records


def _write(
    store: ShardStore, writer_id: str, *, games: int = 2, rows: int = 6, seed: int = 0
) -> None:
    records = synthetic_records(rows, np.random.default_rng(seed), observation_size=4)
    records = [
        r.__class__(**{**r.__dict__, "game_id": f"{writer_id}-g{i % games}"})
        for i, r in enumerate(records)
    ]
    ShardWriter(store, writer_id=writer_id).write(records)


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_deleted_manifest_entry_is_recommitted_from_its_shard(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write(store, "chunk00000001")
    _write(store, "chunk00000002", seed=1)
    lost = store.entries()[1]
    (tmp_path / "manifest" / f"{lost.key}.json").unlink()
    reader = ShardStore(tmp_path)
    assert [e.writer_id for e in reader.entries()] == ["chunk00000001"]  # invisible
    young = audit_store(reader)  # written just now: its writer may still be publishing
    assert young.pending == (lost.shard_path,) and reader.entry_names() == [store.entries()[0].key]
    _age(tmp_path / lost.shard_path, GRACE_S + 1)
    report = audit_store(reader)
    assert report == AuditReport(reader.uri, recommitted=(lost.shard_path,))
    assert report.lines() == [
        f"shard store {reader.uri}: re-committed orphan shard {lost.shard_path} (no manifest entry)"
    ]
    found = {e.writer_id: e for e in reader.entries()}["chunk00000002"]  # the retry lookup finds it
    keep = (
        "shard_path",
        "rows",
        "bytes",
        "sha256",
        "schema_version",
        "encoder_versions",
        "champion_versions",
        "games",
        "writer_id",
    )
    assert all(getattr(found, f) == getattr(lost, f) for f in keep)
    assert found.key == lost.shard_path.removeprefix("shards/").removesuffix(".arrow")
    window = ReplayWindow(reader, window_rows=100)
    assert window.refresh() == 12 and found in window.entries
    assert audit_store(reader).clean and audit_store(reader).lines() == []


def test_a_truncated_or_unfinished_orphan_is_quarantined(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write(store, "w")
    (entry,) = store.entries()
    (tmp_path / "manifest" / f"{entry.key}.json").unlink()
    shard = tmp_path / entry.shard_path
    shard.write_bytes(shard.read_bytes()[:-100])
    temp = tmp_path / "shards" / ".00000000000000000001-w-000001.arrow.tmp"
    temp.write_bytes(b"half an upload")
    report = audit_store(store, grace_s=0)
    assert report.recommitted == () and store.entries() == []
    reasons = dict(report.quarantined)
    assert "does not read back as a shard" in reasons[entry.shard_path]
    assert "not named <key>.arrow" in reasons[f"shards/{temp.name}"]
    assert not shard.exists() and (tmp_path / "quarantine" / shard.name).exists()
    assert sorted(n.name for n in store.quarantined()) == sorted([shard.name, temp.name])


def test_an_orphan_with_bad_values_is_quarantined(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    records = synthetic_records(4, np.random.default_rng(0), observation_size=4)
    table = records_to_table(records)
    weight = table.schema.get_field_index("weight")
    nan = pa.array([1.0, float("nan"), 1.0, 1.0], pa.float32())
    table = table.set_column(weight, table.schema.field("weight"), nan)
    key = write_unchecked(store, table)
    (tmp_path / "manifest" / f"{key}.json").unlink()
    ((name, reason),) = audit_store(store, grace_s=0).quarantined
    assert name.startswith("shards/") and "column 'weight' is not finite" in reason


def test_an_entry_whose_shard_file_is_gone_is_quarantined(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write(store, "a")
    _write(store, "b", seed=1)
    gone, kept = store.entries()
    (tmp_path / gone.shard_path).unlink()
    report = audit_store(store)
    assert [name for name, _ in report.quarantined] == [gone.key]
    assert (
        "shard file shards/" in report.quarantined[0][1] and "missing" in report.quarantined[0][1]
    )
    assert store.entries() == [kept] and [n.name for n in store.quarantined()] == [gone.key]
    assert report.lines()[0].startswith(f"shard store {store.uri}: quarantined {gone.key}: ")


def _counts(totals: StoreTotals) -> tuple[int, int, int]:
    """(shards, records, games); the games per table add up to the games."""
    assert sum(totals.tables.values()) == totals.games
    return totals.shards, totals.records, totals.games


def test_store_totals_count_entries_rows_and_games(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    assert _counts(store_totals(store)) == (0, 0, 0)
    _write(store, "a", games=2, rows=6)
    _write(store, "b", games=3, rows=9, seed=1)
    assert _counts(store_totals(store)) == (2, 15, 5)
    damaged = store.entries()[1]
    (tmp_path / damaged.shard_path).write_bytes(b"not a shard")
    # the totals are the manifest's: a damaged shard counts until a check quarantines it ...
    assert _counts(store_totals(store)) == (2, 15, 5)
    audit_store(store)  # ... as the audit does (its size is not the entry's), once
    assert _counts(store_totals(store)) == (1, 6, 2)  # quarantined
    assert [n.name for n in store.quarantined()] == [damaged.key]


def _strip_game_ids(tmp_path: Path, key: str) -> None:
    """Make an entry look like one written before entries listed their game ids and tables."""
    manifest = tmp_path / "manifest" / f"{key}.json"
    data = json.loads(manifest.read_text())
    del data["game_ids"], data["tables"]
    manifest.write_text(json.dumps(data))


@pytest.mark.parametrize("rows", [1, 8192])
def test_store_totals_of_older_entries_read_only_the_game_id_column(
    tmp_path: Path, rows: int
) -> None:
    store = ShardStore(tmp_path)
    _write(store, "w", games=rows, rows=rows)
    (entry,) = store.entries()
    assert entry.game_ids is not None and len(entry.game_ids) == rows
    _strip_game_ids(tmp_path, entry.key)
    manifest = tmp_path / "manifest" / f"{entry.key}.json"
    manifest.write_text(manifest.read_text().replace(entry.sha256, "0" * 64))
    fresh = ShardStore(tmp_path)  # a full, checked read would now quarantine the shard
    assert fresh.entries()[0].game_ids is None
    assert _counts(store_totals(fresh)) == (1, rows, rows)
    assert fresh.quarantined() == []


def test_store_totals_read_no_shard_of_entries_that_list_their_games(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    _write(store, "w", games=3, rows=9)
    (entry,) = store.entries()
    (tmp_path / entry.shard_path).write_bytes(b"x" * entry.bytes)  # unreadable, same size
    fresh = ShardStore(tmp_path)
    assert _counts(store_totals(fresh)) == (1, 9, 3)
    assert fresh.quarantined() == []  # nothing was read: the manifest alone answered
