"""Training n-tuple value tables by TD self-play (:mod:`omega_cluster.search.ntuple` holds the
tables and their update rule): games and their chains in :mod:`.play`, the learner, its
resumable directory and the one-process loop in :mod:`.trainer`. Pure: no Ray, no MLflow."""

from omega_cluster.train.ntuple.play import (
    GameKit,
    GameResult,
    GameTask,
    LookaheadPolicy,
    Policy,
    TablesSetupError,
    game_seed,
    pattern_set,
    play_chains,
    play_games,
)
from omega_cluster.train.ntuple.trainer import (
    STATE_FILE,
    RunCounters,
    TableTrainConfig,
    TableTrainer,
    Validation,
    read_state,
    train_tables,
)

__all__ = [
    "STATE_FILE",
    "GameKit",
    "GameResult",
    "GameTask",
    "LookaheadPolicy",
    "Policy",
    "RunCounters",
    "TableTrainConfig",
    "TableTrainer",
    "TablesSetupError",
    "Validation",
    "game_seed",
    "pattern_set",
    "play_chains",
    "play_games",
    "read_state",
    "train_tables",
]
