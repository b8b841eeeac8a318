"""Evaluation: matches between players at any table, statistics, ratings and the promotion gate.

* :mod:`.arena` — play N seat-rotated games between players (:func:`play_match`);
* :mod:`.matches`, :mod:`.paired`, :mod:`.cohorts` — benches as lists of match specifications
  (chunked, played anywhere, merged), slices, the paired design and registered cohorts;
* :mod:`.stats`, :mod:`.sprt` — intervals, Elo from scores, paired contrasts, SPRT;
* :mod:`.rating` — the Elo chain of champions with fixed anchors, Bradley–Terry, OpenSkill;
* :mod:`.gate` — the pure promote / reject / continue decision; :mod:`.gate_bench` — its paired
  deals at every table size (seat swap at 2 players, an all-champion control game at N > 2);
* :mod:`.report` — plots (PNG) and markdown tables (imported on use: it loads matplotlib).

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
from omega_cluster.eval.cohorts import Cohort, CohortError, load_cohort, run_cohort
from omega_cluster.eval.gate import Contender, GateConfig, GateDecision, SliceResults, decide
from omega_cluster.eval.matches import MatchSpec, SliceKey, merge_results, play_spec
from omega_cluster.eval.rating import EloRow, bradley_terry, openskill_ratings, promote
from omega_cluster.eval.sprt import SPRT, Decision
from omega_cluster.eval.stats import (
    ConfidenceInterval,
    PairedContrast,
    elo_interval,
    mean_ci,
    paired_contrast,
    wilson_interval,
)

__all__ = [
    "SPRT",
    "ArenaError",
    "Cohort",
    "CohortError",
    "ConfidenceInterval",
    "Contender",
    "Decision",
    "EloRow",
    "GameRecord",
    "GateConfig",
    "GateDecision",
    "MatchResult",
    "MatchSpec",
    "PairedContrast",
    "PlayerResult",
    "SliceKey",
    "SliceResults",
    "bradley_terry",
    "decide",
    "elo_interval",
    "format_table",
    "load_cohort",
    "mean_ci",
    "merge_results",
    "openskill_ratings",
    "paired_contrast",
    "play_game",
    "play_match",
    "play_spec",
    "print_table",
    "promote",
    "run_cohort",
    "wilson_interval",
]
