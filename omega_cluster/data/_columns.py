"""Columnar helpers: numpy arrays ↔ Arrow list columns without a Python loop per value.

Arrow stores a ``list<T>`` column as one flat value buffer plus ``n + 1`` offsets; building and
reading through those two buffers is what keeps :func:`.schema.records_to_table` and
:func:`.batch.table_to_batch` fast (one ``np.concatenate`` or one scatter per column).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "count_distinct",
    "list_array",
    "list_parts",
    "nested_int_list_array",
    "nested_list_parts",
    "pad_rows",
]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        raise ValueError(
            f"{offsets[-1]} values do not fit one Arrow list column; write smaller shards"
        )
    return offsets.astype(np.int32)


def list_array(arrays: Sequence[np.ndarray | None], dtype: type[np.generic]) -> pa.ListArray:
    """``list<dtype>`` column from per-row arrays (flattened row-major); None rows are null."""
    n = len(arrays)
    lengths = np.fromiter((0 if a is None else a.size for a in arrays), np.int64, count=n)
    present = [np.asarray(a, dtype=dtype).ravel() for a in arrays if a is not None]
    values = np.concatenate(present) if present else np.empty(0, dtype=dtype)
    nulls = np.fromiter((a is None for a in arrays), bool, count=n)
    mask = pa.array(nulls) if nulls.any() else None
    return pa.ListArray.from_arrays(pa.array(_offsets(lengths)), pa.array(values), mask=mask)


def nested_int_list_array(rows: Sequence[Sequence[Sequence[int]]]) -> pa.ListArray:
    """``list<list<int32>>`` column from rows of entries of ints (the action history)."""
    outer = np.fromiter((len(row) for row in rows), np.int64, count=len(rows))
    entries = [entry for row in rows for entry in row]
    inner = np.fromiter((len(e) for e in entries), np.int64, count=len(entries))
    values = np.fromiter((a for e in entries for a in e), np.int32, count=int(inner.sum()))
    inner_array = pa.ListArray.from_arrays(pa.array(_offsets(inner)), pa.array(values))
    return pa.ListArray.from_arrays(pa.array(_offsets(outer)), inner_array)


def _combined(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def list_parts(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(offsets int64[n+1], values, valid bool[n])`` of a ``list<primitive>`` column.

    Row ``i`` is ``values[offsets[i]:offsets[i+1]]`` when ``valid[i]`` (offsets index ``values``
    directly, also for sliced arrays).
    """
    arr = _combined(column)
    offsets = np.asarray(arr.offsets.to_numpy(), dtype=np.int64)
    values = arr.values.to_numpy(zero_copy_only=False)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    return offsets, values, valid


def nested_list_parts(
    column: pa.ChunkedArray | pa.Array,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(outer offsets, inner offsets, values)`` of a ``list<list<primitive>>`` column."""
    arr = _combined(column)
    outer = np.asarray(arr.offsets.to_numpy(), dtype=np.int64)
    inner_offsets, values, _ = list_parts(arr.values)
    return outer, inner_offsets, values


def pad_rows(
    offsets: np.ndarray, values: np.ndarray, valid: np.ndarray, width: int, dtype: type[np.generic]
) -> np.ndarray:
    """Scatter ragged rows into a zero-padded ``dtype[n, width]`` matrix (null rows stay zero).

    Returns a fresh, writable array (never a view of Arrow's read-only buffers).
    """
    n = valid.size
    spans = np.diff(offsets)
    lengths = np.where(valid, spans, 0)
    if n and width and valid.all() and (lengths == width).all():  # equal rows: one copy
        return values[offsets[0] : offsets[-1]].reshape(n, width).astype(dtype)
    out = np.zeros((n, width), dtype=dtype)
    total = int(lengths.sum())
    if total == 0:
        return out
    if (spans == lengths).all():  # the rows' values are contiguous: one scatter
        shift = np.arange(n) * width - (offsets[:-1] - offsets[0])
        dest = np.arange(total) + np.repeat(shift, lengths)
        out.reshape(-1)[dest] = values[offsets[0] : offsets[-1]]
        return out
    rows = np.repeat(np.arange(n), lengths)  # null rows that still span values: skip them
    column = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[rows, column] = values[np.repeat(offsets[:-1], lengths) + column]
    return out


def count_distinct(table: pa.Table, column: str) -> int:
    """How many distinct values ``column`` of ``table`` holds (e.g. the games of a shard)."""
    return len(pc.unique(table.column(column)))
