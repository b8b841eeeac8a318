"""Records ↔ Arrow tables ↔ training batches: round trips, validation errors, the columnar path."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from omega_cluster.data import (
    SCHEMA,
    SCHEMA_VERSION,
    Record,
    SchemaError,
    records_to_table,
    table_to_batch,
    table_to_records,
    validate_table,
)
from omega_cluster.data._columns import list_array, list_parts, pad_rows
from omega_cluster.data.schema import SCHEMA_VERSION_KEY, HistoryEntry
from omega_cluster.data.synthetic import synthetic_records
from omega_cluster.games.api import Game
from omega_cluster.games.registry import make_game


def _records(count: int = 40, **kwargs: object) -> list[Record]:
    return synthetic_records(count, np.random.default_rng(7), observation_size=12, **kwargs)  # type: ignore[arg-type]


def test_round_trip_records_table_records() -> None:
    records = _records(60, aux_size=5, hidden_size=7)
    # the synthetic rows exercise every optional column both present and absent
    assert any(r.round_outcome is None for r in records)
    assert any(r.root_value is not None for r in records)
    assert any(r.aux_targets is None for r in records)
    assert any(r.aux_targets is not None for r in records)
    assert any(r.hidden_state is None for r in records)
    assert any(r.hidden_state is not None for r in records)
    table = records_to_table(records)
    assert table.schema.equals(SCHEMA, check_metadata=True)
    assert table.num_rows == 60
    back = table_to_records(table)
    assert back == records
    assert back[4].history[4] == records[4].history[4] and isinstance(back[4].history[4], tuple)
    assert isinstance(back[0].history[0], int)


def test_round_trip_without_features_or_policy() -> None:
    records = [replace(r, action_features=None, policy_target=None) for r in _records(10)]
    back = table_to_records(records_to_table(records))
    assert back == records
    assert all(r.action_features is None and r.policy_target is None for r in back)


def test_round_trip_of_sliced_and_concatenated_tables() -> None:
    records = _records(30)
    table = pa.concat_tables([records_to_table(records[:10]), records_to_table(records[10:])])
    assert table_to_records(table.slice(5, 20)) == records[5:25]


def test_real_goofspiel_histories_replay_after_the_round_trip() -> None:
    """Joint actions (tuples) and single actions come back as they went in: Game.replay works."""
    game = make_game("goofspiel", players=3, num_cards=5)
    rng = random.Random(3)
    records = []
    for seed in range(3):
        state = game.new_initial_state(seed)
        while state.current_players:
            acting = state.current_players
            if len(acting) > 1:
                joint = tuple(rng.choice(state.legal_actions(p)) for p in acting)
                legal = np.asarray(state.legal_actions(acting[0]), np.int32)
                records.append(_game_record(game, seed, state.history, acting[0], legal, joint[0]))
                state.apply_joint_action(joint)
            else:
                state.apply_action(rng.choice(state.legal_actions()))
    back = table_to_records(records_to_table(records))
    assert back == records
    assert any(isinstance(e, tuple) for r in back for e in r.history)
    for rec in back:
        replayed = game.replay(rec.game_seed, rec.history)
        assert replayed.legal_actions(rec.player) == rec.legal_actions.tolist()


def _game_record(
    game: Game, seed: int, history: list[HistoryEntry], player: int, legal: np.ndarray, action: int
) -> Record:
    n = game.spec.num_players
    return Record(
        game="goofspiel",
        game_params=json.dumps(dict(game.params), sort_keys=True),
        game_seed=seed,
        history=tuple(history),
        decision_index=len(history),
        player=player,
        num_players=n,
        champion_version=0,
        encoder_version=1,
        observation=np.zeros(4, np.float32),
        legal_actions=legal,
        action_features=None,
        policy_target=np.full(legal.size, 1.0 / legal.size, np.float32),
        policy_weight=1.0,
        action=action,
        returns=np.zeros(n, np.float32),
        round_outcome=None,
        root_value=None,
        weight=1.0,
        actor="test",
        game_id=f"g{seed}",
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"history": ((1,),)}, "tuple of >= 2"),
        ({"history": ("a",)}, "history"),
        ({"action": 999}, "not in legal_actions"),
        ({"legal_actions": np.zeros(0, np.int32)}, "non-empty"),
        ({"observation": np.zeros((2, 2))}, "float32[D]"),
        ({"policy_target": np.zeros(99)}, "policy_target"),
        ({"returns": np.zeros(5)}, "returns"),
        ({"round_outcome": np.zeros(1)}, "round_outcome"),
        ({"action_features": np.zeros((1, 3))}, "action_features"),
        ({"player": 2}, "not a seat"),
        ({"weight": -1.0}, "weight"),
        ({"policy_weight": float("nan")}, "policy_weight"),
        ({"game_seed": 2**64}, "int64"),
        ({"actor": 3}, "actor"),
        ({"aux_targets": np.zeros((2, 2))}, "aux_targets"),
        ({"aux_targets": np.zeros(0)}, "aux_targets"),
        ({"hidden_state": np.zeros((2, 2))}, "hidden_state must be float32[H>0]"),
        ({"hidden_state": np.zeros(0)}, "hidden_state must be float32[H>0]"),
    ],
)
def test_record_rejects_bad_fields(change: dict[str, object], message: str) -> None:
    record = _records(2, num_players=2)[0]
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        replace(record, **change)  # type: ignore[arg-type]


def test_records_to_table_rejects_non_records() -> None:
    with pytest.raises(SchemaError, match=r"records\[1\] is a dict"):
        records_to_table([_records(1)[0], {}])  # type: ignore[list-item]


def _with_column(table: pa.Table, name: str, array: pa.Array) -> pa.Table:
    field = table.schema.field(name).with_type(array.type)
    return table.set_column(table.schema.get_field_index(name), field, array)


def test_validate_names_wrong_version_missing_metadata_and_columns() -> None:
    table = records_to_table(_records(5))
    validate_table(table)
    wrong = table.replace_schema_metadata({SCHEMA_VERSION_KEY: str(SCHEMA_VERSION + 1).encode()})
    with pytest.raises(SchemaError, match=f"schema version {SCHEMA_VERSION + 1}.*reads version"):
        validate_table(wrong)
    with pytest.raises(SchemaError, match="schema version None"):
        validate_table(table.replace_schema_metadata(None))
    with pytest.raises(SchemaError, match=r"missing \['weight'\]"):
        validate_table(table.drop_columns(["weight"]))
    extra = table.append_column("extra", pa.array(np.zeros(5)))
    with pytest.raises(SchemaError, match=r"unexpected \['extra'\]"):
        validate_table(extra)


def test_validate_names_wrong_types_nulls_and_ragged_lengths() -> None:
    records = _records(6, num_players=3)
    table = records_to_table(records)
    with pytest.raises(SchemaError, match="column 'weight' has type double"):
        validate_table(_with_column(table, "weight", pa.array(np.ones(6))))
    with pytest.raises(SchemaError, match="'game_id' has 1 null"):
        validate_table(_with_column(table, "game_id", pa.array(["a"] * 5 + [None], pa.string())))
    short = [np.zeros(2, np.float32)] * 6  # returns must have num_players = 3 values
    with pytest.raises(SchemaError, match="'returns' length != num_players in 6 row"):
        validate_table(_with_column(table, "returns", list_array(short, np.float32)))
    policy = [np.zeros(r.legal_actions.size + 1, np.float32) for r in records]
    with pytest.raises(SchemaError, match="'policy_target' length != L"):
        validate_table(_with_column(table, "policy_target", list_array(policy, np.float32)))
    dims = pa.array(np.full(6, 7, np.int32))
    with pytest.raises(SchemaError, match="'action_features' != L\\*F"):
        validate_table(_with_column(table, "action_feature_dim", dims))
    actions = pa.array(np.full(6, 10_000, np.int32))
    with pytest.raises(SchemaError, match="'action' is not in legal_actions in 6 row"):
        validate_table(_with_column(table, "action", actions))


def test_table_to_batch_pads_and_aligns_every_column() -> None:
    records = _records(25, num_players=3, num_legal=7, feature_size=5)
    batch = table_to_batch(records_to_table(records))
    lmax = max(r.legal_actions.size for r in records)
    assert batch.size == 25
    assert batch.observations.shape == (25, 12) and batch.observations.dtype == np.float32
    assert batch.legal_actions.shape == (25, lmax)
    assert batch.action_features is not None and batch.action_features.shape == (25, lmax, 5)
    for i, rec in enumerate(records):
        size = rec.legal_actions.size
        assert batch.legal_mask[i].sum() == size
        np.testing.assert_array_equal(batch.legal_actions[i, :size], rec.legal_actions)
        np.testing.assert_array_equal(batch.action_features[i, :size], rec.action_features)
        assert (
            not batch.action_features[i, size:].any() and not batch.policy_targets[i, size:].any()
        )
        assert batch.legal_actions[i, batch.action_indices[i]] == rec.action
        np.testing.assert_array_equal(batch.returns[i], rec.returns)
        assert batch.has_round_outcome[i] == (rec.round_outcome is not None)
        assert batch.has_root_value[i] == (rec.root_value is not None)
        assert batch.policy_weights[i] == np.float32(rec.policy_weight)
        assert batch.weights[i] == np.float32(rec.weight)
    per_round = batch.value_targets(per_round=True)
    for i, rec in enumerate(records):
        expected = rec.returns if rec.round_outcome is None else rec.round_outcome
        np.testing.assert_array_equal(per_round[i], expected)
    assert batch.value_targets() is batch.returns


def test_table_to_batch_carries_the_flat_aux_targets_and_their_mask() -> None:
    records = _records(9, aux_size=4)
    batch = table_to_batch(records_to_table(records))
    assert batch.aux_targets is not None and batch.has_aux_targets is not None
    assert batch.aux_targets.shape == (9, 4) and batch.aux_targets.dtype == np.float32
    for i, rec in enumerate(records):
        assert batch.has_aux_targets[i] == (rec.aux_targets is not None)
        expected = np.zeros(4, np.float32) if rec.aux_targets is None else rec.aux_targets
        np.testing.assert_array_equal(batch.aux_targets[i], expected)
    plain = table_to_batch(records_to_table(_records(3)))
    assert plain.aux_targets is None and plain.has_aux_targets is None


def test_table_to_batch_carries_the_hidden_state_and_its_mask() -> None:
    records = _records(9, hidden_size=5)
    batch = table_to_batch(records_to_table(records))
    assert batch.hidden_state is not None and batch.has_hidden_state is not None
    assert batch.hidden_state.shape == (9, 5) and batch.hidden_state.dtype == np.float32
    assert batch.has_hidden_state.tolist() == [i % 3 == 0 for i in range(9)]
    for i, rec in enumerate(records):
        expected = np.zeros(5, np.float32) if rec.hidden_state is None else rec.hidden_state
        np.testing.assert_array_equal(batch.hidden_state[i], expected)
    assert batch.num_players.dtype == np.int32 and batch.num_players.tolist() == [2] * 9
    plain = table_to_batch(records_to_table(_records(3)))
    assert plain.hidden_state is None and plain.has_hidden_state is None


def test_validate_refuses_an_empty_or_non_finite_hidden_state() -> None:
    table = records_to_table(_records(3, hidden_size=2))
    empty = pa.array([[1.0], None, []], pa.list_(pa.float32()))
    with pytest.raises(SchemaError, match="'hidden_state' is an empty list in 1 row"):
        validate_table(_with_column(table, "hidden_state", empty))
    nan = pa.array([[1.0], None, [0.0, float("nan")]], pa.list_(pa.float32()))
    with pytest.raises(SchemaError, match="'hidden_state' is not finite in 1 row.*first row 2"):
        validate_table(_with_column(table, "hidden_state", nan))


def test_validate_refuses_an_empty_aux_target_list() -> None:
    table = records_to_table(_records(3, aux_size=2))
    empty = pa.array([[], None, []], pa.list_(pa.float32()))
    with pytest.raises(SchemaError, match="'aux_targets' is an empty list in 2 row"):
        validate_table(_with_column(table, "aux_targets", empty))


def test_table_to_batch_pads_seats_of_mixed_player_counts_and_drops_missing_policies() -> None:
    two = _records(4, num_players=2, feature_size=None)
    four = [replace(r, policy_target=None) for r in _records(4, num_players=4, feature_size=None)]
    batch = table_to_batch(records_to_table(two + four))
    assert batch.action_features is None
    assert batch.returns.shape == (8, 4)
    assert batch.seat_mask.sum(axis=1).tolist() == [2] * 4 + [4] * 4
    assert not batch.returns[:4, 2:].any()
    assert batch.policy_weights[4:].tolist() == [0.0] * 4 and not batch.policy_targets[4:].any()


def test_table_to_batch_refuses_mixed_feature_rows() -> None:
    records = _records(4)
    mixed = [*records[:2], *(replace(r, action_features=None) for r in records[2:])]
    with pytest.raises(SchemaError, match="2 of 4 rows have no action_features"):
        table_to_batch(records_to_table(mixed))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.integers(-50, 50), max_size=6)), max_size=8))
def test_pad_rows_matches_a_python_loop(rows: list[list[int] | None]) -> None:
    arrays = [None if r is None else np.asarray(r, np.int32) for r in rows]
    column = list_array(arrays, np.int32)
    offsets, values, valid = list_parts(column.slice(1) if len(rows) > 1 else column)
    source = arrays[1:] if len(rows) > 1 else arrays
    width = max([0, *(a.size for a in source if a is not None)])
    padded = pad_rows(offsets, values, valid, width, np.int32)
    expected = np.zeros((len(source), width), np.int32)
    for i, a in enumerate(source):
        if a is not None:
            expected[i, : a.size] = a
    np.testing.assert_array_equal(padded, expected)
    assert valid.tolist() == [a is not None for a in source]


def test_pad_rows_skips_null_rows_that_still_span_values() -> None:
    """Arrow allows a null list entry to span values; they must not leak into the padding."""
    values = pa.array(np.arange(6, dtype=np.float32))
    column = pa.ListArray.from_arrays(
        pa.array([0, 2, 4, 6], pa.int32()), values, mask=pa.array([False, True, False])
    )
    offsets, flat, valid = list_parts(column)
    padded = pad_rows(offsets, flat, valid, 2, np.float32)
    np.testing.assert_array_equal(padded, [[0, 1], [0, 0], [4, 5]])
    assert padded.flags.writeable


def test_batch_arrays_are_writable_copies() -> None:
    batch = table_to_batch(records_to_table(_records(8, num_legal=4, vary_legal=False)))
    for name in ("observations", "weights", "actions", "players", "action_features"):
        assert getattr(batch, name).flags.writeable, name
