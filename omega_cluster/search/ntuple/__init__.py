"""N-tuple value tables: the lookup tables of small patterns, their leaf, their TD training.

A game declares its windows (:class:`omega_cluster.games.patterns.PatternSet`, plugin hook
``ntuple_patterns``); :class:`TupleTables` holds one row per window entry and values a position
by summing the rows its windows look up (:mod:`.tables`); :class:`TableEvaluator` is the search
leaf ``tables`` (:mod:`.evaluator`); :mod:`.td` is the learning: TD(λ) over each seat's chain of
positions with temporal-coherence step sizes per entry, as sparse updates a learner merges.
"""

from omega_cluster.search.ntuple.evaluator import TableEvaluator, normalise_shares
from omega_cluster.search.ntuple.tables import FORMAT_VERSION, TablesError, TupleTables
from omega_cluster.search.ntuple.td import (
    Chain,
    SparseUpdate,
    TemporalCoherence,
    combine,
    game_update,
    lambda_returns,
    seat_targets,
)

__all__ = [
    "FORMAT_VERSION",
    "Chain",
    "SparseUpdate",
    "TableEvaluator",
    "TablesError",
    "TemporalCoherence",
    "TupleTables",
    "combine",
    "game_update",
    "lambda_returns",
    "normalise_shares",
    "seat_targets",
]
