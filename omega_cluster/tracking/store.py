"""Where MLflow keeps a run: the store's URI checked before use, the client, and the look-ups
by run id and by the ``champion`` alias.

* Fail fast: :func:`check_tracking_uri` probes an http(s) server with a short timeout (mlflow's own
  client retries for minutes) and checks that a local store's directory is writable, so a bad URI
  fails at start, not an hour into a run.
* The default store is ``sqlite:///<run_dir>/mlflow.db`` (MLflow 3 refuses the plain file store
  unless ``MLFLOW_ALLOW_FILE_STORE=true``).
* mlflow itself is imported on first use (:func:`mlflow`): it takes seconds, and
  ``import omega_cluster.tracking`` stays cheap (tested).
"""

from __future__ import annotations

import base64
import importlib.metadata
import logging
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from omega_cluster.errors import UserError

__all__ = [
    "CHAMPION_ALIAS",
    "RUN_DIR_TAG",
    "ChampionLog",
    "TrackingError",
    "check_tracking_uri",
    "client",
    "default_artifact_location",
    "default_tracking_uri",
    "find_run_dir",
    "mlflow",
    "read_champion",
    "register_version",
]

CHAMPION_ALIAS = "champion"  # the registered model's alias that points at the current champion
RUN_DIR_TAG = "omega.run_dir"  # the tag the service sets on every run: where its state lives


class TrackingError(UserError, RuntimeError):
    """The tracking store cannot be used: unreachable URI, unknown run id, a failed MLflow call."""


def mlflow() -> ModuleType:
    """The mlflow package with its ``entities`` and ``exceptions``, imported on first use."""
    import mlflow.entities  # lazy: mlflow takes seconds to import (module docstring)
    import mlflow.exceptions

    return mlflow


def default_tracking_uri(run_dir: str | Path) -> str:
    """The default store of a run: ``sqlite:///<absolute run_dir>/mlflow.db``."""
    return f"sqlite:///{Path(run_dir).resolve().as_posix()}/mlflow.db"


def default_artifact_location(uri: str, run_dir: str | Path) -> str | None:
    """Where a new experiment of store ``uri`` keeps its artifacts: in the run's own store
    ``<run_dir>/mlartifacts``, in another sqlite store beside its database (never inside the
    directory of whichever run created the experiment); None: MLflow's default (a file store
    inside itself, a server where it is configured)."""
    if uri == default_tracking_uri(run_dir):
        return (Path(run_dir).resolve() / "mlartifacts").as_uri()
    if uri.startswith("sqlite:///") and ":memory:" not in uri:
        db = Path(urllib.parse.unquote(uri[len("sqlite:///") :].split("?", 1)[0]))
        return (db.parent / "mlartifacts").as_uri()
    return None


def check_tracking_uri(uri: str, *, timeout_s: float = 5.0) -> None:
    """Raise :class:`TrackingError` (naming the URI and the cause) if ``uri`` cannot be used.

    http(s): GET ``<uri>/health`` with ``timeout_s`` and no retries (then the REST API, for a
    server behind a proxy without ``/health``). sqlite: the database's directory exists or can be
    created, and is writable. file / plain path: MLflow 3 refuses it unless
    ``MLFLOW_ALLOW_FILE_STORE=true``, then the directory must be writable. The other schemes
    MLflow has a store for (postgresql, mysql, mssql, each with an optional ``+driver``;
    databricks; a plugin's, from the ``mlflow.tracking_store`` entry points) are left to MLflow,
    which fails on the first call; any other scheme is refused here.
    """
    scheme = urllib.parse.urlparse(uri).scheme.lower()
    if uri == "databricks":  # MLflow's name for the workspace of the default Databricks profile
        return
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
    elif scheme.split("+", 1)[0] not in _SERVER_SCHEMES and scheme not in _plugin_schemes():
        parts = urllib.parse.urlsplit(uri)
        shown = f"{scheme}://{parts.hostname or ''}{parts.path}"  # no credentials
        raise TrackingError(
            f"tracking URI {shown!r}: MLflow has no tracking store for scheme {scheme!r}; use "
            "'sqlite:///<dir>/mlflow.db' (the default), an http(s):// server, or a database "
            f"({', '.join(s + '://' for s in sorted(_SERVER_SCHEMES))})"
        )


