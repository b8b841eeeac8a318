"""MLflow tracking for a training run: the only module of omega_cluster that imports mlflow.

One :class:`Tracker` is one MLflow run. The service's driver (``omega_cluster.cluster``) opens it
at start, logs the resolved config (params + ``config/config.yaml``), the code version (git SHA,
branch, dirty diff: STYLE habit 11, as KataGo's self-play loop archives ``git diff`` per run),
throughput and learner metrics, gate results, the Elo log and plots from ``omega_cluster.eval``,
and each champion's checkpoint + ONNX, registered in the MLflow Model Registry under the alias
``champion``. Resuming passes the run id back in and continues the same run.

Design points:

* Explicit :class:`mlflow.MlflowClient` calls with the run id, never the fluent
  ``mlflow.start_run`` global state, so the tracker is safe in a process that does other things.
* Metrics are buffered and sent with ``log_batch`` (measured: a single ``log_metric`` costs
  1-55 ms against a server, a ``log_batch`` of 1,000 points 0.07-0.23 s). The buffer flushes when
  it holds ``max_buffered`` points or ``flush_every_s`` has passed, checked on each call; NaN/inf
  values are skipped and counted (:attr:`Tracker.skipped_metrics`), never fatal.
* Fail fast: :func:`check_tracking_uri` probes an http(s) server with a short timeout (mlflow's own
  client retries for minutes) and checks that a local store's directory is writable, so a bad URI
  fails at start, not an hour into a run.
* The default store is ``sqlite:///<run_dir>/mlflow.db`` (MLflow 3 refuses the plain file store
  unless ``MLFLOW_ALLOW_FILE_STORE=true``), artifacts under ``<run_dir>/mlartifacts``.
* Champions are registered without pickle and without a model flavour: the registered version's
  source is the run's ``champions/v<version>`` artifact directory (safetensors + JSON + ONNX).
* mlflow is imported lazily (it takes seconds), so ``import omega_cluster.tracking`` is cheap.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import math
import os
import re
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = [
    "CHAMPION_ALIAS",
    "ChampionLog",
    "Tracker",
    "TrackingError",
    "check_tracking_uri",
    "default_tracking_uri",
    "find_run_dir",
    "read_champion",
]

CHAMPION_ALIAS = "champion"
ELO_LOG_FILE = "elo_log.jsonl"
RUN_STATUSES = ("FINISHED", "FAILED", "KILLED")
# Limits of mlflow.utils.validation (MAX_PARAM_VAL_LENGTH, MAX_TAG_VAL_LENGTH, MAX_ENTITY_KEY_LENGTH,
# MAX_PARAMS_TAGS_PER_BATCH); values longer than these are truncated rather than rejected.
_MAX_PARAM_VALUE, _MAX_TAG_VALUE, _MAX_KEY, _PARAMS_PER_BATCH = 6000, 8000, 250, 100
_NAME = re.compile(r"^[/\w.\- :]*$")  # mlflow's rule for metric and param names (POSIX)
_LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"  # mlflow.utils.mlflow_tags: lists table artifacts
_log = logging.getLogger(__name__)


class TrackingError(RuntimeError):
    """The tracking store cannot be used: unreachable URI, unknown run id, a failed MLflow call."""


@dataclass(frozen=True)
class ChampionLog:
    """What :meth:`Tracker.log_champion` logged and registered."""

    version: int  # omega_cluster's champion version (the Elo log's ``version``)
    model_name: str  # registered model name in the MLflow Model Registry
    registry_version: str  # the registry's version number of this champion (as MLflow returns it)
    artifact_uri: (
        str  # the run's ``champions/v<version>`` artifact directory (the version's source)
    )


def default_tracking_uri(run_dir: str | Path) -> str:
    """The default store of a run: ``sqlite:///<absolute run_dir>/mlflow.db``."""
    return f"sqlite:///{Path(run_dir).resolve().as_posix()}/mlflow.db"


