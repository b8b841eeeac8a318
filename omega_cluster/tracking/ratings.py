"""A champion's anchored ratings as MLflow metrics (logged at step = its version).

* ``rating/<objective>/<network|search>`` with ``_low`` and ``_high``: the headline ratings, one
  per objective and player kind, on the anchors' Elo scale with their 95% interval;
* ``anchor/<anchor>/<table>/<network|search>/score`` and ``.../fair_share``: the diagnostics per
  table (``<table>`` the slice key with ``=`` and ``,`` as ``_``, e.g.
  ``players_4_objective_points``);
* ``exploitability/<network|search>``: the champion's exploitability (NashConv / 2) in a game
  small enough to solve (two-player Kuhn and Leduc poker, Goofspiel of at most 4 cards).
"""

from __future__ import annotations

from omega_cluster.eval.anchors import AnchorReport

__all__ = ["rating_metrics", "slug"]


def slug(text: str) -> str:
    """``text`` with every character MLflow refuses in a metric name as ``_``."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


def rating_metrics(report: AnchorReport) -> dict[str, float]:
    """The metrics of one champion's anchor report (module docstring)."""
    metrics: dict[str, float] = {}
    for rating in report.ratings:
        key, fit = f"rating/{slug(rating.objective)}/{rating.kind}", rating.fit
        metrics.update({key: fit.rating, f"{key}_low": fit.low, f"{key}_high": fit.high})
    for r in report.results:
        key = f"anchor/{slug(r.anchor)}/{slug(r.table)}/{r.kind}"
        metrics.update({f"{key}/score": r.score, f"{key}/fair_share": r.fair_share})
    for kind, value in report.exploitability:
        metrics[f"exploitability/{kind}"] = value
    return metrics
