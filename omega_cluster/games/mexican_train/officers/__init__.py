"""The Mexican Train heuristic officers: Lieutenant and Commander.

Ensign (uniform random) is :class:`omega_cluster.games.player.RandomPlayer`. Lieutenant
(:mod:`.lieutenant`) greedily dumps the most pips this turn (doubles first, then the heaviest); Commander (:mod:`.commander`) scores every
legal move with the named terms of :mod:`.terms`, weighted by :class:`CommanderWeights`
(:mod:`.weights`), and can explain its choice term by term. The player registry builds them as
``lieutenant`` / ``commander`` / ``heuristic``; the arena uses them as fixed rating anchors and
the search as a rollout policy. They read only the read-only state API of
:mod:`omega_cluster.games.mexican_train` (hand masks, train ends, markers, open doubles, sizes).
"""

from omega_cluster.games.mexican_train.officers.commander import (
    Commander,
    MoveExplanation,
    format_explanation,
)
from omega_cluster.games.mexican_train.officers.lieutenant import Lieutenant
from omega_cluster.games.mexican_train.officers.weights import TERMS, CommanderWeights

__all__ = [
    "TERMS",
    "Commander",
    "CommanderWeights",
    "Lieutenant",
    "MoveExplanation",
    "format_explanation",
]