def check_tracking_uri(uri: str, *, timeout_s: float = 5.0) -> None:
    """Raise :class:`TrackingError` (naming the URI and the cause) if ``uri`` cannot be used.

    http(s): GET ``<uri>/health`` with ``timeout_s`` and no retries (then the REST API, for a
    server behind a proxy without ``/health``). sqlite: the database's directory exists or can be
    created, and is writable. file / plain path: MLflow 3 refuses it unless
    ``MLFLOW_ALLOW_FILE_STORE=true``, then the directory must be writable. Other schemes
    (postgresql, mysql, databricks) are left to MLflow, which fails on the first call.
    """
    scheme = urllib.parse.urlparse(uri).scheme.lower()
    if scheme in ("http", "https"):
        _probe_http(uri, timeout_s)
    elif scheme == "sqlite":
        path = uri[len("sqlite:///") :].split("?", 1)[0] if uri.startswith("sqlite:///") else ""
        if path and path != ":memory:":
            _check_writable_dir(Path(path).parent, uri)
    elif scheme in ("", "file") or len(scheme) == 1:  # one letter: a Windows drive
        if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").lower() not in ("true", "1"):
            raise TrackingError(
                f"tracking URI {uri!r} is an MLflow file store, which MLflow 3 refuses (maintenance "
                "mode): use a database store such as 'sqlite:///<dir>/mlflow.db' (the default), "
                "an http(s):// server, or set MLFLOW_ALLOW_FILE_STORE=true"
            )
        local = urllib.parse.urlparse(uri).path if scheme == "file" else uri
        _check_writable_dir(Path(urllib.parse.unquote(local)), uri)


def _check_writable_dir(directory: Path, uri: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TrackingError(
            f"tracking URI {uri!r}: cannot create directory {directory}: {e}"
        ) from e
    if not os.access(directory, os.W_OK | os.X_OK):
        raise TrackingError(f"tracking URI {uri!r}: directory {directory} is not writable")


def _probe_http(uri: str, timeout_s: float) -> None:
    base = uri.rstrip("/")
    context = _ssl_context() if uri.lower().startswith("https") else None
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=timeout_s, context=context):
            return
    except urllib.error.HTTPError:
        pass  # the server answered, but not on /health: ask the REST API below
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise TrackingError(
            f"MLflow tracking server {uri!r} is unreachable: {reason} "
            f"(GET {base}/health, timeout {timeout_s} s)"
        ) from e
    api = f"{base}/api/2.0/mlflow/experiments/search?max_results=1"
    request = urllib.request.Request(api, headers=_auth_headers())
    try:
        with urllib.request.urlopen(request, timeout=timeout_s, context=context):
            return
    except urllib.error.HTTPError as e:
        if e.code in (401, 403, 404):
            what = "refused our credentials" if e.code != 404 else "is not an MLflow server"
            raise TrackingError(f"{uri!r} {what}: HTTP {e.code} on GET {api}") from e
    except (urllib.error.URLError, OSError) as e:
        raise TrackingError(f"MLflow tracking server {uri!r} is unreachable: {e}") from e


def _ssl_context() -> ssl.SSLContext:
    # the same switches mlflow's own HTTP client reads
    if os.environ.get("MLFLOW_TRACKING_INSECURE_TLS", "").lower() in ("true", "1"):
        return ssl._create_unverified_context()
    return ssl.create_default_context(cafile=os.environ.get("MLFLOW_TRACKING_SERVER_CERT_PATH"))


