"""The columnar path from an Arrow table of records to padded numpy arrays for the learner.

:func:`table_to_batch` reads each list column through its flat value buffer and offsets and
scatters it into a zero-padded matrix (no Python loop over rows), so sampling a batch from the
replay window (:mod:`.replay`) and handing it to the learner (:mod:`omega_cluster.train`) costs a
``take`` plus a few numpy operations. The learner converts the arrays to tensors; nothing here
imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from omega_cluster.data._columns import list_parts, pad_rows
from omega_cluster.data.schema import SchemaError, validate_table

__all__ = ["TrainingBatch", "table_to_batch"]


@dataclass(frozen=True, eq=False)
class TrainingBatch:
    """B decision records as padded arrays (``Lmax``/``Nmax``: the largest ``L``/``N`` in it)."""

    observations: np.ndarray  # float32[B, D]: encoded observations (shorter rows zero-padded)
    legal_actions: np.ndarray  # int32[B, Lmax]: legal action ids; 0 in the padding
    legal_mask: np.ndarray  # bool[B, Lmax]: True at a real legal action
    action_features: np.ndarray | None  # float32[B, Lmax, F]; zeros in padding; None: no features
    policy_targets: np.ndarray  # float32[B, Lmax]: visit distribution; zeros in padding/no target
    policy_weights: np.ndarray  # float32[B]: weight of the policy target (0 where it has none)
    actions: np.ndarray  # int32[B]: chosen action ids
    action_indices: np.ndarray  # int32[B]: position of the chosen action in legal_actions[b]
    players: np.ndarray  # int32[B]: acting seat
    num_players: np.ndarray  # int32[B]: N of each row
    seat_mask: np.ndarray  # bool[B, Nmax]: True for seats < num_players
    returns: np.ndarray  # float32[B, Nmax]: final returns per seat; zeros past num_players
    round_outcomes: np.ndarray  # float32[B, Nmax]: round outcome per seat; zeros where missing
    has_round_outcome: np.ndarray  # bool[B]: the row carries a round outcome
    root_values: np.ndarray  # float32[B, Nmax]: search root value; zeros where missing
    has_root_value: np.ndarray  # bool[B]: the row carries a root value
    weights: np.ndarray  # float32[B]: record weights
    encoder_versions: np.ndarray  # int32[B]
    champion_versions: np.ndarray  # int64[B]
    aux_targets: np.ndarray | None = None  # float32[B, Amax]: flat aux targets; zeros where missing
    has_aux_targets: np.ndarray | None = None  # bool[B]: the row carries aux targets
    # (both None when no row of the batch carries aux targets)
    hidden_state: np.ndarray | None = None  # float32[B, Hmax]: hidden state (training only);
    # zeros where missing
    has_hidden_state: np.ndarray | None = None  # bool[B]: the row carries a hidden state
    # (both None when no row of the batch carries one)

    @property
    def size(self) -> int:
        """B, the number of rows."""
        return int(self.actions.shape[0])

    def value_targets(self, *, per_round: bool = False) -> np.ndarray:
        """float32[B, Nmax]: final returns, or the round outcome where a row has one (per-round credit)."""
        if not per_round:
            return self.returns
        return np.where(self.has_round_outcome[:, None], self.round_outcomes, self.returns)


def _padded(table: pa.Table, name: str, dtype: type[np.generic]) -> tuple[np.ndarray, np.ndarray]:
    """(zero-padded dtype[B, width], lengths int64[B] with -1 for null rows) of a list column."""
    offsets, values, valid = list_parts(table.column(name))
    lengths = np.where(valid, np.diff(offsets), -1)
    width = int(lengths.max(initial=0))
    return pad_rows(offsets, values, valid, width, dtype), lengths


def _scalar(table: pa.Table, name: str, dtype: type[np.generic]) -> np.ndarray:
    return np.array(table.column(name).to_numpy(), dtype=dtype)  # a writable copy


def table_to_batch(table: pa.Table, *, validate: bool = True) -> TrainingBatch:
    """Arrow table of records → :class:`TrainingBatch` (``validate=False`` for tables already checked)."""
    if validate:
        validate_table(table)
    observations, _ = _padded(table, "observation", np.float32)
    legal, num_legal = _padded(table, "legal_actions", np.int32)
    width = legal.shape[1]
    legal_mask = np.arange(width)[None, :] < num_legal[:, None]
    actions = _scalar(table, "action", np.int32)
    hits = legal_mask & (legal == actions[:, None])
    if not hits.any(axis=1).all():
        raise SchemaError(f"row {int(np.argmin(hits.any(axis=1)))}: action is not a legal action")
    policy, policy_len = _padded(table, "policy_target", np.float32)
    policy_targets = np.zeros((table.num_rows, width), np.float32)
    policy_targets[:, : policy.shape[1]] = policy
    has_policy = policy_len >= 0
    num_players = _scalar(table, "num_players", np.int32)
    n_max = int(num_players.max(initial=0))
    per_seat = {}
    for name in ("returns", "round_outcome", "root_value"):
        padded, lengths = _padded(table, name, np.float32)
        full = np.zeros((table.num_rows, n_max), np.float32)
        full[:, : padded.shape[1]] = padded
        per_seat[name] = (full, lengths >= 0)
    return TrainingBatch(
        observations=observations,
        legal_actions=legal,
        legal_mask=legal_mask,
        action_features=_action_features(table, width),
        policy_targets=policy_targets,
        policy_weights=np.where(
            has_policy, _scalar(table, "policy_weight", np.float32), 0.0
        ).astype(np.float32),
        actions=actions,
        action_indices=np.argmax(hits, axis=1).astype(np.int32),
        players=_scalar(table, "player", np.int32),
        num_players=num_players,
        seat_mask=np.arange(n_max)[None, :] < num_players[:, None],
        returns=per_seat["returns"][0],
        round_outcomes=per_seat["round_outcome"][0],
        has_round_outcome=per_seat["round_outcome"][1],
        root_values=per_seat["root_value"][0],
        has_root_value=per_seat["root_value"][1],
        weights=_scalar(table, "weight", np.float32),
        encoder_versions=_scalar(table, "encoder_version", np.int32),
        champion_versions=_scalar(table, "champion_version", np.int64),
        **_optional_flat(table, "aux_targets", "has_aux_targets"),
        **_optional_flat(table, "hidden_state", "has_hidden_state"),
    )


def _optional_flat(table: pa.Table, name: str, mask: str) -> dict[str, np.ndarray | None]:
    """An optional flat float column (``aux_targets``, ``hidden_state``) padded to
    float32[B, width] with its presence mask under ``mask``; nothing when no row has it."""
    if name not in table.schema.names:  # an unvalidated table of an older layout
        return {}
    padded, lengths = _padded(table, name, np.float32)
    present = lengths > 0
    if not present.any():
        return {}
    return {name: padded, mask: present}


def _action_features(table: pa.Table, width: int) -> np.ndarray | None:
    """float32[B, Lmax, F] (a row's L*F flat values are the first L rows of its [Lmax, F] block)."""
    offsets, values, valid = list_parts(table.column("action_features"))
    if not valid.any():
        return None
    if not valid.all():
        raise SchemaError(
            f"{int((~valid).sum())} of {valid.size} rows have no action_features while others do; "
            "train on one encoder version at a time"
        )
    dims = np.unique(_scalar(table, "action_feature_dim", np.int64))
    if dims.size != 1:
        raise SchemaError(f"rows have different action_feature_dim {dims.tolist()}; expected one F")
    dim = int(dims[0])
    flat = pad_rows(offsets, values, valid, width * dim, np.float32)
    return flat.reshape(-1, width, dim)
