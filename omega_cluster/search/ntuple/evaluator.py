"""The search leaf ``tables``: every seat's win share read from n-tuple tables.

Each seat looks its own windows up (``patterns.extract(state, seat)``): what it can see, its own
hand included, so on a sampled world a leaf is valued the way the seat would value it. The raw
sums are clipped to [0, 1] and normalised to sum 1, the win shares a constant-sum search expects
(all zero: an even split). With per-seat outputs (``outputs = num_players``) seat ``q``'s value is
the mean, over every viewer ``p``, of what ``p``'s lookup says about ``q``. A terminal leaf is
valued by its win shares (Mexican Train's returns).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from omega_cluster.games.api import State
from omega_cluster.search.evaluators import Leaf, LeafEvaluation
from omega_cluster.search.ntuple.tables import TupleTables

__all__ = ["TableEvaluator", "normalise_shares"]


def normalise_shares(raw: np.ndarray) -> np.ndarray:
    """``raw`` clipped to [0, 1] and scaled to sum 1 (an even split when all are 0)."""
    clipped = np.clip(np.asarray(raw, dtype=np.float64), 0.0, 1.0)
    total = float(clipped.sum())
    if total <= 0.0:
        return np.full(clipped.shape, 1.0 / clipped.size)
    return clipped / total


class TableEvaluator:
    """An :class:`~omega_cluster.search.evaluators.Evaluator` over :class:`TupleTables`."""

    name = "tables"

    def __init__(self, tables: TupleTables, num_players: int) -> None:
        if num_players < 1:
            raise ValueError(f"num_players must be >= 1, got {num_players}")
        if tables.outputs not in (1, num_players):
            raise ValueError(
                f"tables with {tables.outputs} outputs cannot value a {num_players}-player game "
                f"(need 1 or {num_players})"
            )
        self.tables = tables
        self.num_players = num_players
        # viewer p's output k speaks of seat (p + k) % n; _gather[p, q] = k for seat q
        n = num_players
        self._gather = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n

    def raw_values(self, state: State) -> np.ndarray:
        """float[num_players]: each seat's value before clipping and normalising."""
        extract, value = self.tables.patterns.extract, self.tables.value
        n = self.num_players
        if self.tables.outputs == 1:
            return np.array([value(extract(state, p))[0] for p in range(n)])
        views = np.stack([value(extract(state, p)) for p in range(n)])  # [viewer, output]
        return np.take_along_axis(views, self._gather, axis=1).mean(axis=0)

    def seat_values(self, state: State) -> np.ndarray:
        """float[num_players]: the win shares of every seat at ``state`` (module doc)."""
        if not state.current_players:
            return np.asarray(state.win_shares(), dtype=np.float64)
        return normalise_shares(self.raw_values(state))

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        return [
            LeafEvaluation(tuple(float(v) for v in self.seat_values(leaf.state))) for leaf in leaves
        ]
