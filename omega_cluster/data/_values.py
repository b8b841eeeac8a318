"""The value checks of a shard's table: what a learner can train on (:func:`value_problem`).

A table can fit the schema (types, nulls, lengths) and still hold values that turn a loss into
NaN: a NaN return, an infinite weight, a visit distribution that does not sum to 1. These checks
run, vectorised, wherever :func:`.schema.validate_table` does: when a writer writes a shard and
when a reader reads one (a failing shard is quarantined).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["POLICY_SUM_TOLERANCE", "value_problem"]

_FLOAT_LISTS: Final = (
    "observation",
    "action_features",
    "policy_target",
    "returns",
    "round_outcome",
    "root_value",
    "aux_targets",
    "hidden_state",
)
POLICY_SUM_TOLERANCE: Final = 1e-3  # |sum(policy_target) - 1| allowed where policy_weight > 0


class _Bad(Exception):
    """The first problem found (internal: becomes :func:`value_problem`'s message)."""


def _first_bad(what: str, name: str, bad: np.ndarray, rows: np.ndarray | None = None) -> None:
    """Stop at ``name``'s bad rows if any (``rows``: the row of each entry of ``bad``)."""
    hits = np.flatnonzero(bad)
    if hits.size:
        where = hits if rows is None else np.unique(rows[hits])
        raise _Bad(f"column {name!r} {what} in {where.size} row(s), first row {where[0]}")


def value_problem(table: pa.Table) -> str | None:
    """The first value a learner cannot train on, as a message naming column and row; None if
    every float is finite, weights and policy targets are >= 0 and each policy target (where
    the row has one and ``policy_weight`` > 0) sums to 1. The table must fit the schema.

    Vectorised (one ``isfinite`` pass per column); only a failing column is searched for its
    rows.
    """
    try:
        _check(table)
    except _Bad as bad:
        return str(bad)
    return None


def _check(table: pa.Table) -> None:
    for name in ("weight", "policy_weight"):
        values = table.column(name).to_numpy()
        if not np.isfinite(values).all():
            _first_bad("is not finite", name, ~np.isfinite(values))
        _first_bad("is < 0", name, values < 0)
    for name in _FLOAT_LISTS:
        column = table.column(name).combine_chunks()
        values = pc.list_flatten(column).to_numpy()
        if not np.isfinite(values).all():
            parents = pc.list_parent_indices(column).to_numpy()
            _first_bad("is not finite", name, ~np.isfinite(values), parents)
    column = table.column("policy_target").combine_chunks()
    targets = pc.list_flatten(column).to_numpy()
    if targets.size and targets.min() < 0:
        parents = pc.list_parent_indices(column).to_numpy()
        _first_bad("is < 0", "policy_target", targets < 0, parents)
    lengths = pc.list_value_length(column).fill_null(0).to_numpy()
    ends = np.cumsum(np.concatenate(([0.0], targets.astype(np.float64))))  # over non-null rows
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    row_sums = ends[offsets[1:]] - ends[offsets[:-1]]
    checked = column.is_valid().to_numpy(zero_copy_only=False)
    checked &= table.column("policy_weight").to_numpy() > 0
    off = checked & (np.abs(row_sums - 1.0) > POLICY_SUM_TOLERANCE)
    _first_bad("does not sum to 1 (policy_weight > 0)", "policy_target", off)
