"""TD(λ) with temporal-coherence step sizes for n-tuple tables, as sparse updates.

**Chains.** A seat's chain is the list of its positions in one game (the index arrays its windows
looked up), ending with the game's final outcome: the seat's win share (with per-seat outputs,
the shares of every seat from its chair). The λ-return of position ``t`` mixes the tables' values
of the later positions with the outcome: ``G_T-1 = z`` and ``G_t = (1-λ)·V(t+1) + λ·G_t+1``
(λ = 0 is TD(0), each position learns from the next; λ = 1 is the plain outcome). The error
``G_t - V(t)`` is shared among the entries position ``t`` looks up (each gets ``1/m`` of it), so
a step of rate 1 on fresh entries moves the value exactly onto the target.

**Temporal coherence** (Jaśkowski 2018, after Beal & Smith): every entry keeps ``E``, the sum of
its errors, and ``A``, the sum of their magnitudes; its step is ``α·|E|/A`` (1 while ``A = 0``).
An entry whose errors keep one sign learns at full speed; one whose errors cancel (noise) slows
down by itself, so one ``α`` serves entries seen once and entries seen a million times.

**Sparse updates.** :func:`game_update` turns one game's chains, valued on the actor's copy of
the tables, into a :class:`SparseUpdate`: the entries touched, the sum of their error shares and
the sum of the shares' magnitudes. The learner's :class:`TemporalCoherence` holds ``E`` and ``A``
and :meth:`TemporalCoherence.merge` applies any number of updates at once, at each entry's rate
``r`` before the merge (``α·|E|/A``, at most 1). An entry that ``k`` positions looked up gets
``(1 - (1 - r)^k) / k`` of the sum of their errors: what ``k`` sequential steps of rate ``r``
on one shared error would move it (``r`` times the sum for small steps, the mean error at
``r = 1``), so errors measured on one stale copy of the tables never overshoot by summing up.
Merging the updates of games played on one copy is thus a sequential update with slightly
stale values (equal in the limit of small steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from omega_cluster.search.ntuple.tables import TablesError, TupleTables

__all__ = [
    "Chain",
    "SparseUpdate",
    "TemporalCoherence",
    "combine",
    "game_update",
    "lambda_returns",
    "seat_targets",
]


@dataclass(frozen=True)
class Chain:
    """One seat's positions in one game (index arrays, in order) and its final target."""

    positions: Sequence[np.ndarray]  # each int64[m]: the entries the position looks up
    target: np.ndarray  # float[outputs]: the outcome (the seat's win share from its chair)


@dataclass(frozen=True)
class SparseUpdate:
    """What one game (or several) asks of the tables: per touched entry, the sum of its error
    shares (``delta``) and of their magnitudes (``magnitude``), float[k, outputs] each, and the
    number of positions that made them (``hits``)."""

    indices: np.ndarray  # int64[k], unique
    delta: np.ndarray  # float64[k, outputs]
    magnitude: np.ndarray  # float64[k, outputs]
    hits: np.ndarray  # int64[k]: the positions that looked each entry up
    positions: int  # positions it was made from (for the reports)

    @property
    def size(self) -> int:
        return int(self.indices.shape[0])


def seat_targets(shares: Sequence[float], seat: int, outputs: int) -> np.ndarray:
    """float[outputs]: the win shares from ``seat``'s chair (output k: seat ``seat + k``)."""
    n = len(shares)
    return np.array([shares[(seat + k) % n] for k in range(outputs)], dtype=np.float64)


def lambda_returns(values: np.ndarray, target: np.ndarray, lam: float) -> np.ndarray:
    """float[T, outputs]: the λ-return of every position of a chain valued ``values``
    (float[T, outputs]) ending in ``target`` (module doc)."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    returns = np.empty_like(values, dtype=np.float64)
    g = np.asarray(target, dtype=np.float64)
    for t in range(values.shape[0] - 1, -1, -1):
        returns[t] = g
        g = (1.0 - lam) * values[t] + lam * g
    return returns


def game_update(tables: TupleTables, chains: Sequence[Chain], lam: float) -> SparseUpdate:
    """The sparse update of one game's ``chains`` on ``tables`` (not changed; module doc)."""
    rows: list[np.ndarray] = []
    shares: list[np.ndarray] = []
    count = 0
    for chain in chains:
        if not chain.positions:
            continue
        values = np.stack([tables.value(ix) for ix in chain.positions])
        errors = lambda_returns(values, chain.target, lam) - values
        for ix, err in zip(chain.positions, errors, strict=True):
            if ix.size == 0:
                continue
            entries, repeats = np.unique(ix, return_counts=True)
            rows.append(entries)
            shares.append(repeats[:, None] * (err / ix.size)[None, :])
            count += 1
    if not rows:
        return _sum([], [], [], [], tables.outputs, count)
    share = np.concatenate(shares)
    hits = [np.ones(r.size, dtype=np.int64) for r in rows]
    return _sum(rows, [share], [np.abs(share)], hits, tables.outputs, count)


