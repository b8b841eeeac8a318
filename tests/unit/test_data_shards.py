"""Shard store on the local filesystem: atomic writes, manifest, quarantine, orphans, DuckDB, polars."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from omega_cluster.data import (
    SCHEMA_VERSION,
    CorruptShardError,
    ManifestEntry,
    Record,
    ShardReader,
    ShardStore,
    ShardWriter,
    audit_store,
    records_to_table,
    table_to_records,
)
from omega_cluster.data.schema import SCHEMA_VERSION_KEY
from omega_cluster.data.synthetic import synthetic_records

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _records(count: int, seed: int = 0, **kwargs: object) -> list[Record]:
    rng = np.random.default_rng(seed)
    return synthetic_records(count, rng, observation_size=16, **kwargs)  # type: ignore[arg-type]


def _files(root: Path, sub: str) -> list[str]:
    return sorted(p.name for p in (root / sub).iterdir())


def test_write_then_read_back_with_manifest_fields(tmp_path: Path) -> None:
    store = ShardStore(tmp_path / "run")
    writer = ShardWriter(store, writer_id="actor_3", node_id="node-a")
    records = _records(50, hidden_size=6)  # the hidden_state column both present and null
    info = writer.write(records)
    entry = info.entry
    assert (entry.rows, entry.writer_id, entry.node_id) == (50, "actor_3", "node-a")
    assert entry.schema_version == SCHEMA_VERSION and entry.encoder_versions == (1,)
    assert entry.games == ("synthetic",) and entry.champion_versions == (0,)
    shard = tmp_path / "run" / entry.shard_path
    assert entry.bytes == shard.stat().st_size and Path(info.shard_file) == shard
    assert ZSTD_MAGIC in shard.read_bytes()  # the IPC body buffers are zstd frames
    on_disk = json.loads(Path(info.manifest_file).read_text())
    assert ManifestEntry.from_dict(on_disk) == entry
    assert store.entries() == [entry]
    assert table_to_records(store.read(entry)) == records
    # atomic write: nothing but the final files is left behind
    assert _files(tmp_path / "run", "shards") == [shard.name]
    assert _files(tmp_path / "run", "manifest") == [f"{entry.key}.json"]


def test_keys_sort_by_time_across_writers_and_uris(tmp_path: Path) -> None:
    store = ShardStore(f"file://{tmp_path}")
    first, second = (ShardWriter(store, writer_id=w) for w in ("b", "a"))
    keys = [first.write(_records(3)).entry.key, second.write(_records(3)).entry.key]
    keys.append(first.write(_records(3)).entry.key)
    assert [e.key for e in ShardStore(str(tmp_path)).entries()] == keys  # creation order
    assert store.entry_names() == keys
    assert [e.key for e in store.entries(skip={keys[1]})] == [keys[0], keys[2]]


def test_append_buffers_and_flushes(tmp_path: Path) -> None:
    writer = ShardWriter(ShardStore(tmp_path), writer_id="w", rows_per_shard=20)
    assert writer.append(_records(15)) == []  # one game of 15 rows
    assert writer.append(_records(30, seed=1)) == []  # a game of 30: it may go on
    written = writer.append(_records(10, seed=2))  # a new game: the first two are whole
    assert [info.entry.rows for info in written] == [45]  # a game never straddles two shards
    last = writer.flush()
    assert last is not None and last.entry.rows == 10 and writer.flush() is None
    assert len(ShardStore(tmp_path).entries()) == 2 and ShardStore(tmp_path).quarantined() == []


def test_writer_rejects_bad_input(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    with pytest.raises(ValueError, match="writer_id 'a b'"):
        ShardWriter(store, writer_id="a b")
    with pytest.raises(ValueError, match="compression 'nope'"):
        ShardWriter(store, writer_id="w", compression="nope")
    with pytest.raises(ValueError, match="empty shard"):
        ShardWriter(store, writer_id="w").write([])
    bad = records_to_table(_records(3)).replace_schema_metadata({SCHEMA_VERSION_KEY: b"99"})
    with pytest.raises(ValueError, match="schema version 99"):
        ShardWriter(store, writer_id="w").write(bad)
    assert store.entries() == []


def test_a_shard_without_manifest_entry_is_invisible_until_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ShardStore(tmp_path)
    writer = ShardWriter(store, writer_id="w")
    kept = writer.write(_records(4)).entry

    def die(relative: str, payload: object) -> None:  # the writer dies before its manifest PUT
        raise OSError("killed")

    monkeypatch.setattr(store, "put", die)
    with pytest.raises(OSError, match="killed"):
        writer.write(_records(4, seed=1))
    monkeypatch.undo()
    assert len(_files(tmp_path, "shards")) == 2
    assert store.entries() == [kept]  # the reader never sees the orphan
    assert ShardReader(store).new_entries() == [kept]
    young = audit_store(store)  # too young: its writer may still be publishing the entry
    assert young.recommitted == () and len(young.pending) == 1
    assert "younger than" in young.lines()[0]
    report = audit_store(store, grace_s=0)  # a complete shard that passes its checks
    assert report.pending == () and report.quarantined == ()
    assert len(report.recommitted) == 1 and report.recommitted[0] != kept.shard_path
    assert len(store.entries()) == 2 and audit_store(store, grace_s=0).clean


def _flip_bytes(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 8):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


@pytest.mark.parametrize(
    ("damage", "reason"),
    [(_flip_bytes, "sha256"), (_truncate, "truncated"), (Path.unlink, "missing")],
)
def test_corrupt_shards_are_quarantined(
    tmp_path: Path, damage: object, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = ShardStore(tmp_path)
    writer = ShardWriter(store, writer_id="w")
    good, bad = writer.write(_records(5)).entry, writer.write(_records(5, seed=1)).entry
    damage(tmp_path / bad.shard_path)  # type: ignore[operator]
    with caplog.at_level(logging.WARNING), pytest.raises(CorruptShardError, match=reason):
        store.read(bad)
    assert "quarantined" in caplog.text and bad.key in caplog.text
    assert store.entries() == [good]  # gone from the manifest: never read (or trained on) again
    notes = store.quarantined()
    assert [n.name for n in notes] == [bad.key] and reason in notes[0].reason
    assert f"{bad.key}.json.manifest.json" in _files(tmp_path, "quarantine")
    assert store.read(good).num_rows == 5
    # a second reader that still holds the entry finds the shard gone; the first reason stays
    with pytest.raises(CorruptShardError, match="missing"):
        ShardStore(tmp_path).read(bad)
    assert [n.reason for n in store.quarantined()] == [notes[0].reason]


@pytest.mark.parametrize("version", [1, 2, SCHEMA_VERSION + 1])
def test_a_shard_of_another_schema_version_written_by_hand_is_quarantined(
    tmp_path: Path, version: int
) -> None:
    store = ShardStore(tmp_path)
    ShardWriter(store, writer_id="w").write(_records(3))
    table = records_to_table(_records(3, seed=1))
    # a shard as an older version wrote it: version 1 had no aux_targets, 1 and 2 no hidden_state
    table = table.drop_columns(
        {1: ["aux_targets", "hidden_state"], 2: ["hidden_state"]}.get(version, [])
    )
    table = table.replace_schema_metadata({SCHEMA_VERSION_KEY: str(version).encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as ipc:
        ipc.write_table(table)
    payload = sink.getvalue().to_pybytes()
    name = "00000000000000000001-hand-000001"
    (tmp_path / "shards" / f"{name}.arrow").write_bytes(payload)
    import hashlib

    entry = {
        "key": "09999999999999999999-hand-000002",  # newest: a reader gets to it last
        "shard_path": f"shards/{name}.arrow",
        "rows": 3,
        "bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "schema_version": SCHEMA_VERSION,  # the manifest lies; the file's metadata does not
        "encoder_versions": [1],
        "champion_versions": [0],
        "games": ["synthetic"],
        "writer_id": "hand",
        "node_id": "here",
        "created_unix": 0.0,
    }
    (tmp_path / "manifest" / f"{entry['key']}.json").write_text(json.dumps(entry))
    reader = ShardReader(store)
    tables = reader.read_new()
    assert [t.num_rows for _, t in tables] == [3] and reader.quarantined == 1
    assert reader.position.rows_seen == 3 and len(reader.position.consumed) == 2
    assert reader.position.consumed[-1] == entry["key"]  # consumed, though quarantined
    assert f"schema version {version} (" in store.quarantined()[0].reason
    assert reader.read_new() == [] and reader.quarantined == 1


def test_an_unreadable_manifest_entry_is_quarantined(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    good = ShardWriter(store, writer_id="w").write(_records(3)).entry
    (tmp_path / "manifest" / "00000000000000000005-x-000001.json").write_text("{not json")
    assert store.entries() == [good]
    assert store.bad_manifests == 1
    assert "unreadable manifest" in store.quarantined()[0].reason


def test_duckdb_and_polars_read_the_shards_as_they_are(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    writer = ShardWriter(store, writer_id="w")
    records = _records(30, num_players=3) + _records(30, seed=2, num_players=3)
    writer.write(records[:30])
    writer.write(records[30:])
    files = [store.shard_file(e) for e in store.entries()]
    shards = ds.dataset(files, format="ipc")  # noqa: F841 - DuckDB finds it by its name
    query = duckdb.sql(
        "SELECT player, count(*) AS n, avg(weight) AS w, avg(len(legal_actions)) AS l "
        "FROM shards GROUP BY player ORDER BY player"
    )
    assert query is not None
    rows = query.fetchall()
    assert [r[0] for r in rows] == [0, 1, 2]
    for player, n, w, l in rows:
        mine = [r for r in records if r.player == player]
        assert n == len(mine)
        assert w == pytest.approx(np.mean([r.weight for r in mine]), rel=1e-5)
        assert l == pytest.approx(np.mean([r.legal_actions.size for r in mine]))
    frame = pl.read_ipc(files[0])
    first_seat = frame.group_by("player").agg(pl.col("returns").list.get(0).mean()).sort("player")
    for player, mean in first_seat.iter_rows():
        expected = np.mean([r.returns[0] for r in records[:30] if r.player == player])
        assert mean == pytest.approx(expected, rel=1e-5)