# schemes of the stores MLflow itself has, besides http(s), sqlite and the file store
_SERVER_SCHEMES = frozenset({"postgresql", "mysql", "mssql", "databricks"})


def _plugin_schemes() -> set[str]:
    """Schemes that installed MLflow plugins register a tracking store for."""
    return {ep.name for ep in importlib.metadata.entry_points(group="mlflow.tracking_store")}


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


def client(uri: str) -> Any:
    """An :class:`mlflow.MlflowClient` on ``uri`` (tracking and model registry in one store).

    Explicit client calls with a run id, never the fluent ``mlflow.start_run`` global state, so
    the tracker is safe in a process that does other things.
    """
    _quiet_mlflow_logging()
    # MLflow 3 sends usage telemetry from a background thread (and waits on it at exit); a
    # training service should not phone home unless its user asks: opt out unless set explicitly.
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    # the registry lives in the same store (MLflow would otherwise guess from the environment)
    return mlflow().MlflowClient(tracking_uri=uri, registry_uri=uri)


def read_champion(uri: str, model_name: str) -> tuple[str, dict[str, str]]:
    """(source URI, tags) of the model version that the alias ``champion`` points to."""
    check_tracking_uri(uri)
    try:
        version = client(uri).get_model_version_by_alias(model_name, CHAMPION_ALIAS)
    except mlflow().exceptions.MlflowException as e:
        raise TrackingError(
            f"no {CHAMPION_ALIAS!r} alias on registered model {model_name!r} at {uri}: {e}"
        ) from e
    return str(version.source), dict(version.tags)


def find_run_dir(uri: str, run_id: str) -> Path:
    """The run directory of MLflow run ``run_id`` (its ``omega.run_dir`` tag), to resume it."""
    check_tracking_uri(uri)
    try:
        run = client(uri).get_run(run_id)
    except mlflow().exceptions.MlflowException as e:
        raise TrackingError(f"no MLflow run {run_id!r} at {uri}: {e}") from e
    directory = run.data.tags.get(RUN_DIR_TAG)
    if not directory:
        raise TrackingError(
            f"MLflow run {run_id} at {uri} has no {RUN_DIR_TAG!r} tag: it was not written by "
            "omega-cluster train; resume from its run directory instead"
        )
    return Path(directory)


@dataclass(frozen=True)
class ChampionLog:
    """What :meth:`Tracker.log_champion` logged and registered."""

    version: int  # omega_cluster's champion version (the Elo log's ``version``)
    model_name: str  # registered model name in the MLflow Model Registry
    registry_version: str  # the registry's version number of this champion (as MLflow returns it)
    artifact_uri: (
        str  # the run's ``champions/v<version>`` artifact directory (the version's source)
    )


def register_version(
    client: Any, model_name: str, source: str, *, run_id: str, version: int, description: str
) -> str:
    """Register ``source`` as a new version of ``model_name`` (created if missing; tag
    ``omega.version``) and point the ``champion`` alias at it; returns the registry's version."""
    errors = mlflow().exceptions.MlflowException
    try:
        client.get_registered_model(model_name)
    except errors:
        try:
            client.create_registered_model(model_name)
        except errors:  # created meanwhile by another process
            client.get_registered_model(model_name)
    model_version = client.create_model_version(
        model_name,
        source,
        run_id=run_id,
        tags={"omega.version": str(int(version))},
        description=description or None,
    )
    registry_version = str(model_version.version)
    client.set_registered_model_alias(model_name, CHAMPION_ALIAS, registry_version)
    return registry_version


def read_run_tags(uri: str, run_id: str, prefix: str = "") -> dict[str, str]:
    """The tags of MLflow run ``run_id`` whose names start with ``prefix`` (``"git."``: the code
    version :meth:`Tracker.log_git` recorded), read without starting a run."""
    check_tracking_uri(uri)
    try:
        run = client(uri).get_run(run_id)
    except mlflow().exceptions.MlflowException as e:
        raise TrackingError(f"no MLflow run {run_id!r} at {uri}: {e}") from e
    return {k: str(v) for k, v in run.data.tags.items() if k.startswith(prefix)}