def combine(updates: Sequence[SparseUpdate], outputs: int) -> SparseUpdate:
    """Several updates as one (deltas, magnitudes and hits summed per entry)."""
    used = [u for u in updates if u.size]
    return _sum(
        [u.indices for u in used],
        [u.delta for u in used],
        [u.magnitude for u in used],
        [u.hits for u in used],
        outputs,
        sum(u.positions for u in updates),
    )


def _sum(
    rows: list[np.ndarray],
    deltas: list[np.ndarray],
    magnitudes: list[np.ndarray],
    hits: list[np.ndarray],
    outputs: int,
    positions: int,
) -> SparseUpdate:
    """Rows of (entry, delta, magnitude, hits) summed per entry."""
    if not rows:
        empty = np.zeros((0, outputs))
        none = np.zeros(0, dtype=np.int64)
        return SparseUpdate(none, empty, empty.copy(), none.copy(), positions)
    unique, where = np.unique(np.concatenate(rows).astype(np.int64), return_inverse=True)
    delta = np.zeros((unique.size, outputs))
    magnitude = np.zeros((unique.size, outputs))
    count = np.zeros(unique.size, dtype=np.int64)
    np.add.at(delta, where, np.concatenate(deltas))
    np.add.at(magnitude, where, np.concatenate(magnitudes))
    np.add.at(count, where, np.concatenate(hits))
    return SparseUpdate(unique, delta, magnitude, count, positions)


class TemporalCoherence:
    """The learner's per-entry accumulators ``E`` and ``A`` and the merge of updates (module doc)."""

    FILE = "coherence.safetensors"

    def __init__(self, tables: TupleTables, alpha: float = 1.0) -> None:
        if not alpha > 0.0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.tables = tables
        self.alpha = float(alpha)
        shape = tables.weights.shape
        self.errors = np.zeros(shape)  # E: the sum of each entry's error shares
        self.magnitudes = np.zeros(shape)  # A: the sum of their magnitudes

    def rates(self, indices: np.ndarray) -> np.ndarray:
        """float[k, outputs]: the coherence ``|E|/A`` of entries ``indices`` (1 where A = 0)."""
        a = self.magnitudes[indices]
        e = np.abs(self.errors[indices])
        return np.divide(e, a, out=np.ones_like(a), where=a > 0.0)

    def merge(self, updates: Sequence[SparseUpdate]) -> int:
        """Apply ``updates`` to the tables, then add them to the accumulators; returns the
        entries touched (module doc: the step of an entry hit ``k`` times)."""
        update = combine(updates, self.tables.outputs)
        if update.size == 0:
            return 0
        ix = update.indices
        rate = np.minimum(self.alpha * self.rates(ix), 1.0)
        k = update.hits[:, None].astype(np.float64)
        step = (1.0 - (1.0 - rate) ** k) / k * update.delta
        self.tables.weights[ix] += step.astype(np.float32)
        self.errors[ix] += update.delta
        self.magnitudes[ix] += update.magnitude
        return update.size

    def save(self, path: str | Path) -> None:
        """The accumulators into ``path/coherence.safetensors`` (beside the tables)."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / (self.FILE + ".tmp")
        save_file({"errors": self.errors, "magnitudes": self.magnitudes}, str(tmp))
        tmp.replace(root / self.FILE)

    def load(self, path: str | Path) -> None:
        """Read the accumulators saved in ``path``; refuses in one line a missing, corrupt or
        mis-shaped file."""
        file = Path(path) / self.FILE
        try:
            arrays = load_file(str(file))
        except FileNotFoundError:
            raise TablesError(f"{file} is missing (the learner's step sizes)") from None
        except Exception as err:
            raise TablesError(f"{file} is unreadable ({err})") from None
        shape = self.tables.weights.shape
        errors, magnitudes = arrays.get("errors"), arrays.get("magnitudes")
        if (
            errors is None
            or magnitudes is None
            or errors.shape != shape
            or magnitudes.shape != shape
        ):
            raise TablesError(f"{file} does not fit tables of shape {shape}")
        self.errors = np.array(errors, dtype=np.float64)
        self.magnitudes = np.array(magnitudes, dtype=np.float64)
