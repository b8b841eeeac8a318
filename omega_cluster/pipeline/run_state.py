"""What a training run keeps on disk between restarts: where (:class:`RunPaths`) and the driver's
counters and Elo log (:class:`PipelineState`, ``pipeline.json``).

The Elo log has one row per champion and gate decision: the version, its parent, its Elo and
interval (chained from the parent's by the gate's measured gap), the games behind it, whether it
was promoted and the verdict. Each champion's anchored ratings (one per objective and player
kind: :mod:`omega_cluster.eval.anchors`) are kept apart (``ratings``: rows ``rating:
"anchored"`` with the objective, the player kind and the interval; the tracker appends them to
the same ``elo_log.jsonl``), and so are its scores per table (``anchor_slices``). Non-finite
figures are written as NaN so the JSON stays plain.

``root`` is where the run directory was created (or last adopted, after a copy or a move) and
``tracking_uri`` the MLflow store its ``mlflow_run_id`` lives in: a resumed run compares them with
where it is now (:mod:`omega_cluster.service`). ``resumes`` logs each resume: when, where, the
settings it changed (the safe ones, :func:`omega_cluster.config.resume_changes`), counters the
manifest corrected, and which MLflow run it continued or started.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omega_cluster.config import ConfigError
from omega_cluster.data import ShardStore, StoreTotals, store_totals
from omega_cluster.eval.anchors import AnchorReport
from omega_cluster.eval.rating import EloRow

__all__ = [
    "PipelineState",
    "RunPaths",
    "elo_log_row",
    "rating_rows",
    "recount",
    "rejections",
    "slice_rows",
]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPaths:
    """Where a run keeps its state."""

    root: Path
    shards: str | None = None  # shard store URI (pyarrow.fs: a path, file://, s3://...)

    @property
    def store_uri(self) -> str:
        return self.shards or str(self.root / "shards")

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def state(self) -> Path:
        return self.root / "pipeline.json"


@dataclass
class PipelineState:
    """The driver's counters, saved after every event that changes them."""

    game: str
    next_chunk: int = 0
    iteration: int = 0
    decisions: int = 0
    promotions: int = 0
    games: int = 0
    records: int = 0
    shards: int = 0
    tables: dict[str, int] = field(default_factory=dict)  # games stored per table (slice key)
    elo_log: list[dict[str, Any]] = field(default_factory=list)
    mlflow_run_id: str | None = None
    warm_start: dict[str, float] = field(default_factory=dict)  # WarmStartStats.metrics(), if any
    root: str | None = None  # the run directory's absolute path when created (or last adopted)
    tracking_uri: str | None = None  # the MLflow store of mlflow_run_id
    resumes: list[dict[str, Any]] = field(default_factory=list)  # one entry per resume
    ratings: list[dict[str, Any]] = field(default_factory=list)  # rating_rows of champions
    anchor_slices: list[dict[str, Any]] = field(default_factory=list)  # slice_rows of champions
    exploitability: list[dict[str, Any]] = field(default_factory=list)  # per champion and kind

    def record_anchors(self, report: AnchorReport) -> None:
        """A champion's anchored ratings and per-table scores (:func:`rating_rows`,
        :func:`slice_rows`)."""
        self.ratings.extend(rating_rows(report, decision=self.decisions))
        self.anchor_slices.extend(slice_rows(report))
        self.exploitability.extend({"version": report.version, "player": kind, "value": value}
                                   for kind, value in report.exploitability)  # fmt: skip

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(asdict(self), f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def record_resume(
        self,
        paths: RunPaths,
        changes: dict[str, tuple[str, str]],
        mlflow: tuple[str, str, str] | None,
    ) -> None:
        """Log this resume (``resumes``) and save: when, where, where it was before, the settings
        it changed, and its MLflow run (``(run id, tracking URI, note)``, None if untracked);
        the directory and the store are this resume's from now on (with tracking)."""
        entry: dict[str, Any] = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                 "root": str(paths.root),
                                 "changes": {k: list(v) for k, v in changes.items()}}  # fmt: skip
        if self.root is not None and Path(self.root) != paths.root:
            entry["moved_from"] = self.root
            log.warning("%s was created at %s: resuming it here", paths.root, self.root)
        if changes:
            shown = ", ".join(f"{k}: {a} -> {b}" for k, (a, b) in changes.items())
            log.warning("resuming %s with changed settings: %s", paths.root, shown)
        # an untracked resume keeps the old location: a later tracked resume of a copy must
        # still see the move and not continue the original's MLflow run
        if mlflow is not None:
            self.mlflow_run_id, self.tracking_uri, entry["mlflow"] = mlflow
            self.root = str(paths.root)
        self.resumes.append(entry)
        self.save(paths.state)

    @classmethod
    def load(cls, path: Path, *, game: str) -> PipelineState:
        if not path.exists():
            return cls(game=game)
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:  # ValueError: bad JSON or bytes that are not UTF-8
            raise ConfigError(f"{path} is unreadable ({err}): not a run's state") from err
        if not isinstance(data, dict) or data.get("game") != game:
            found = data.get("game") if isinstance(data, dict) else None
            raise ConfigError(
                f"{path.parent} is a run of game {found!r}, not {game!r}: use another "
                "run directory (run.dir) or the matching game"
            )
        try:
            return cls(**data)
        except TypeError as err:
            raise ConfigError(f"{path} is not a run's state: {err}") from err


