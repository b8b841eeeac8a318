"""A run's status history in MLflow: every status change a tracker makes, kept in one tag.

MLflow keeps only a run's current status. The tag ``omega.status_history`` keeps the changes as a
JSON list of ``[UTC time, status, note]`` (the newest :data:`KEPT`): started, resumed, ended, and
the KILLED a resume writes for a run it finds RUNNING — left so by a driver that died (SIGKILL, a
lost machine) — before it sets it RUNNING again (tag ``omega.killed_detected``: when;
``omega.resumes``: how many resumes).
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

from omega_cluster.tracking.store import mlflow

__all__ = ["KEPT", "STATUS_HISTORY_TAG", "StatusHistory", "end_copied_run"]

STATUS_HISTORY_TAG = "omega.status_history"
KEPT = 60  # entries kept (a tag holds at most 8000 characters)


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class StatusHistory:
    """The status history of one MLflow run, written through ``client``."""

    def __init__(self, client: Any, run_id: str, tags: dict[str, str] | None = None) -> None:
        self.client, self.run_id = client, run_id
        self.entries: list[list[str]] = []
        with contextlib.suppress(KeyError, ValueError, TypeError):  # absent, or not ours
            self.entries = [list(map(str, e)) for e in json.loads((tags or {})[STATUS_HISTORY_TAG])]

    def record(self, status: str, note: str, when: str | None = None) -> None:
        self.entries = [*self.entries, [when or utc_now(), status, note]][-KEPT:]
        text = json.dumps(self.entries, separators=(",", ":"))
        self.client.set_tag(self.run_id, STATUS_HISTORY_TAG, text)

    def resume(self, run: Any) -> None:
        """``run`` (an MLflow Run) goes on: KILLED first if it was left RUNNING, then RUNNING."""
        tags = run.data.tags
        if run.info.status == "RUNNING":  # its driver died without ending it
            now = utc_now()
            self.client.set_terminated(self.run_id, "KILLED")
            self.client.set_tag(self.run_id, "omega.killed_detected", now)
            self.record("KILLED", "found RUNNING on resume: its driver died", now)
        resumes = int(tags.get("omega.resumes", "0") or 0) + 1
        self.client.update_run(self.run_id, status="RUNNING")
        self.client.set_tag(self.run_id, "omega.resumes", str(resumes))
        self.record("RUNNING", f"resume {resumes}")


def end_copied_run(client: Any, run_id: str, successor: str) -> bool:
    """In a copied run directory's own store, the copied MLflow run ``run_id`` that was left
    RUNNING (the copy was taken from a live or killed run) ends KILLED, noting the new run
    ``successor`` that continues it. Only for the copy's own store: in a shared store that run
    is the original's, and its driver may be alive. Returns whether it was ended."""
    try:
        run = client.get_run(run_id)
    except mlflow().exceptions.MlflowException:  # not in this store
        return False
    if run.info.status != "RUNNING":
        return False
    client.set_terminated(run_id, "KILLED")
    StatusHistory(client, run_id, run.data.tags).record(
        "KILLED", f"copied; continued as {successor}"
    )
    return True
