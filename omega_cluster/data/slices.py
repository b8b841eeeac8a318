"""Slices of a replay window: the table (player count × objective) each row was played at, and
sampling that gives every slice its share of the training samples.

A run over a mix of tables writes rows of all its tables into one store. Tables give different
numbers of rows per game (a 2-player deal is shorter than an 8-player one, and it is played
faster), so uniform sampling over the window trains each table in proportion to the rows it
happened to produce. With :class:`Slicing` weights the window samples instead so that each slice
present gets its weight's share of the samples (the weights renormalised over the slices in the
window), rows within a slice uniformly (or in proportion to the record weight, as the window's
weighted sampling does).

A row's slice comes from its ``num_players`` and ``game_params`` columns through ``key_of``
(``Fleet.key_of``: ``players=4,objective=points``). The JSON of the parameters is parsed once
per distinct string (a window holds a handful), not once per row.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["SliceLabels", "Slicing", "balanced_cumulative", "label_rows"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Slicing:
    """How a replay window labels its rows by slice and, with ``weights``, balances them."""

    key_of: Callable[[int, str], str]  # (num_players, game_params JSON) -> slice key
    weights: Mapping[str, float] | None = None  # each slice's share of the samples (None: as drawn)


@dataclass(frozen=True, eq=False)
class SliceLabels:
    """The slice of every row of a window's table: ``codes[i]`` indexes ``keys``."""

    keys: tuple[str, ...]  # sorted
    codes: np.ndarray  # int32[rows of the table]

    def counts(self, offset: int = 0) -> dict[str, int]:
        """Rows per slice from row ``offset`` on (the sampled part of the table)."""
        counts = np.bincount(self.codes[offset:], minlength=len(self.keys))
        return {k: int(c) for k, c in zip(self.keys, counts, strict=True) if c}


def label_rows(table: pa.Table, key_of: Callable[[int, str], str]) -> SliceLabels:
    """The slice of each row of ``table`` (module docstring)."""
    players = np.asarray(table.column("num_players").to_numpy(), np.int64)
    encoded = pc.dictionary_encode(table.column("game_params").combine_chunks())  # one dictionary
    params = encoded.dictionary.to_pylist()
    index = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)
    pairs, inverse = np.unique(players * len(params) + index, return_inverse=True)
    names = [key_of(int(p // len(params)), params[int(p % len(params))]) for p in pairs]
    keys = tuple(sorted(set(names)))
    code_of_pair = np.asarray([keys.index(n) for n in names], np.int32)
    return SliceLabels(keys, code_of_pair[inverse.reshape(-1)])


def balanced_cumulative(
    labels: SliceLabels,
    offset: int,
    weights: Mapping[str, float],
    row_weights: np.ndarray | None = None,
) -> np.ndarray | None:
    """float64 cumulative sampling mass of the rows from ``offset`` on: slice ``k`` gets
    ``weights[k]`` (renormalised over the slices present with rows of mass > 0), spread over its
    rows uniformly or ∝ ``row_weights``. ``None`` when fewer than two slices are present: then
    balancing changes nothing and the window samples as it does without it. Rows of slices
    without weight are not sampled (logged); a window with none of the named slices raises
    ValueError naming what it holds."""
    codes = labels.codes[offset:]
    mass = np.ones(codes.size) if row_weights is None else np.asarray(row_weights, np.float64)
    per_slice = np.bincount(codes, weights=mass, minlength=len(labels.keys))
    share = np.asarray([float(weights.get(k, 0.0)) for k in labels.keys])
    present = per_slice > 0
    if int(present.sum()) < 2:
        return None
    unnamed = [k for k, p, s in zip(labels.keys, present, share, strict=True) if p and s <= 0]
    if unnamed:
        log.warning(
            "replay window: %s have no weight in the mix; their rows are not sampled", unnamed
        )
    share = np.where(present, share, 0.0)
    if not share.sum() > 0:
        held = [k for k, p in zip(labels.keys, present, strict=True) if p]
        raise ValueError(
            f"the replay window holds rows of {', '.join(held)}, none of the mix's slices "
            f"({', '.join(weights)})"
        )
    share = share / share.sum()
    scale = np.divide(share, per_slice, out=np.zeros_like(share), where=present)
    return np.cumsum(mass * scale[codes])
