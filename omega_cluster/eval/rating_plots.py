"""Plots of a run's ratings: the anchored ratings (the headline) beside the chained Elo, and the
champions' anchor scores by table.

Both read plain rows, as a run keeps them: the Elo log's dicts (the chain's rows ``promoted``,
the anchored ratings' rows ``rating: "anchored"`` with ``objective`` and ``player``) and the
per-table anchor rows (``version``, ``table``, ``anchor``, ``player``, ``score``) — see
:mod:`omega_cluster.pipeline.run_state`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omega_cluster.eval.matches import BenchError
from omega_cluster.eval.report import DPI, _save

__all__ = ["plot_anchor_slices", "plot_exploitability", "plot_ratings"]


def plot_ratings(
    rows: Sequence[Mapping[str, Any]],
    path: str | Path,
    *,
    anchors: Mapping[str, float] | None = None,
) -> Path:
    """Left, the headline: each champion's anchored rating per objective and player kind with
    its interval as a band, against its version, the anchors' fixed ratings as dashed lines.
    Right, apart and labelled so: the chained Elo (the sum of gate gaps, not anchored)."""
    from matplotlib.figure import Figure  # lazy: as in omega_cluster.eval.report

    rated = [r for r in rows if r.get("rating") == "anchored"]
    chain = [r for r in rows if r.get("promoted") and "rating" not in r]
    if not rated and not chain:
        raise BenchError("plot_ratings: no anchored rating and no promoted champion")
    figure = Figure(figsize=(11.0, 4.4), dpi=DPI, layout="constrained")
    left, right = figure.subplots(1, 2)
    curves: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in sorted(rated, key=lambda r: int(r["version"])):
        curves.setdefault((str(r["objective"]), str(r["player"])), []).append(r)
    for (objective, player), points in curves.items():
        x = [int(p["version"]) for p in points]
        style = "-" if player == "network" else "--"
        (line,) = left.plot(x, [p["elo"] for p in points], style, marker="o",
                            label=f"{objective} · {player}")  # fmt: skip
        left.fill_between(x, [p["low"] for p in points], [p["high"] for p in points],
                          color=line.get_color(), alpha=0.15)  # fmt: skip
    for name, value in (anchors or {}).items():
        left.axhline(value, linestyle=":", linewidth=1, color="grey")
        left.text(0.01, value, name, transform=left.get_yaxis_transform(), va="bottom", fontsize=8)
    left.set_title("anchored rating (95% profile-likelihood interval)")
    left.set_xlabel("champion version")
    left.set_ylabel("Elo on the anchors' scale")
    if curves:
        left.legend(fontsize=8)
    if chain:
        x = [int(r["version"]) for r in chain]
        elo = [float(r["elo"]) for r in chain]
        yerr = [[max(0.0, e - float(r["low"])) for e, r in zip(elo, chain, strict=True)],
                [max(0.0, float(r["high"]) - e) for e, r in zip(elo, chain, strict=True)]]  # fmt: skip
        right.errorbar(x, elo, yerr=yerr, fmt="o-", capsize=3, color="grey")
    right.set_title("chained Elo (sum of gate gaps, not anchored)")
    right.set_xlabel("champion version")
    from matplotlib.ticker import MaxNLocator

    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # versions are whole numbers
        lo, hi = ax.get_xlim()
        if hi - lo < 2.0:  # one version: an axis two versions wide, whole ticks
            ax.set_xlim((lo + hi) / 2 - 1.0, (lo + hi) / 2 + 1.0)
    return _save(figure, path)


def plot_anchor_slices(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """A heatmap of the champion's score (its head-to-head against the anchor seats: 0.5 is
    par at any table size) by (table, anchor, player kind) × champion version."""
    if not rows:
        raise BenchError("plot_anchor_slices: no anchor rows")
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    versions = sorted({int(r["version"]) for r in rows})
    labels = list(dict.fromkeys((str(r["table"]), str(r["anchor"]), str(r["player"]))
                                for r in rows))  # fmt: skip
    cell = {((str(r["table"]), str(r["anchor"]), str(r["player"])), int(r["version"])):
            float(r["score"]) for r in rows}  # fmt: skip
    grid = [[cell.get((lab, v), float("nan")) for v in versions] for lab in labels]
    figure = Figure(figsize=(6.0 + 0.5 * len(versions), 1.4 + 0.32 * len(labels)), dpi=DPI,
                    layout="constrained")  # fmt: skip
    ax = figure.add_subplot()
    image = ax.imshow(grid, cmap="RdYlGn", norm=TwoSlopeNorm(vcenter=0.5, vmin=0.0, vmax=1.0),
                      aspect="auto")  # fmt: skip
    if len(versions) * len(labels) <= 400:
        for i, row in enumerate(grid):
            for j, value in enumerate(row):
                if value == value:  # not NaN
                    ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(versions)), [f"v{v}" for v in versions])
    ax.set_yticks(range(len(labels)), [f"{t.replace(',', ' ')} · {a} · {p}" for t, a, p in labels],
                  fontsize=7)  # fmt: skip
    ax.set_xlabel("champion version")
    ax.set_title("score against the anchors by table (0.5 = par)")
    figure.colorbar(image, ax=ax, label="score")
    return _save(figure, path)


def plot_exploitability(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Each champion's exploitability (NashConv / 2; 0 is an equilibrium) per player kind
    against its version (rows ``version``, ``player``, ``value``)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    if not rows:
        raise BenchError("plot_exploitability: no exploitability rows")
    figure = Figure(figsize=(6.0, 4.0), dpi=DPI, layout="constrained")
    ax = figure.subplots()
    curves: dict[str, list[Mapping[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: int(r["version"])):
        curves.setdefault(str(r["player"]), []).append(r)
    for player, points in curves.items():
        ax.plot([int(p["version"]) for p in points], [float(p["value"]) for p in points],
                "-" if player == "network" else "--", marker="o", label=player)  # fmt: skip
    ax.set_title("champion exploitability (NashConv / 2)")
    ax.set_xlabel("champion version")
    ax.set_ylabel("exploitability")
    ax.set_ylim(bottom=0.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _save(figure, path)
