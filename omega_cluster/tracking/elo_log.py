"""The run's Elo log in MLflow: a JSONL file in the run directory (the source of truth,
appended and fsynced), re-logged whole as an artifact and as an MLflow table after each row, and
fetched back from the artifacts when a run resumes in a fresh directory."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["ELO_LOG_FILE", "append_row", "log_table", "read_rows", "restore"]

ELO_LOG_FILE = "elo_log.jsonl"
_LOGGED_ARTIFACTS_TAG = "mlflow.loggedArtifacts"  # mlflow.utils.mlflow_tags: lists table artifacts


def append_row(path: Path, row: Mapping[str, Any]) -> None:
    """One JSON line at the end of ``path``, on disk before this returns."""
    try:
        line = json.dumps(dict(row))
    except (TypeError, ValueError) as e:
        raise ValueError(f"Elo row is not JSON-serialisable: {e}: {row!r}") from e
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_rows(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def log_table(
    client: Any, run_id: str, rows: list[dict[str, Any]], artifact_file: str, *, tag: bool
) -> None:
    """``rows`` as the MLflow table ``artifact_file``, replacing the previous one; ``tag``: also
    list it in the run's tag of table artifacts (once per run is enough).

    ``MlflowClient.log_table`` appends to an existing artifact (and needs pandas, not installed
    here), so the whole table is rewritten in its format (pandas' orient="split") and registered
    under the same run tag the MLflow UI reads to list tables.
    """
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    table = {"columns": list(columns), "data": [[r.get(c) for c in columns] for r in rows]}
    directory, name = artifact_file.rsplit("/", 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(json.dumps(table), encoding="utf-8")
        client.log_artifact(run_id, str(path), directory)
    if tag:
        tags = client.get_run(run_id).data.tags
        listed = json.loads(tags.get(_LOGGED_ARTIFACTS_TAG, "[]"))
        entry = {"path": artifact_file, "type": "table"}
        if entry not in listed:
            client.set_tag(run_id, _LOGGED_ARTIFACTS_TAG, json.dumps([*listed, entry]))


def restore(client: Any, run_id: str, path: Path) -> None:
    """Fetch the run's logged Elo log back to ``path`` if the run has one."""
    names = [a.path for a in client.list_artifacts(run_id, "elo")]
    if f"elo/{ELO_LOG_FILE}" in names:
        with tempfile.TemporaryDirectory() as tmp:
            local = client.download_artifacts(run_id, f"elo/{ELO_LOG_FILE}", tmp)
            path.write_bytes(Path(local).read_bytes())
