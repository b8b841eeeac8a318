"""The driver's retry rule: how long to wait before a failed call is made again, and when to
give up.

A call whose actor died or restarts is made again after a pause that doubles with each failure
in a row of its kind (:func:`backoff`: :data:`BACKOFF_S`, twice that, ... at most
:data:`BACKOFF_MAX_S`); :data:`MAX_FAILURES` failures in a row stop the run with
:class:`RunFailed`, whose message names the kind of call and the last error (:func:`brief`).
With the defaults a call that can never succeed stops the run after seconds of pauses, not
minutes.
"""

from __future__ import annotations

from omega_cluster.errors import UserError

__all__ = ["BACKOFF_MAX_S", "BACKOFF_S", "MAX_FAILURES", "RunFailed", "backoff", "brief"]

MAX_FAILURES = 6  # failures in a row of one kind of call that stop the run
BACKOFF_S = 0.5  # pause before the first retry (time for the actor to restart), then doubled
BACKOFF_MAX_S = 8.0  # the longest pause between tries


class RunFailed(UserError, RuntimeError):
    """One kind of call failed :data:`MAX_FAILURES` times in a row: the run stopped (what was
    written is kept; ``run.resume`` continues once the cause is fixed)."""


def backoff(failures: int) -> float:
    """Seconds to wait after the ``failures``-th failure in a row."""
    return min(BACKOFF_S * 2.0 ** (failures - 1), BACKOFF_MAX_S)


def brief(err: BaseException) -> str:
    """An error's message in one short line: its first line and, for a message with a
    traceback inside (a remote error), its last (the original exception)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    if not lines:
        return type(err).__name__
    text = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
    return " ".join(text.split())[:400]