def _auth_headers() -> dict[str, str]:
    if token := os.environ.get("MLFLOW_TRACKING_TOKEN"):
        return {"Authorization": f"Bearer {token}"}
    user, password = (
        os.environ.get("MLFLOW_TRACKING_USERNAME"),
        os.environ.get("MLFLOW_TRACKING_PASSWORD"),
    )
    if user and password:
        return {
            "Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        }
    return {}


def _quiet_mlflow_logging() -> None:
    # sqlite stores run their schema migrations on first use and announce them at INFO
    for name in ("alembic", "mlflow.store.db.utils"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _client(uri: str) -> Any:
    _quiet_mlflow_logging()
    # MLflow 3 sends usage telemetry from a background thread (and waits on it at exit); a
    # training service should not phone home unless its user asks: opt out unless set explicitly.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow import MlflowClient

    # the registry lives in the same store (MLflow would otherwise guess from the environment)
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


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

    ``uri`` defaults to :func:`default_tracking_uri` of ``run_dir``; for local stores (sqlite,
    file) a new experiment keeps its artifacts in ``<run_dir>/mlartifacts`` unless
    ``artifact_location`` says otherwise (an existing experiment keeps its own location).
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
            self._client = _client(self._uri)  # a new sqlite store migrates its schema here
            if run_id:
                run = self._resume(run_id)
            else:
                run = self._start(experiment, run_name or self._run_dir.name, artifact_location)
        self._run_id, self._experiment_id = run.info.run_id, run.info.experiment_id
        self._artifact_uri: str = run.info.artifact_uri
        from mlflow.entities import Metric

        self._metric_type = Metric
        self._lock = threading.Lock()
        self._buffer: list[Any] = []
        self._last_flush = time.monotonic()
        self._skipped = 0
        self._checked_keys: set[str] = set()
        self._table_tagged = False
        if run_id:
            self._restore_elo_log()

    def _start(self, experiment: str, run_name: str, artifact_location: str | None) -> Any:
        from mlflow.exceptions import MlflowException

        found = self._client.get_experiment_by_name(experiment)
        if found is None:
            local = urllib.parse.urlparse(self._uri).scheme.lower() in ("sqlite", "file", "")
            if artifact_location is None and local:
                artifact_location = (self._run_dir / "mlartifacts").as_uri()
            try:
                experiment_id = self._client.create_experiment(
                    experiment, artifact_location=artifact_location
                )
            except MlflowException:  # created meanwhile by another process
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
        return self._client.create_run(experiment_id, run_name=run_name)

    def _resume(self, run_id: str) -> Any:
        from mlflow.exceptions import MlflowException

        try:
            run = self._client.get_run(run_id)
        except MlflowException as e:
            raise TrackingError(f"unknown MLflow run id {run_id!r} at {self._uri}: {e}") from e
        if run.info.lifecycle_stage != "active":
            raise TrackingError(f"MLflow run {run_id!r} at {self._uri} is deleted; cannot resume")
        self._client.update_run(run_id, status="RUNNING")
        return self._client.get_run(run_id)

    @contextlib.contextmanager
    def _errors(self, action: str, *, allow_closed: bool = False) -> Iterator[None]:
        """Turn MLflow and storage failures into TrackingError naming the URI and run."""
        if self._closed and not allow_closed:
            raise TrackingError(f"cannot {action}: the tracker of run {self._run_id} is closed")
        from mlflow.exceptions import MlflowException

        try:
            yield
        except (MlflowException, OSError) as e:
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
        return self._run_dir / ELO_LOG_FILE

    def log_params(self, params: Mapping[str, Any], *, on_change: str = "error") -> None:
        """Log a (nested) config as params ``a.b.c``; values are str()-ed and truncated.

        MLflow params are immutable: a key already logged with another value (a resumed run
        with a changed config) raises TrackingError (``on_change="error"``) or is recorded as tag
        ``param_changed.<key>`` (``on_change="tag"``).
        """
        if on_change not in ("error", "tag"):
            raise ValueError(f"on_change must be 'error' or 'tag', not {on_change!r}")
        from mlflow.entities import Param

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
            new = [Param(k, v) for k, v in flat.items() if k not in logged]
            for start in range(0, len(new), _PARAMS_PER_BATCH):
                self._client.log_batch(self._run_id, params=new[start : start + _PARAMS_PER_BATCH])
        if changed:
            self.set_tags({f"param_changed.{k}": v for k, v in changed.items()})

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        from mlflow.entities import RunTag

        items = [RunTag(str(k), str(v)[:_MAX_TAG_VALUE]) for k, v in tags.items()]
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
        try:
            line = json.dumps(dict(row))
        except (TypeError, ValueError) as e:
            raise ValueError(f"Elo row is not JSON-serialisable: {e}: {row!r}") from e
        with self._errors("log an Elo row"):
            with self.elo_log_path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
                f.flush()
                os.fsync(f.fileno())
            self._client.log_artifact(self._run_id, str(self.elo_log_path), "elo")
            self._log_table(self._read_elo_rows(), "elo/elo_log.json")
        if row.get("promoted") is True and "elo" in row:
            self.log_metrics({"champion_elo": float(row["elo"])}, step=int(row.get("version", 0)))
            self.flush()

    def _read_elo_rows(self) -> list[dict[str, Any]]:
        text = self.elo_log_path.read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def _log_table(self, rows: list[dict[str, Any]], artifact_file: str) -> None:
        # MlflowClient.log_table appends to an existing artifact (and needs pandas, not installed
        # here), so the whole table is rewritten in its format (pandas' orient="split") and
        # registered under the same run tag the MLflow UI reads to list tables.
        columns: dict[str, None] = {}
        for row in rows:
            columns.update(dict.fromkeys(row))
        table = {"columns": list(columns), "data": [[r.get(c) for c in columns] for r in rows]}
        directory, name = artifact_file.rsplit("/", 1)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / name
            path.write_text(json.dumps(table), encoding="utf-8")
            self._client.log_artifact(self._run_id, str(path), directory)
        if not self._table_tagged:
            tags = self._client.get_run(self._run_id).data.tags
            listed = json.loads(tags.get(_LOGGED_ARTIFACTS_TAG, "[]"))
            entry = {"path": artifact_file, "type": "table"}
            if entry not in listed:
                self._client.set_tag(
                    self._run_id, _LOGGED_ARTIFACTS_TAG, json.dumps([*listed, entry])
                )
            self._table_tagged = True

    def _restore_elo_log(self) -> None:
        """On resume in a fresh run_dir, fetch the Elo log back from the run's artifacts."""
        if self.elo_log_path.exists():
            return
        with self._errors("restore the Elo log"):
            names = [a.path for a in self._client.list_artifacts(self._run_id, "elo")]
            if f"elo/{ELO_LOG_FILE}" in names:
                with tempfile.TemporaryDirectory() as tmp:
                    local = self._client.download_artifacts(
                        self._run_id, f"elo/{ELO_LOG_FILE}", tmp
                    )
                    self.elo_log_path.write_bytes(Path(local).read_bytes())

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
            self._ensure_registered_model(model_name)
            model_version = self._client.create_model_version(
                model_name,
                source,
                run_id=self._run_id,
                tags={"omega.version": str(int(version))},
                description=description or None,
            )
            registry_version = str(model_version.version)
            self._client.set_registered_model_alias(model_name, CHAMPION_ALIAS, registry_version)
        return ChampionLog(int(version), model_name, registry_version, source)

    def _ensure_registered_model(self, name: str) -> None:
        from mlflow.exceptions import MlflowException

        try:
            self._client.get_registered_model(name)
        except MlflowException:
            try:
                self._client.create_registered_model(name)
            except MlflowException:  # created meanwhile by another process
                self._client.get_registered_model(name)

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


def read_champion(uri: str, model_name: str) -> tuple[str, dict[str, str]]:
    """(source URI, tags) of the model version that the alias ``champion`` points to."""
    check_tracking_uri(uri)
    from mlflow.exceptions import MlflowException

    try:
        version = _client(uri).get_model_version_by_alias(model_name, CHAMPION_ALIAS)
    except MlflowException as e:
        raise TrackingError(
            f"no {CHAMPION_ALIAS!r} alias on registered model {model_name!r} at {uri}: {e}"
        ) from e
    return str(version.source), dict(version.tags)


RUN_DIR_TAG = "omega.run_dir"  # the tag the service sets on every run: where its state lives


def find_run_dir(uri: str, run_id: str) -> Path:
    """The run directory of MLflow run ``run_id`` (its ``omega.run_dir`` tag), to resume it."""
    check_tracking_uri(uri)
    from mlflow.exceptions import MlflowException

    try:
        run = _client(uri).get_run(run_id)
    except MlflowException as e:
        raise TrackingError(f"no MLflow run {run_id!r} at {uri}: {e}") from e
    directory = run.data.tags.get(RUN_DIR_TAG)
    if not directory:
        raise TrackingError(
            f"MLflow run {run_id} at {uri} has no {RUN_DIR_TAG!r} tag: it was not written by "
            "omega-cluster train; resume from its run directory instead"
        )
    return Path(directory)
