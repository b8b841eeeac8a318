"""MLflow for table training: the run's settings, its curves and its tables as an artifact.

:class:`TableTracking` is the report hook of the table trainers (one-process and Ray): after each
merge it logs ``games``, ``watched``, ``positions`` and ``seconds`` (step = games trained), the
table fill (the fraction of entries the games have reached) every ``fill_every`` games, and at
each validation ``validation_score`` with its standard error and ``validation_fair`` (an equal
player's share). :meth:`TableTracking.log_tables` uploads the tables directory's files (the
tables, their layout and the run's state) under the artifact ``tables/``. The MLflow run's id
goes into the tables' meta, so a resumed run logs into the same MLflow run.
"""

from __future__ import annotations

from pathlib import Path

from omega_cluster.search.ntuple.tables import LAYOUT_FILE, TABLES_FILE
from omega_cluster.tracking.tracker import Tracker
from omega_cluster.train.ntuple import STATE_FILE, TableTrainer, Validation

__all__ = ["TableTracking", "open_table_tracking"]


def open_table_tracking(
    trainer: TableTrainer, out: str | Path, *, uri: str | None = None
) -> Tracker:
    """The MLflow run of the table run in ``out``: the one its tables name (resumed), else a new
    one whose params are the run's settings (its id kept in the tables' meta)."""
    run_id = trainer.tables.meta.get("run_id")
    tracker = Tracker(
        run_dir=out, uri=uri, experiment="omega_cluster-tables", run_id=run_id or None
    )
    if not run_id:
        cfg = trainer.config
        tracker.log_params(
            {
                "game": trainer.game.spec.name,
                "params": dict(trainer.game.params),
                "patterns": trainer.tables.patterns.describe()["name"],
                "pattern_version": trainer.tables.patterns.version,
                "entries": trainer.tables.patterns.size,
                "outputs": cfg.outputs,
                "lam": cfg.lam,
                "alpha": cfg.alpha,
                "watch_games": cfg.watch_games,
                "seed": cfg.seed,
            }
        )
        trainer.tables.meta["run_id"] = tracker.run_id
    return tracker


class TableTracking:
    """The report hook that logs a table run's metrics (module doc)."""

    def __init__(self, tracker: Tracker, *, fill_every: int = 100) -> None:
        self.tracker = tracker
        self.fill_every = fill_every
        self._last_fill = -1

    def __call__(self, trainer: TableTrainer, validation: Validation | None) -> None:
        c = trainer.counters
        metrics = {
            "games": float(c.games),
            "watched": float(c.watched),
            "positions": float(c.positions),
            "seconds": c.seconds,
        }
        if self._last_fill < 0 or c.games // self.fill_every > self._last_fill // self.fill_every:
            metrics["table_fill"] = trainer.tables.fill()
            self._last_fill = c.games
        if validation is not None:
            metrics.update(
                validation_score=validation.score,
                validation_stderr=validation.stderr,
                validation_fair=validation.fair,
            )
        self.tracker.log_metrics(metrics, step=c.games)

    def log_tables(self, out: str | Path) -> None:
        """The tables, their layout and the run's state under the artifact ``tables/``."""
        self.tracker.flush()
        for name in (TABLES_FILE, LAYOUT_FILE, STATE_FILE):
            file = Path(out) / name
            if file.is_file():
                self.tracker.log_artifact(file, "tables")
