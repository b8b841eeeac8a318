"""The decision record and its versioned Arrow schema.

One :class:`Record` per decision of a self-play game (docs/design.md): enough to replay the
position (game, parameters, seed, history), the network input as encoded then (observation, legal
actions and their features), the training targets (visit distribution, final returns, this
decision's round outcome, auxiliary targets) and where it came from (champion and encoder
versions, actor, game id). Self-play (:mod:`omega_cluster.train`) builds records; :mod:`.shards`
writes tables of them as Arrow IPC files; :mod:`.batch` turns tables into padded numpy training
batches.

Storage choices (the Arrow schema is :data:`SCHEMA`, its version :data:`SCHEMA_VERSION` sits in the
schema metadata under ``omega_cluster.schema_version``; bump it on any change of columns or their
meaning):

* variable-length vectors are ``list<T>`` columns (``observation``, ``legal_actions``, ...);
* ``history`` is ``list<list<int32>>``: an int action is stored as ``[a]``, a joint action as
  ``[a0, a1, ...]`` (always two or more actions, :meth:`Game.replay`), so the two never collide;
* ``action_features`` (``float32[L, F]``) is stored flattened row-major as ``list<float32>`` of
  ``L * F`` values, with ``F`` in the ``action_feature_dim`` column (0 when the row has none): one
  flat buffer per column keeps the columnar path to ``[B, Lmax, F]`` a single scatter;
* the optional targets (``action_features``, ``policy_target``, ``round_outcome``, ``root_value``,
  ``aux_targets``) are nullable; every other column is not;
* ``aux_targets`` (version 2) is one flat ``float32[A]`` per row: the targets of the encoder's
  auxiliary heads (``EncoderInfo.aux_heads``, in that order) concatenated — a regression head's
  ``size`` values, a classification head's ``size`` class probabilities (one-hot for a known
  class). The record's ``encoder_version`` fixes the layout; the learner splits it by head
  (:func:`omega_cluster.train.losses.aux_target_arrays`).

* ``hidden_state`` (version 3) is one flat ``float32[H]`` per row: what the acting player could
  not see at that decision, laid out as the encoder's ``EncoderInfo.hidden`` says (Mexican Train:
  the location code of every tile relative to the player — the boneyard, or which opponent's
  hand). Training only: the learner's belief head and perfect-information critic read it; no
  player, search or observation ever does. Null where the game gives none.

Version history: 1 — the first schema; 2 — adds the nullable ``aux_targets`` column; 3 — adds
the nullable ``hidden_state`` column. A shard of an older version is refused and quarantined like
any other schema mismatch (its rows lack the column).

This is the only layer that imports pyarrow (STYLE.md, "Imports flow one way").
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from omega_cluster.data._columns import (
    list_array,
    list_parts,
    nested_int_list_array,
    nested_list_parts,
)
from omega_cluster.data._values import value_problem
from omega_cluster.errors import UserError

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "SCHEMA_VERSION_KEY",
    "HistoryEntry",
    "Record",
    "SchemaError",
    "min_row_bytes",
    "records_to_table",
    "table_to_records",
    "validate_table",
]

SCHEMA_VERSION: Final[int] = 3
"""Version of :data:`SCHEMA`; a table of another version is refused by :func:`validate_table`."""
SCHEMA_VERSION_KEY: Final[bytes] = b"omega_cluster.schema_version"

HistoryEntry = int | tuple[int, ...]  # an action, or a joint action of >= 2 simultaneous players

_INT64 = (-(2**63), 2**63 - 1)


class SchemaError(UserError, ValueError):
    """A record or table that does not fit :data:`SCHEMA` (the message names the problem)."""


@dataclass(frozen=True, eq=False)
class Record:
    """One decision of one player in a self-play game: a training row.

    Arrays are converted to their dtype on construction; shapes are checked (``L`` legal actions,
    ``N`` = ``num_players``, ``D`` observation size, ``F`` features per action).
    """

    game: str  # registry name of the game, e.g. "leduc_poker"
    game_params: str  # JSON of the resolved game parameters, sorted keys
    game_seed: int  # seed of the game: Game.replay(game_seed, history) rebuilds the position
    history: tuple[HistoryEntry, ...]  # every action before this decision (chance included)
    decision_index: int  # 0-based index of this decision among the game's recorded decisions
    player: int  # the acting player (seat), 0 <= player < num_players
    num_players: int  # N, players in the game
    champion_version: int  # version of the network (champion) that played the game
    encoder_version: int  # version of the encoder that produced observation/action_features
    observation: np.ndarray  # float32[D]: the encoded observation of the acting player
    legal_actions: np.ndarray  # int32[L]: legal action ids, ascending
    action_features: np.ndarray | None  # float32[L, F]: features per legal action, or None
    policy_target: np.ndarray | None  # float32[L]: search visit distribution; None: no search
    policy_weight: float  # float32 weight of the policy target (0: a playout-cap "fast" search)
    action: int  # the chosen action (one of legal_actions)
    returns: np.ndarray  # float32[N]: final returns of every player
    round_outcome: np.ndarray | None  # float32[N]: outcome of this decision's round, or None
    root_value: np.ndarray | None  # float32[N]: search root value per player, or None
    weight: float  # float32 record weight (e.g. down-weighting of weak-teacher records)
    actor: str  # who wrote it: actor / node id
    game_id: str  # unique id of the game
    aux_targets: np.ndarray | None = (
        None  # float32[A]: the aux heads' targets (module doc), or None
    )
    hidden_state: np.ndarray | None = None  # float32[H]: hidden state, training only (module doc)

    def __post_init__(self) -> None:
        _check_record(self)

    def params(self) -> dict[str, Any]:
        """The game parameters as a dict (``make_game(record.game, **record.params())``)."""
        params: dict[str, Any] = json.loads(self.game_params)
        return params

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name)) for f in fields(self))

    __hash__ = None  # type: ignore[assignment]  # holds numpy arrays: unhashable, like them


def _same(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if a is None or b is None:
            return False
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        return a_arr.shape == b_arr.shape and bool(np.array_equal(a_arr, b_arr, equal_nan=True))
    return a == b


def _set(record: Record, name: str, value: object) -> None:
    object.__setattr__(record, name, value)  # frozen dataclass: normalise once, in __post_init__


def _check_record(r: Record) -> None:
    for name in ("game", "game_params", "actor", "game_id"):
        if not isinstance(getattr(r, name), str):
            raise SchemaError(f"Record.{name} must be a str, got {getattr(r, name)!r}")
    if not _INT64[0] <= int(r.game_seed) <= _INT64[1]:
        raise SchemaError(f"Record.game_seed {r.game_seed} does not fit int64")
    history = tuple(_history_entry(e, i) for i, e in enumerate(r.history))
    _set(r, "history", history)
    n = int(r.num_players)
    if n < 1 or not 0 <= int(r.player) < n:
        raise SchemaError(f"Record.player {r.player} is not a seat of {n} players (0..{n - 1})")
    obs = np.asarray(r.observation, dtype=np.float32)
    if obs.ndim != 1:
        raise SchemaError(f"Record.observation must be float32[D], got shape {obs.shape}")
    legal = np.asarray(r.legal_actions, dtype=np.int32)
    if legal.ndim != 1 or legal.size == 0:
        raise SchemaError(
            f"Record.legal_actions must be non-empty int32[L], got shape {legal.shape}"
        )
    if not np.any(legal == int(r.action)):
        raise SchemaError(f"Record.action {r.action} is not in legal_actions {legal.tolist()}")
    _set(r, "observation", obs)
    _set(r, "legal_actions", legal)
    num_legal = legal.size
    if r.action_features is not None:
        feats = np.asarray(r.action_features, dtype=np.float32)
        if feats.ndim != 2 or feats.shape[0] != num_legal or feats.shape[1] == 0:
            raise SchemaError(
                f"Record.action_features must be float32[L={num_legal}, F>0], got {feats.shape}"
            )
        _set(r, "action_features", feats)
    _vector(r, "policy_target", num_legal, "L", optional=True)
    _vector(r, "returns", n, "N", optional=False)
    _vector(r, "round_outcome", n, "N", optional=True)
    _vector(r, "root_value", n, "N", optional=True)
    for name, symbol in (("aux_targets", "A"), ("hidden_state", "H")):
        value = getattr(r, name)
        if value is not None:
            arr = np.asarray(value, dtype=np.float32)
            if arr.ndim != 1 or arr.size == 0:
                raise SchemaError(f"Record.{name} must be float32[{symbol}>0], got {arr.shape}")
            _set(r, name, arr)
    for name in ("policy_weight", "weight"):
        value = float(getattr(r, name))
        if not (math.isfinite(value) and value >= 0.0):
            raise SchemaError(f"Record.{name} must be finite and >= 0, got {value}")
        _set(r, name, float(np.float32(value)))  # stored as float32: round once, here


def _history_entry(entry: object, step: int) -> HistoryEntry:
    if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
        return int(entry)
    if isinstance(entry, (tuple, list)) and len(entry) >= 2:
        return tuple(int(a) for a in entry)
    raise SchemaError(
        f"Record.history[{step}] = {entry!r}: expected an int action or a tuple of >= 2 actions"
    )


def _vector(r: Record, name: str, size: int, symbol: str, *, optional: bool) -> None:
    value = getattr(r, name)
    if value is None:
        if not optional:
            raise SchemaError(f"Record.{name} is required (float32[{symbol}={size}])")
        return
    arr = np.asarray(value, dtype=np.float32)
    if arr.shape != (size,):
        raise SchemaError(f"Record.{name} must be float32[{symbol}={size}], got shape {arr.shape}")
    _set(r, name, arr)


def _doc(name: str, typ: pa.DataType, doc: str, *, nullable: bool = False) -> pa.Field:
    return pa.field(name, typ, nullable=nullable, metadata={"doc": doc})


_F32_LIST = pa.list_(pa.float32())
_I32_LIST = pa.list_(pa.int32())

SCHEMA: Final[pa.Schema] = pa.schema(
    [
        _doc("game", pa.string(), "registry name of the game"),
        _doc("game_params", pa.string(), "JSON of the resolved parameters, sorted keys"),
        _doc("game_seed", pa.int64(), "seed of Game.replay"),
        _doc("history", pa.list_(_I32_LIST), "actions so far: [a] or a joint [a0, a1, ...]"),
        _doc("decision_index", pa.int32(), "index of the decision in its game"),
        _doc("player", pa.int32(), "acting seat"),
        _doc("num_players", pa.int32(), "N"),
        _doc("champion_version", pa.int64(), "network version that played"),
        _doc("encoder_version", pa.int32(), "encoder version of observation/features"),
        _doc("observation", _F32_LIST, "float32[D] encoded observation"),
        _doc("legal_actions", _I32_LIST, "int32[L] legal action ids, ascending"),
        _doc("action_feature_dim", pa.int32(), "F, features per action (0: none)"),
        _doc("action_features", _F32_LIST, "float32[L*F] row-major", nullable=True),
        _doc("policy_target", _F32_LIST, "float32[L] visit distribution", nullable=True),
        _doc("policy_weight", pa.float32(), "weight of the policy target"),
        _doc("action", pa.int32(), "chosen action"),
        _doc("returns", _F32_LIST, "float32[N] final returns"),
        _doc("round_outcome", _F32_LIST, "float32[N] this decision's round outcome", nullable=True),
        _doc("root_value", _F32_LIST, "float32[N] search root value", nullable=True),
        _doc(
            "aux_targets", _F32_LIST, "float32[A] aux heads' targets, concatenated", nullable=True
        ),
        _doc("hidden_state", _F32_LIST, "float32[H] hidden state, training only", nullable=True),
        _doc("weight", pa.float32(), "record weight"),
        _doc("actor", pa.string(), "writer: actor / node id"),
        _doc("game_id", pa.string(), "unique game id"),
    ],
    metadata={SCHEMA_VERSION_KEY: str(SCHEMA_VERSION).encode()},
)


def min_row_bytes(schema: pa.Schema = SCHEMA) -> int:
    """The least bytes one row of a table of ``schema`` takes in memory: its fixed-width values
    and an offset per variable-width column (a list's or a string's values come on top): the
    cost of a row that the learner's batch and replay window sizes are checked with."""
    total = 0
    for f in schema:
        t = f.type
        if pa.types.is_large_list(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
            total += 8
        elif pa.types.is_list(t) or pa.types.is_string(t) or pa.types.is_binary(t):
            total += 4
        else:
            total += max(1, t.bit_width // 8)
    return total


_OPTIONAL: Final = frozenset(
    {
        "action_features",
        "policy_target",
        "round_outcome",
        "root_value",
        "aux_targets",
        "hidden_state",
    }
)


def records_to_table(records: Sequence[Record]) -> pa.Table:
    """Records → one Arrow table of :data:`SCHEMA` (columnar build: one buffer per column)."""
    recs = list(records)
    for i, rec in enumerate(recs):
        if not isinstance(rec, Record):
            raise SchemaError(f"records[{i}] is a {type(rec).__name__}, expected a Record")

    def column(name: str) -> list[Any]:
        return [getattr(r, name) for r in recs]

    histories = [[(e,) if isinstance(e, int) else e for e in r.history] for r in recs]
    dims = [0 if r.action_features is None else r.action_features.shape[1] for r in recs]
    arrays: dict[str, pa.Array] = {
        "game": pa.array(column("game"), pa.string()),
        "game_params": pa.array(column("game_params"), pa.string()),
        "game_seed": pa.array([int(s) for s in column("game_seed")], pa.int64()),
        "history": nested_int_list_array(histories),
        "action_feature_dim": pa.array(np.asarray(dims, dtype=np.int32)),
    }
    for name in ("decision_index", "player", "num_players", "encoder_version", "action"):
        arrays[name] = pa.array(np.asarray(column(name), dtype=np.int32))
    arrays["champion_version"] = pa.array(np.asarray(column("champion_version"), dtype=np.int64))
    for name in ("policy_weight", "weight"):
        arrays[name] = pa.array(np.asarray(column(name), dtype=np.float32))
    arrays["legal_actions"] = list_array(column("legal_actions"), np.int32)
    for name in ("observation", "action_features", "policy_target", "returns"):
        arrays[name] = list_array(column(name), np.float32)
    for name in ("round_outcome", "root_value", "aux_targets", "hidden_state"):
        arrays[name] = list_array(column(name), np.float32)
    for name in ("actor", "game_id"):
        arrays[name] = pa.array(column(name), pa.string())
    return pa.Table.from_arrays([arrays[f.name] for f in SCHEMA], schema=SCHEMA)


def table_to_records(table: pa.Table) -> list[Record]:
    """An Arrow table of :data:`SCHEMA` → records (validated first; the slow, exact path)."""
    validate_table(table)
    cols = {name: table.column(name).to_pylist() for name in _SCALAR_COLUMNS}
    lists = {name: list_parts(table.column(name)) for name in _LIST_COLUMNS}
    hist_outer, hist_offsets, hist_values = nested_list_parts(table.column("history"))
    records = []
    for i in range(table.num_rows):
        entries = []
        for j in range(hist_outer[i], hist_outer[i + 1]):
            acts = hist_values[hist_offsets[j] : hist_offsets[j + 1]].tolist()
            entries.append(acts[0] if len(acts) == 1 else tuple(acts))
        row = {name: values[i] for name, values in cols.items()}
        for name, (offsets, values, valid) in lists.items():
            row[name] = values[offsets[i] : offsets[i + 1]].copy() if valid[i] else None
        dim = row.pop("action_feature_dim")
        if row["action_features"] is not None:
            row["action_features"] = row["action_features"].reshape(-1, dim)
        records.append(Record(history=tuple(entries), **row))
    return records


_LIST_COLUMNS: Final = (
    "observation",
    "legal_actions",
    "action_features",
    "policy_target",
    "returns",
    "round_outcome",
    "root_value",
    "aux_targets",
    "hidden_state",
)
_SCALAR_COLUMNS: Final = tuple(
    f.name for f in SCHEMA if f.name not in _LIST_COLUMNS and f.name != "history"
)


def schema_version_of(schema: pa.Schema) -> int | None:
    """The ``omega_cluster.schema_version`` of a schema's metadata (None if absent or garbled)."""
    raw = (schema.metadata or {}).get(SCHEMA_VERSION_KEY)
    try:
        return None if raw is None else int(raw)
    except ValueError:
        return None


def validate_table(table: pa.Table) -> None:
    """Raise :class:`SchemaError` naming the first problem: schema, nulls, lengths or values."""
    version = schema_version_of(table.schema)
    if version != SCHEMA_VERSION:
        raise SchemaError(
            f"table has schema version {version} (metadata key {SCHEMA_VERSION_KEY.decode()!r}); "
            f"this code reads version {SCHEMA_VERSION}"
        )
    names = set(table.schema.names)
    expected = {f.name for f in SCHEMA}
    if names != expected:
        raise SchemaError(
            f"table columns do not match schema version {SCHEMA_VERSION}: "
            f"missing {sorted(expected - names)}, unexpected {sorted(names - expected)}"
        )
    for f in SCHEMA:
        actual = table.schema.field(f.name).type
        if not actual.equals(f.type):
            raise SchemaError(f"column {f.name!r} has type {actual}, expected {f.type}")
        col = table.column(f.name)
        if f.name not in _OPTIONAL and col.null_count:
            raise SchemaError(f"column {f.name!r} has {col.null_count} null(s); it is required")
        if pa.types.is_list(f.type) and pc.list_flatten(col).null_count:
            raise SchemaError(f"column {f.name!r} holds null values inside its lists")
    _validate_lengths(table)
    if (problem := value_problem(table)) is not None:  # finite, in range, distributions
        raise SchemaError(problem)


def _lengths(table: pa.Table, name: str) -> np.ndarray:
    lengths = pc.list_value_length(table.column(name))
    return np.asarray(lengths.fill_null(-1).to_numpy(), dtype=np.int64)


def _validate_lengths(table: pa.Table) -> None:
    num_legal = _lengths(table, "legal_actions")
    players = table.column("num_players").to_numpy().astype(np.int64)
    seats = table.column("player").to_numpy()
    dims = table.column("action_feature_dim").to_numpy().astype(np.int64)
    feats = _lengths(table, "action_features")  # -1: null
    entry_sizes = pc.list_value_length(pc.list_flatten(table.column("history"))).to_numpy()
    if entry_sizes.size and entry_sizes.min() < 1:
        raise SchemaError("column 'history' holds an empty action entry")
    checks: list[tuple[str, np.ndarray, str]] = [
        ("legal_actions", num_legal < 1, "is empty"),
        ("num_players", players < 1, "is < 1"),
        ("player", (seats < 0) | (seats >= players), "is not in 0..num_players-1"),
        ("action_features", (feats >= 0) & ((dims <= 0) | (feats != num_legal * dims)), "!= L*F"),
        ("action_feature_dim", (feats < 0) & (dims != 0), "is not 0 in a row without features"),
        ("aux_targets", _lengths(table, "aux_targets") == 0, "is an empty list"),
        ("hidden_state", _lengths(table, "hidden_state") == 0, "is an empty list"),
    ]
    for name, size, symbol in (
        ("policy_target", num_legal, "L"),
        ("returns", players, "num_players"),
        ("round_outcome", players, "num_players"),
        ("root_value", players, "num_players"),
    ):
        length = _lengths(table, name)
        checks.append((name, (length >= 0) & (length != size), f"length != {symbol}"))
    offsets, legal, valid = list_parts(table.column("legal_actions"))
    row_of = np.repeat(np.arange(valid.size), np.diff(offsets))
    actions = table.column("action").to_numpy()
    hits = np.bincount(row_of, legal[offsets[0] : offsets[-1]] == actions[row_of], valid.size)
    checks.append(("action", hits == 0, "is not in legal_actions"))
    for name, bad, what in checks:
        rows = np.flatnonzero(bad)
        if rows.size:
            raise SchemaError(f"column {name!r} {what} in {rows.size} row(s), first row {rows[0]}")