def recount(
    state: PipelineState, paths: RunPaths, store: ShardStore, key_of: Callable[[int, str], str]
) -> bool:
    """Set the counters of ``state`` from the shard store's live manifest entries (the only
    truth: a driver killed after a shard was committed but before it saved its counters
    undercounts it; a quarantined shard no longer counts); saves and logs one line when they
    differed. Returns whether they did. ``store``: the run's store object, whose index of game
    ids then grows incrementally."""
    saved = (state.shards, state.records, state.games)
    if not count(state, store_totals(store), key_of):
        return False
    log.warning(
        "%s counted %d shards, %d records, %d games; the shard store holds %d, %d, %d: the "
        "counters now follow the manifest", paths.state, *saved, state.shards, state.records,
        state.games,
    )  # fmt: skip
    state.save(paths.state)
    return True


def count(state: PipelineState, totals: StoreTotals, key_of: Callable[[int, str], str]) -> bool:
    """Set every counter of ``state`` (shards, records, games, games per table) from the
    store's ``totals``; ``key_of`` names a table (``Fleet.key_of``). Returns whether any
    changed."""
    tables: dict[str, int] = {}
    for (players, params), games in sorted(totals.tables.items()):
        key = key_of(players, params)
        tables[key] = tables.get(key, 0) + games
    before = (state.shards, state.records, state.games, state.tables)
    state.shards, state.records, state.games = totals.shards, totals.records, totals.games
    state.tables = tables
    return (state.shards, state.records, state.games, state.tables) != before


def elo_log_row(row: EloRow, *, promoted: bool, verdict: str) -> dict[str, Any]:
    """One row of :attr:`PipelineState.elo_log` (plain JSON)."""
    return {
        "version": int(row.version),
        "parent": None if row.parent is None else int(row.parent),
        "elo": _finite(row.elo),
        "low": _finite(row.low),
        "high": _finite(row.high),
        "games": row.games,
        "promoted": promoted,
        "verdict": verdict,
        "time": time.time(),
    }


def rejections(elo_log: list[dict[str, Any]]) -> str:
    """Why the run still has the champion it has: the gate decisions since the last promotion,
    all rejections, in one line (their scores against the champion, and the closest candidate
    with its interval and the gate's reason); "" when the last decision promoted or none was
    made."""
    decided = [r for r in elo_log if r.get("verdict") in ("promote", "reject")]
    since = 0
    for i, row in enumerate(decided):
        if row["verdict"] == "promote":
            since = i + 1
    tail = [r for r in decided[since:] if r.get("score") is not None]
    if not tail:
        return ""
    scores = [float(r["score"]) for r in tail]
    best = max(tail, key=lambda r: float(r.get("score_low", r["score"])))
    interval = ""
    if best.get("score_low") is not None and best.get("score_high") is not None:
        interval = f" [{best['score_low']:.3f}, {best['score_high']:.3f}]"
    champion = tail[-1].get("parent")
    return (
        f"the last {len(tail)} candidates were all rejected against champion v{champion}: "
        f"scores {min(scores):.3f}..{max(scores):.3f} (mean {sum(scores) / len(scores):.3f}); "
        f"the closest, v{best['version']}, {best['score']:.3f}{interval} over {best['games']} "
        f"games ({best.get('reason', 'no reason recorded')})"
    )


def rating_rows(report: AnchorReport, *, decision: int) -> list[dict[str, Any]]:
    """The Elo-log rows of a champion's anchored ratings (after ``decision`` gate decisions)."""
    return [
        {"version": r.version, "rating": "anchored", "objective": r.objective, "player": r.kind,
         "elo": _finite(r.fit.rating), "low": _finite(r.fit.low), "high": _finite(r.fit.high),
         "level": r.fit.level, "games": r.fit.games, "clamped": r.fit.clamped,
         "method": "profile likelihood", "decision": decision, "time": time.time()}
        for r in report.ratings
    ]  # fmt: skip


def slice_rows(report: AnchorReport) -> list[dict[str, Any]]:
    """A champion's score and fair share per (table, anchor, player kind): the diagnostics."""
    return [
        {"version": int(r.version), "table": r.table, "anchor": r.anchor, "player": r.kind,
         "score": r.score, "fair_share": _finite(r.fair_share),
         "games": r.wins + r.draws + r.losses}
        for r in report.results
    ]  # fmt: skip


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else float("nan")
