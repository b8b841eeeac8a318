"""CMA-ES self-play tuning of a weight set against a pool of its own snapshots.

:mod:`.specs`: what is tuned (:class:`WeightSpec`, :class:`TuneTarget`, the game's targets);
:mod:`.jobs`: one generation's games as independent jobs (the pool, the seatings, common deals);
:mod:`.run`: the CMA-ES loop, its JSON log (resume by replay) and the preset it writes. Pure: the
caller's ``map`` decides where the jobs run (Ray: :mod:`omega_cluster.cluster.tuning`).
"""

from omega_cluster.eval.tuning.jobs import (
    DEAL_SEEDS_RULE,
    Map,
    TuneJob,
    deal_seed,
    fitnesses,
    generation_jobs,
    in_process,
    play_job,
    seating,
    update_pool,
)
from omega_cluster.eval.tuning.run import (
    LOG_FILE,
    PRESET_FILE,
    Generation,
    TuneConfig,
    Tuner,
    load_preset,
)
from omega_cluster.eval.tuning.specs import (
    SEARCH_TARGET,
    TuneError,
    TuneTarget,
    WeightSpec,
    game_targets,
    job_context,
    resolve_target,
    spec_from_default,
)

__all__ = [
    "DEAL_SEEDS_RULE",
    "LOG_FILE",
    "PRESET_FILE",
    "SEARCH_TARGET",
    "Generation",
    "Map",
    "TuneConfig",
    "TuneError",
    "TuneJob",
    "TuneTarget",
    "Tuner",
    "WeightSpec",
    "deal_seed",
    "fitnesses",
    "game_targets",
    "generation_jobs",
    "in_process",
    "job_context",
    "load_preset",
    "play_job",
    "resolve_target",
    "seating",
    "spec_from_default",
    "update_pool",
]
