"""Which MLflow run a resumed training continues, when its run directory may have been copied or
moved and its store may have changed.

A run directory records where it was created and which store its MLflow run lives in
(``pipeline.json``). On resume, :func:`resume_target` decides:

* **the same directory, the same store** (the SIGINT → resume path): the same MLflow run goes on.
* **a directory that is not where it was created** (copied or moved; the two cannot be told
  apart): a **new** MLflow run, tagged ``omega.resumed_from`` (the run id it continues),
  ``omega.resumed_from_uri`` and ``omega.resumed_from_dir``. A store outside the directory (a
  server, a shared database) is shared by the original and its copies: only a new run keeps the
  original's run (its config, Elo log, plots, champions) from being written by a copy (a shared
  sqlite store keeps a new experiment's artifacts beside its database, not in the run directory
  that happened to create it: :class:`~.tracker.Tracker`). The run's
  own store (the default ``sqlite:///<run dir>/mlflow.db``) travels with the directory, but MLflow
  keeps *absolute* artifact locations, so a copy would still write into the original's
  ``mlartifacts/``: :func:`relocate_store` first points the copy's store at its own
  ``mlartifacts/`` (the copied files), where the new run then keeps its artifacts; the old run's
  artifacts are read from the copy too. (A new run id also keeps MLflow's per-process cache of
  artifact locations, keyed by run id, from mixing two copies of one run.)
* **another store than before** (``tracking.uri`` changed on resume) cannot hold the old run: a
  new run there, tagged the same way.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from omega_cluster.tracking.store import TrackingError, default_tracking_uri

__all__ = ["ARTIFACTS_DIR", "ResumeTarget", "relocate_store", "resume_target"]

ARTIFACTS_DIR = "mlartifacts"  # a local store's artifacts, beside it in the run directory
# (table, column) of the sqlite store's absolute artifact locations (this MLflow's schema)
_LOCATIONS = (("experiments", "artifact_location"), ("runs", "artifact_uri"),
              ("model_versions", "source"), ("model_versions", "storage_location"),
              ("logged_models", "artifact_location"))  # fmt: skip


@dataclass(frozen=True)
class ResumeTarget:
    """What a resumed training does in MLflow."""

    run_id: str | None  # the MLflow run to continue; None: start a new one
    tags: dict[str, str] = field(default_factory=dict)  # for the run: where it continues from
    note: str = ""  # one line for the run's resume log


def resume_target(
    *,
    run_id: str | None,
    tracked_at: str | None,
    created_at: str | None,
    uri: str,
    run_dir: str | Path,
) -> ResumeTarget:
    """The MLflow run a resumed training of ``run_dir`` continues in store ``uri`` (module
    docstring): ``run_id`` was its MLflow run in store ``tracked_at``, ``created_at`` where the
    directory was created (None for either: unknown, taken as unchanged)."""
    here = Path(run_dir).resolve()
    own = uri == default_tracking_uri(here)
    tags: dict[str, str] = {}
    moved = created_at is not None and Path(created_at).resolve() != here
    if own:
        old = relocate_store(uri, here)
        if old is not None:
            tags["omega.relocated_from"] = old
            moved = True
    if run_id is None:
        return ResumeTarget(None, tags, "a new MLflow run")
    same_store = tracked_at is None or tracked_at == uri
    if own and not same_store and created_at is not None:
        same_store = tracked_at == default_tracking_uri(created_at)  # the store moved with it
    if own and not (here / "mlflow.db").is_file():
        same_store = False  # the directory came without its store
    if same_store and not moved:
        return ResumeTarget(run_id, tags, f"continued MLflow run {run_id}")
    tags.update({"omega.resumed_from": run_id, "omega.resumed_from_uri": str(tracked_at),
                 "omega.resumed_from_dir": str(created_at)})  # fmt: skip
    why = "the run directory was copied or moved" if same_store else "the store changed"
    return ResumeTarget(None, tags, f"a new MLflow run continuing {run_id} ({why})")


def relocate_store(uri: str, run_dir: str | Path) -> str | None:
    """Point the run's own sqlite store (``uri`` = :func:`default_tracking_uri` of ``run_dir``)
    at ``run_dir/mlartifacts`` when it names another directory's (the run was copied or moved
    from there): every artifact location under the old one is rewritten. Returns the old
    artifact directory's URI, or None when there was nothing to change."""
    here = Path(run_dir).resolve()
    if uri != default_tracking_uri(here):
        raise ValueError(f"{uri} is not the own store of run directory {here}")
    db, new = here / "mlflow.db", (here / ARTIFACTS_DIR).as_uri()
    if not db.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(db)) as con, con:
            found = [str(r[0]).rstrip("/") for r in con.execute(
                "SELECT artifact_location FROM experiments")]  # fmt: skip
            old = next((loc for loc in found if loc != new and loc.startswith("file://")
                        and loc.endswith(f"/{ARTIFACTS_DIR}")), None)  # fmt: skip
            if old is None:
                return None
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            for table, column in _LOCATIONS:
                if table in tables:
                    con.execute(
                        f"UPDATE {table} SET {column} = ? || substr({column}, ?) "
                        f"WHERE {column} = ? OR substr({column}, 1, ?) = ?",
                        (new, len(old) + 1, old, len(old) + 1, f"{old}/"),
                    )
    except sqlite3.Error as e:
        raise TrackingError(f"cannot relocate the MLflow store {uri} to {here}: {e}") from e
    return old
