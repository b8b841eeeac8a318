"""MLflow tracking for a training run: the only package of omega_cluster that imports mlflow.

One :class:`Tracker` is one MLflow run. The service opens it at start, logs the resolved config
(params + ``config/config.yaml``), the code version (git SHA, branch, dirty diff, as KataGo's
self-play loop archives ``git diff`` per run), throughput and learner metrics, gate results, the
Elo log and plots from ``omega_cluster.eval``, and each champion's checkpoint + ONNX, registered
in the MLflow Model Registry under the alias ``champion``. Resuming passes the run id back in and
continues the same run (a copied or moved run directory starts a new one, :mod:`.relocate`).

* :mod:`.store` — the store's URI checked before use (fail fast), the client, the look-ups by run
  id and by alias, registering a champion's version;
* :mod:`.tracker` — :class:`Tracker`: params, tags, buffered metrics, artifacts, champions;
* :mod:`.elo_log` — the Elo log as a JSONL file, an artifact and an MLflow table;
* :mod:`.ratings` — a champion's anchored ratings and per-table anchor scores as metrics;
* :mod:`.status` — the run's status history (a run left RUNNING by a dead driver: KILLED, resumed);
* :mod:`.relocate` — which MLflow run a resumed training continues (a copied or moved run
  directory, another store) and the copied store pointed at its own artifacts.

mlflow is imported on first use (it takes seconds), so ``import omega_cluster.tracking`` is cheap.
"""

from omega_cluster.tracking.elo_log import ELO_LOG_FILE
from omega_cluster.tracking.relocate import ResumeTarget, relocate_store, resume_target
from omega_cluster.tracking.status import STATUS_HISTORY_TAG
from omega_cluster.tracking.store import (
    CHAMPION_ALIAS,
    RUN_DIR_TAG,
    ChampionLog,
    TrackingError,
    check_tracking_uri,
    default_tracking_uri,
    find_run_dir,
    read_champion,
    read_run_tags,
)
from omega_cluster.tracking.store import client as _client  # noqa: F401 (bench_tracking reads it)
from omega_cluster.tracking.tracker import RUN_STATUSES, Tracker

__all__ = [
    "CHAMPION_ALIAS",
    "ELO_LOG_FILE",
    "RUN_DIR_TAG",
    "RUN_STATUSES",
    "STATUS_HISTORY_TAG",
    "ChampionLog",
    "ResumeTarget",
    "Tracker",
    "TrackingError",
    "check_tracking_uri",
    "default_tracking_uri",
    "find_run_dir",
    "read_champion",
    "read_run_tags",
    "relocate_store",
    "resume_target",
]
