"""Evaluation: matches between players at any table (arena) and the statistics they report.

Pure code, no Ray: the service fans matches out over actors and merges their records.
"""

from omega_cluster.eval.arena import (
    ArenaError,
    GameRecord,
    MatchResult,
    PlayerResult,
    format_table,
    play_game,
    play_match,
    print_table,
)
from omega_cluster.eval.stats import ConfidenceInterval, mean_ci, wilson_interval

__all__ = [
    "ArenaError",
    "ConfidenceInterval",
    "GameRecord",
    "MatchResult",
    "PlayerResult",
    "format_table",
    "mean_ci",
    "play_game",
    "play_match",
    "print_table",
    "wilson_interval",
]
