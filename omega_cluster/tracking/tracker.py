"""One MLflow run of a training run: :class:`Tracker` logs params, tags, buffered metrics,
artifacts, the Elo log and the registered champions.

* Metrics are buffered and sent with ``log_batch``: against a server each call is a round trip,
  so one batch of many points costs little more than one point (``bench/bench_tracking.py``
  measures both). The buffer flushes when
  it holds ``max_buffered`` points or ``flush_every_s`` has passed, checked on each call; NaN/inf
  values are skipped and counted (:attr:`Tracker.skipped_metrics`), never fatal.
* Champions are registered without pickle and without a model flavour: the registered version's
  source is the run's ``champions/v<version>`` artifact directory (safetensors + JSON + ONNX).
* Every status change (started, resumed, ended; a run found RUNNING on resume is first marked
  KILLED) goes to the tag ``omega.status_history`` (:mod:`.status`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from omega_cluster.tracking import elo_log
from omega_cluster.tracking.status import StatusHistory, end_copied_run
from omega_cluster.tracking.store import (
    ChampionLog,
    TrackingError,
    check_tracking_uri,
    client,
    default_artifact_location,
    default_tracking_uri,
    mlflow,
    register_version,
)

__all__ = ["RUN_STATUSES", "Tracker"]

RUN_STATUSES = ("FINISHED", "FAILED", "KILLED")
# Limits of mlflow.utils.validation (MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH, MAX_ENTITY_KEY_LENGTH,
# MAX_PARAMS_TAGS_PER_BATCH); values longer than these are truncated rather than rejected.
_MAX_PARAM_VALUE, _MAX_TAG_VALUE, _MAX_KEY, _PARAMS_PER_BATCH = 6000, 8000, 250, 100
_NAME = re.compile(r"^[/\w.\- :]*$")  # mlflow's rule for metric and param names (POSIX)
_log = logging.getLogger(__name__)


def _check_name(key: str, what: str) -> None:
    if not key or len(key) > _MAX_KEY or not _NAME.match(key) or key.startswith("/"):
        raise ValueError(
            f"invalid {what} name {key!r}: names are 1-{_MAX_KEY} characters of letters, digits, "
            "'_', '-', '.', ' ', ':' and '/' (not starting with '/')"
        )


def _flatten(params: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = str(value)[:_MAX_PARAM_VALUE]
    return flat


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


class Tracker:
    """One MLflow run: params, tags, buffered metrics, artifacts, Elo log, registered champions.

    ``uri`` defaults to :func:`default_tracking_uri` of ``run_dir``; a new experiment keeps its
    artifacts in ``<run_dir>/mlartifacts`` in that store, beside the database in another sqlite
    store, unless ``artifact_location`` says otherwise (an existing experiment keeps its own).
    ``run_id`` resumes that run (status back to RUNNING); :class:`TrackingError` if it does not
    exist. Not meant for concurrent use from many processes; calls from threads are safe.
    """

    def __init__(
        self,
        *,
        run_dir: str | Path,
        uri: str | None = None,
        experiment: str = "omega_cluster",
        run_name: str | None = None,
        run_id: str | None = None,
        flush_every_s: float = 5.0,
        max_buffered: int = 1000,
        artifact_location: str | None = None,
    ) -> None:
        if flush_every_s < 0 or max_buffered < 1 or not experiment:
            raise ValueError(
                f"need flush_every_s >= 0, max_buffered >= 1 and an experiment name; got "
                f"{flush_every_s}, {max_buffered}, {experiment!r}"
            )
        self._run_dir = Path(run_dir).resolve()
        self._run_dir.mkdir(parents=True, exist_ok=True)
        self._uri = uri or default_tracking_uri(self._run_dir)
        self._flush_every_s, self._max_buffered = flush_every_s, max_buffered
        self._run_id = run_id or ""
        self._closed = False
        check_tracking_uri(self._uri)
        with self._errors("open the run", allow_closed=True):
            self._client = client(self._uri)  # a new sqlite store migrates its schema here
            if run_id:
                run = self._resume(run_id)
            else:
                run = self._start(experiment, run_name or self._run_dir.name, artifact_location)
        self._run_id, self._experiment_id = run.info.run_id, run.info.experiment_id
        self._artifact_uri: str = run.info.artifact_uri
        self._metric_type = mlflow().entities.Metric
        self._lock = threading.Lock()
        self._buffer: list[Any] = []
        self._last_flush = time.monotonic()
        self._skipped = 0
        self._checked_keys: set[str] = set()
        self._table_tagged = False
        if run_id:
            self._restore_elo_log()

    def _start(self, experiment: str, run_name: str, artifact_location: str | None) -> Any:
        found = self._client.get_experiment_by_name(experiment)
        if found is None:
            if artifact_location is None:
                artifact_location = default_artifact_location(self._uri, self._run_dir)
            try:
                experiment_id = self._client.create_experiment(
                    experiment, artifact_location=artifact_location
                )
            except mlflow().exceptions.MlflowException:  # created meanwhile elsewhere
                found = self._client.get_experiment_by_name(experiment)
                if found is None:
                    raise
                experiment_id = found.experiment_id
        elif found.lifecycle_stage != "active":
            raise TrackingError(
                f"experiment {experiment!r} at {self._uri} is deleted: restore it or pick another"
            )
        else:
            experiment_id = found.experiment_id
        run = self._client.create_run(experiment_id, run_name=run_name)
        self._history = StatusHistory(self._client, run.info.run_id)
        self._history.record("RUNNING", "started")
        return run

    def end_copied_run(self, run_id: str) -> bool:
        """:func:`.status.end_copied_run` of ``run_id`` (only for a copy's own store)."""
        with self._errors(f"end the copied run {run_id}"):
            return end_copied_run(self._client, run_id, self._run_id)

    def _resume(self, run_id: str) -> Any:
        try:
            run = self._client.get_run(run_id)
        except mlflow().exceptions.MlflowException as e:
            raise TrackingError(f"unknown MLflow run id {run_id!r} at {self._uri}: {e}") from e
        if run.info.lifecycle_stage != "active":
            raise TrackingError(f"MLflow run {run_id!r} at {self._uri} is deleted; cannot resume")
        self._history = StatusHistory(self._client, run_id, run.data.tags)
        self._history.resume(run)
        return self._client.get_run(run_id)

    @contextlib.contextmanager
    def _errors(self, action: str, *, allow_closed: bool = False) -> Iterator[None]:
        """Turn MLflow and storage failures into TrackingError naming the URI and run."""
        if self._closed and not allow_closed:
            raise TrackingError(f"cannot {action}: the tracker of run {self._run_id} is closed")
        try:
            yield
        except (mlflow().exceptions.MlflowException, OSError) as e:
            raise TrackingError(
                f"could not {action} (MLflow {self._uri}, run {self._run_id or '?'}): {e}"
            ) from e

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def tracking_uri(self) -> str:
        return self._uri

    @property
    def experiment_id(self) -> str:
        return str(self._experiment_id)

    @property
    def artifact_uri(self) -> str:
        return self._artifact_uri

    @property
    def skipped_metrics(self) -> int:
        """Metric values dropped because they were NaN or infinite."""
        return self._skipped

    @property
    def elo_log_path(self) -> Path:
        return self._run_dir / elo_log.ELO_LOG_FILE

    def log_params(self, params: Mapping[str, Any], *, on_change: str = "error") -> None:
        """Log a (nested) config as params ``a.b.c``; values are str()-ed and truncated.

        MLflow params are immutable: a key already logged with another value (a resumed run
        with a changed config) raises TrackingError (``on_change="error"``) or is recorded as tag
        ``param_changed.<key>`` (``on_change="tag"``).
        """
        if on_change not in ("error", "tag"):
            raise ValueError(f"on_change must be 'error' or 'tag', not {on_change!r}")
        param = mlflow().entities.Param
        flat = _flatten(params)
        for key in flat:
            _check_name(key, "param")
        with self._errors("log params"):
            logged = self._client.get_run(self._run_id).data.params
            changed = {k: v for k, v in flat.items() if k in logged and logged[k] != v}
            if changed and on_change == "error":
                shown = ", ".join(
                    f"{k}: {logged[k]!r} -> {v!r}" for k, v in list(changed.items())[:5]
                )
                raise TrackingError(f"run {self._run_id} already has other values for {shown}")
            new = [param(k, v) for k, v in flat.items() if k not in logged]
            for start in range(0, len(new), _PARAMS_PER_BATCH):
                self._client.log_batch(self._run_id, params=new[start : start + _PARAMS_PER_BATCH])
        if changed:
            self.set_tags({f"param_changed.{k}": v for k, v in changed.items()})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        tag = mlflow().entities.RunTag
        items = [tag(str(k), str(v)[:_MAX_TAG_VALUE]) for k, v in tags.items()]
        with self._errors("set tags"):
            for start in range(0, len(items), _PARAMS_PER_BATCH):
                self._client.log_batch(self._run_id, tags=items[start : start + _PARAMS_PER_BATCH])

    def log_git(self, repo_dir: str | Path) -> None:
        """Tags git.sha, git.branch, git.dirty; if dirty, ``git diff HEAD`` as git/dirty.diff."""
        repo = Path(repo_dir)
        sha = _git(repo, "rev-parse", "HEAD")
        if sha is None:  # not a repository, no commit yet, or no git binary
            self.set_tags({"git.sha": "unknown"})
            return
        branch = (_git(repo, "rev-parse", "--abbrev-ref", "HEAD") or "unknown").strip()
        diff = _git(repo, "diff", "HEAD") or ""
        dirty = bool(diff.strip())
        self.set_tags(
            {
                "git.sha": sha.strip(),
                "git.branch": branch,
                "git.dirty": "true" if dirty else "false",
                "mlflow.source.git.commit": sha.strip(),  # shown by the MLflow UI
            }
        )
        if dirty:
            with self._errors("log the git diff"):
                self._client.log_text(self._run_id, diff, "git/dirty.diff")

    def log_config(self, yaml_text: str) -> None:
        with self._errors("log the config"):
            self._client.log_text(self._run_id, yaml_text, "config/config.yaml")

    def log_metrics(
        self, metrics: Mapping[str, float], *, step: int, timestamp_ms: int | None = None
    ) -> None:
        """Buffer one point per metric; flushes when the buffer is full or the time is due."""
        if self._closed:
            raise TrackingError(f"cannot log metrics: the tracker of run {self._run_id} is closed")
        stamp = int(time.time() * 1000) if timestamp_ms is None else int(timestamp_ms)
        points = []
        for key, value in metrics.items():
            if key not in self._checked_keys:
                _check_name(key, "metric")
                self._checked_keys.add(key)
            try:
                number = float(value)
            except (TypeError, ValueError) as e:
                raise ValueError(f"metric {key!r} is not a number: {value!r}") from e
            if math.isfinite(number):
                points.append(self._metric_type(key, number, stamp, int(step)))
        with self._lock:
            self._skipped += len(metrics) - len(points)
            self._buffer.extend(points)
            due = len(self._buffer) >= self._max_buffered or (
                time.monotonic() - self._last_flush >= self._flush_every_s
            )
        if due:
            self.flush()

    def flush(self) -> None:
        """Send the buffered points with log_batch (points of a failed call are dropped)."""
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._last_flush = time.monotonic()
        if batch:
            with self._errors(f"log {len(batch)} metric points", allow_closed=True):
                self._client.log_batch(self._run_id, metrics=batch)

    def log_elo_row(self, row: Mapping[str, Any]) -> None:
        """Append a row of the Elo log (JSON-able: version, parent, elo, low, high, games, ...).

        The row goes to ``<run_dir>/elo_log.jsonl`` (appended, fsynced: the source of truth),
        which is re-logged whole as artifact ``elo/elo_log.jsonl`` and as the MLflow table
        ``elo/elo_log.json``; a promoted row also logs metric ``champion_elo`` at step version.
        """
        with self._errors("log an Elo row"):
            elo_log.append_row(self.elo_log_path, row)
            self._client.log_artifact(self._run_id, str(self.elo_log_path), "elo")
            rows = elo_log.read_rows(self.elo_log_path)
            elo_log.log_table(self._client, self._run_id, rows, "elo/elo_log.json",
                              tag=not self._table_tagged)  # fmt: skip
            self._table_tagged = True
        if row.get("promoted") is True and "elo" in row:
            self.log_metrics({"champion_elo": float(row["elo"])}, step=int(row.get("version", 0)))
            self.flush()

    def _restore_elo_log(self) -> None:
        """On resume in a fresh run_dir, fetch the Elo log back from the run's artifacts."""
        if not self.elo_log_path.exists():
            with self._errors("restore the Elo log"):
                elo_log.restore(self._client, self._run_id, self.elo_log_path)

    def log_artifact(self, path: str | Path, artifact_path: str | None = None) -> None:
        """A file (under ``artifact_path``) or a directory (its contents under ``artifact_path``,
        default: the directory's own name)."""
        source = Path(path)
        if not source.exists():
            raise FileNotFoundError(f"cannot log artifact {source}: no such file or directory")
        with self._errors(f"log artifact {source}"):
            if source.is_dir():
                where = source.name if artifact_path is None else artifact_path
                self._client.log_artifacts(self._run_id, str(source), where)
            else:
                self._client.log_artifact(self._run_id, str(source), artifact_path)

    def log_figure_files(self, paths: Sequence[str | Path]) -> None:
        """Plot files (PNG) under ``plots/``; a file of the same name replaces the old one."""
        missing = [str(p) for p in paths if not Path(p).is_file()]
        if missing:
            raise FileNotFoundError(f"cannot log figures, not files: {missing}")
        for path in paths:
            self.log_artifact(path, "plots")

    def log_champion(
        self,
        *,
        version: int,
        checkpoint_dir: str | Path,
        onnx_path: str | Path | None,
        model_name: str,
        description: str = "",
    ) -> ChampionLog:
        """Log a champion's checkpoint files and ONNX under ``champions/v<version>``, register
        that directory as a new version of ``model_name`` (tag ``omega.version``) and point the
        alias ``champion`` at it. No pickle and no MLflow model flavour: consumers load the
        safetensors checkpoint or the ONNX file from the version's source."""
        checkpoint, onnx = Path(checkpoint_dir), None if onnx_path is None else Path(onnx_path)
        if not checkpoint.is_dir():
            raise FileNotFoundError(
                f"champion v{version}: checkpoint {checkpoint} is not a directory"
            )
        if onnx is not None and not onnx.is_file():
            raise FileNotFoundError(f"champion v{version}: ONNX file {onnx} does not exist")
        if not model_name:
            raise ValueError("model_name must be a non-empty registered model name")
        where = f"champions/v{int(version)}"
        with self._errors(f"log champion v{version}"):
            self._client.log_artifacts(self._run_id, str(checkpoint), where)
            if onnx is not None:
                self._client.log_artifact(self._run_id, str(onnx), where)
        source = f"{self._artifact_uri.rstrip('/')}/{where}"
        with self._errors(f"register champion v{version} as model {model_name!r}"):
            registry_version = register_version(
                self._client, model_name, source, run_id=self._run_id, version=int(version),
                description=description,
            )  # fmt: skip
        return ChampionLog(int(version), model_name, registry_version, source)

    def close(self, status: str = "FINISHED") -> None:
        """Flush, then end the run with ``status`` (FINISHED, FAILED or KILLED). Idempotent."""
        if status not in RUN_STATUSES:
            raise ValueError(f"run status must be one of {RUN_STATUSES}, not {status!r}")
        if self._closed:
            return
        self._closed = True
        try:
            self.flush()
        finally:
            with self._errors(f"end the run as {status}", allow_closed=True):
                self._history.record(status, "ended")
                self._client.set_terminated(self._run_id, status)

    def __enter__(self) -> Tracker:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close("FINISHED")
            return
        status = "KILLED" if issubclass(exc_type, KeyboardInterrupt) else "FAILED"
        try:
            self.close(status)
        except TrackingError as e:  # keep the exception that ended the run, not this one
            _log.warning("could not mark MLflow run %s %s: %s", self._run_id, status, e)
