"""Values a learner cannot train on: writers refuse them, readers quarantine the shard.

A shard whose bytes and schema are fine can still hold NaN returns, an infinite weight or a
policy target that is not a distribution (an older writer, a bug, a hand-made file). Such a shard
used to pass the checksum and schema checks and crash the learner with a non-finite loss on every
resume; now :func:`validate_table` checks values, so the writer refuses the table and a reader
quarantines the shard with a reason that names the column and the first bad row.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from train_helpers import leduc_learner, leduc_records, leduc_store

from omega_cluster.data import (
    CorruptShardError,
    Record,
    SchemaError,
    ShardStore,
    ShardWriter,
    records_to_table,
    validate_table,
)
from omega_cluster.data.manifest import KeyClock
from omega_cluster.data.shards import new_entry
from omega_cluster.data.synthetic import synthetic_records

BAD_ROW = 3


def _records(count: int = 8) -> list[Record]:
    rng = np.random.default_rng(0)
    return synthetic_records(count, rng, observation_size=6, feature_size=2, num_players=2)


def _set_row(table: pa.Table, name: str, row: int, value: object) -> pa.Table:
    values = table.column(name).to_pylist()
    values[row] = value
    index = table.schema.get_field_index(name)
    return table.set_column(
        index, table.schema.field(name), pa.array(values, table.schema.field(name).type)
    )


def _nan_returns(table: pa.Table) -> pa.Table:
    return _set_row(table, "returns", BAD_ROW, [float("nan"), 0.0])


def _inf_weight(table: pa.Table) -> pa.Table:
    return _set_row(table, "weight", BAD_ROW, float("inf"))


def _half_policy(table: pa.Table) -> pa.Table:
    row = next(
        i for i, w in enumerate(table.column("policy_weight").to_pylist()) if w > 0 and i >= BAD_ROW
    )
    target = table.column("policy_target")[row].as_py()
    return _set_row(table, "policy_target", row, [0.5 * p for p in target])


def _negative_weight(table: pa.Table) -> pa.Table:
    return _set_row(table, "policy_weight", BAD_ROW, -1.0)


def _negative_player(table: pa.Table) -> pa.Table:
    return _set_row(table, "player", BAD_ROW, -1)


def _inf_observation(table: pa.Table) -> pa.Table:
    return _set_row(table, "observation", BAD_ROW, [float("-inf")] * 6)


def _nan_hidden_state(table: pa.Table) -> pa.Table:
    return _set_row(table, "hidden_state", BAD_ROW, [1.0, float("nan")])


CASES: list[tuple[Callable[[pa.Table], pa.Table], str]] = [
    (_nan_returns, "column 'returns' is not finite in 1 row(s), first row 3"),
    (_inf_weight, "column 'weight' is not finite in 1 row(s), first row 3"),
    (_half_policy, "column 'policy_target' does not sum to 1"),
    (_negative_weight, "column 'policy_weight' is < 0 in 1 row(s), first row 3"),
    (_negative_player, "column 'player' is not in 0..num_players-1 in 1 row(s), first row 3"),
    (_inf_observation, "column 'observation' is not finite in 1 row(s), first row 3"),
    (_nan_hidden_state, "column 'hidden_state' is not finite in 1 row(s), first row 3"),
]


def write_unchecked(store: ShardStore, table: pa.Table, writer_id: str = "old") -> str:
    """A shard as a writer without value checks wrote it (file, then manifest entry): its key."""
    clock = KeyClock(writer_id)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as ipc:
        ipc.write_table(table)
    payload = sink.getvalue()
    shard_path = f"shards/{clock.next_key()}.arrow"
    with store.fs.open_output_stream(store.path(shard_path)) as out:
        out.write(payload)
    entry = new_entry(table, key=clock.next_key(), shard_path=shard_path, size=payload.size,
                      sha256=hashlib.sha256(payload).hexdigest(), writer_id=writer_id,
                      node_id="here")  # fmt: skip
    store.commit(entry)
    return entry.key


@pytest.mark.parametrize(("damage", "reason"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_bad_values_are_refused_by_writers_and_quarantined_by_readers(
    tmp_path: Path, damage: Callable[[pa.Table], pa.Table], reason: str
) -> None:
    table = damage(records_to_table(_records()))
    with pytest.raises(SchemaError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        validate_table(table)
    store = ShardStore(tmp_path)
    with pytest.raises(SchemaError, match="column '"):
        ShardWriter(store, writer_id="w").write(table)
    assert store.entries() == []  # the writer wrote nothing visible
    key = write_unchecked(store, table)
    (entry,) = store.entries()
    with pytest.raises(CorruptShardError, match=reason.split(" in ")[0]):
        store.read(entry)
    assert store.entries() == []
    (note,) = store.quarantined()
    assert note.name == key and reason.split(" in ")[0] in note.reason


def test_targets_that_need_no_check_pass(tmp_path: Path) -> None:
    """A fast search's target (policy_weight 0) need not sum to 1; a missing one is null."""
    records = [
        dataclasses.replace(
            r, policy_target=None if i % 2 else 0.3 * r.policy_target, policy_weight=0.0
        )
        for i, r in enumerate(_records())
        if r.policy_target is not None
    ]
    table = records_to_table(records)
    validate_table(table)
    entry = ShardWriter(ShardStore(tmp_path), writer_id="w").write(table).entry
    assert ShardStore(tmp_path).read(entry).num_rows == len(records)


def test_a_learner_over_a_store_with_a_nan_shard_trains(tmp_path: Path) -> None:
    """The NaN shard used to raise NonFiniteLossError on every resume; now it is quarantined."""
    store = leduc_store(tmp_path, shards=1)
    good_rows = store.entries()[0].rows
    poisoned = records_to_table(
        [
            dataclasses.replace(
                r, returns=np.full_like(r.returns, np.nan), game_id=f"nan-{r.game_id}"
            )
            for r in leduc_records()
        ]
    )
    write_unchecked(store, poisoned)
    learner = leduc_learner()
    window = learner.window(store)
    stats = learner.train_steps(window, 10)
    assert np.isfinite(stats.loss) and learner.step == 10
    assert window.quarantined == 1 and window.rows == good_rows
    (note,) = store.quarantined()
    assert "column 'returns' is not finite" in note.reason
