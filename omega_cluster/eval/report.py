"""Evaluation reports: PNG plots and markdown tables, returned as file paths for MLflow.

Every plot function takes plain figures and a path, writes one PNG and returns its
:class:`~pathlib.Path`, so the service can log the files as run artifacts
(``mlflow.log_artifact``) without this module importing mlflow (only ``tracking`` does).
matplotlib is driven through :class:`matplotlib.figure.Figure` and the Agg canvas directly, never
``pyplot``: no global figure state, no GUI backend, safe in a Ray worker or a thread.

* :func:`plot_elo_ladder` — the champions' Elo over promotions with intervals (rows with
  ``version``, ``elo``, ``low``, ``high``: :class:`LadderRow` or any object or mapping with those).
* :func:`plot_slice_heatmap` — win rate (or fair share) per slice: rows player × player count ×
  objective, columns seats (:func:`omega_cluster.eval.matches.slice_outcomes`).
* :func:`plot_learning_curves` — losses (or any series) against the training step.
* :func:`plot_paired_contrast` — the per-seed differences of a paired bench as a histogram, with
  the mean, its t-interval and its bootstrap interval (:func:`omega_cluster.eval.stats.
  paired_contrast`).
* :func:`bench_markdown` / :func:`write_bench_report` — a played cohort
  (:class:`omega_cluster.eval.cohorts.BenchResult`) as a markdown table plus its plots.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from omega_cluster.eval.matches import BenchError, SliceKey, SliceOutcome
from omega_cluster.eval.paired import PairedSample
from omega_cluster.eval.stats import PairedContrast

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from omega_cluster.eval.cohorts import BenchResult

__all__ = [
    "BenchReportFiles",
    "LadderRow",
    "bench_markdown",
    "contrast_table",
    "plot_elo_ladder",
    "plot_learning_curves",
    "plot_paired_contrast",
    "plot_slice_heatmap",
    "write_bench_report",
]

DPI = 110


@dataclass(frozen=True)
class LadderRow:
    """One champion on the Elo ladder."""

    version: str  # model version id, e.g. "v7"
    elo: float  # rating
    low: float  # lower bound of its interval
    high: float  # upper bound


def _figure(width: float = 7.0, height: float = 4.2) -> tuple[Figure, Axes]:
    # lazy: matplotlib takes ~0.4 s to import and only the plot files need it (the CLI starts fast)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    return figure, figure.add_subplot()


def _save(figure: Figure, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, format="png")
    return out


def _field(row: Any, name: str) -> Any:
    if isinstance(row, Mapping):
        if name not in row:
            raise BenchError(f"ladder row {row!r} has no {name!r}")
        return row[name]
    if not hasattr(row, name):
        raise BenchError(f"ladder row {row!r} has no {name!r} (need version, elo, low, high)")
    return getattr(row, name)


def plot_elo_ladder(
    rows: Sequence[Any],
    path: str | Path,
    *,
    anchors: Mapping[str, float] | None = None,
    title: str = "Elo of the champions over promotions",
) -> Path:
    """Elo per promotion with its interval; ``anchors`` (name → Elo) as dashed reference lines."""
    if not rows:
        raise BenchError("plot_elo_ladder: no ladder rows")
    ladder = [
        LadderRow(str(_field(r, "version")), *(float(_field(r, k)) for k in ("elo", "low", "high")))
        for r in rows
    ]
    figure, ax = _figure()
    x = list(range(len(ladder)))
    elo = [r.elo for r in ladder]
    below = [max(0.0, r.elo - r.low) for r in ladder]
    above = [max(0.0, r.high - r.elo) for r in ladder]
    ax.errorbar(x, elo, yerr=[below, above], fmt="o-", capsize=4, color="tab:blue")
    for name, value in (anchors or {}).items():
        ax.axhline(value, linestyle="--", linewidth=1, color="grey")
        # x in axes units, y in data units: the label stays inside the plot at any ladder length
        ax.text(0.01, value, name, transform=ax.get_yaxis_transform(), va="bottom", fontsize=8)
    ax.set_xticks(x, [r.version for r in ladder], rotation=45 if len(x) > 8 else 0)
    ax.set_xlabel("promotion")
    ax.set_ylabel("Elo")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return _save(figure, path)


def plot_slice_heatmap(
    slices: Mapping[str, Mapping[SliceKey, SliceOutcome]],
    path: str | Path,
    *,
    value: str = "win_rate",
    title: str | None = None,
) -> Path:
    """One row per (label, player count, objective), one column per seat plus "all"; each cell
    shows the value and its games. ``value``: ``win_rate`` or ``fair_share``. Colours diverge at
    par (1/N wins per game at one table size N, fair share 1.0)."""
    if value not in ("win_rate", "fair_share"):
        raise BenchError(f"plot_slice_heatmap: value={value!r}; allowed: win_rate, fair_share")
    rows: dict[tuple[str, int, str], dict[int, SliceOutcome]] = {}
    for label, outcomes in slices.items():
        for key, outcome in outcomes.items():
            rows.setdefault((label, key.players, key.objective), {})[key.seat] = outcome
    if not rows:
        raise BenchError("plot_slice_heatmap: no slices")
    seats = [*sorted({s for cells in rows.values() for s in cells if s >= 0}), -1]
    grid = [
        [getattr(cells[s], value) if s in cells else math.nan for s in seats]
        for cells in rows.values()
    ]
    from matplotlib.colors import TwoSlopeNorm  # lazy: as in _figure

    figure, ax = _figure(1.6 + 1.2 * len(seats), 1.4 + 0.7 * len(rows))
    # Colour around par, so green means "better than an equal share" at any table size.
    sizes = {players for _, players, _ in rows}
    top = float(max(sizes)) if value == "fair_share" else 1.0
    par = 1.0 if value == "fair_share" else 1.0 / sizes.pop() if len(sizes) == 1 else 0.5
    norm = TwoSlopeNorm(vcenter=par, vmin=0.0, vmax=top)
    image = ax.imshow(grid, cmap="RdYlGn", norm=norm, aspect="auto")
    for i, cells in enumerate(rows.values()):
        for j, s in enumerate(seats):
            if s in cells:
                text = f"{getattr(cells[s], value):.3f}\nn={cells[s].games}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(seats)), [f"seat {s}" if s >= 0 else "all" for s in seats])
    ax.set_yticks(range(len(rows)), [f"{lab}\n{p}p · {obj}" for lab, p, obj in rows])
    ax.set_title(title or f"{value.replace('_', ' ')} by slice")
    figure.colorbar(image, ax=ax, label=value.replace("_", " "))
    return _save(figure, path)


def plot_learning_curves(
    series: Mapping[str, Mapping[float, float] | Sequence[tuple[float, float]]],
    path: str | Path,
    *,
    xlabel: str = "step",
    ylabel: str = "loss",
    log_y: bool = False,
    title: str = "learning curves",
) -> Path:
    """One line per series; a series is ``{step: value}`` or ``[(step, value), …]``."""
    if not series:
        raise BenchError("plot_learning_curves: no series")
    figure, ax = _figure()
    for name, points in series.items():
        pairs = sorted(points.items() if isinstance(points, Mapping) else points)
        if not pairs:
            raise BenchError(f"plot_learning_curves: series {name!r} is empty")
        ax.plot([p[0] for p in pairs], [p[1] for p in pairs], label=name)
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(figure, path)


def plot_paired_contrast(
    sample: PairedSample, contrast: PairedContrast, path: str | Path, *, title: str | None = None
) -> Path:
    """Histogram of the per-seed differences A − B, with 0, the mean, the t-interval (shaded)
    and the bootstrap interval (dashed)."""
    diffs = sample.differences
    if not diffs:
        raise BenchError("plot_paired_contrast: no per-seed differences")
    figure, ax = _figure()
    values = sorted(set(diffs))
    if len(values) <= 40:  # win shares over a few rotations are discrete: one bar per value
        gap = min((y - x for x, y in pairwise(values)), default=1.0)
        heights = [diffs.count(v) for v in values]
        ax.bar(values, heights, width=0.8 * gap, color="tab:blue", alpha=0.55)
    else:
        ax.hist(diffs, bins=40, color="tab:blue", alpha=0.55)
    ax.plot([], [], " ", label=f"{len(diffs)} seeds")
    t = contrast.t_interval
    level = f"{contrast.level:.0%}"
    ax.axvspan(t.low, t.high, color="tab:orange", alpha=0.3, label=f"{level} t-interval")
    ax.axvline(contrast.mean, color="tab:red", linewidth=2, label=f"mean {contrast.mean:+.3f}")
    ax.axvline(0.0, color="black", linewidth=1)
    boot = contrast.bootstrap_interval
    if boot is not None:
        for bound in (boot.low, boot.high):
            ax.axvline(bound, color="tab:green", linestyle="--", linewidth=1.5)
        ax.plot([], [], color="tab:green", linestyle="--", label=f"{level} bootstrap")
    ax.set_xlabel(f"per-seed difference in {sample.metric} (A − B, mean of {sample.rotations})")
    ax.set_ylabel("seeds")
    ax.set_title(
        title
        or f"{sample.a_player} − {sample.b_player}: {contrast.mean:+.3f} "
        f"[{t.low:+.3f}, {t.high:+.3f}]"
    )
    ax.legend(fontsize=8)
    return _save(figure, path)


# -- a played cohort as markdown + plots ----------------------------------------------------------


@dataclass(frozen=True)
class BenchReportFiles:
    """The files of one bench report (every path is a PNG but ``markdown``)."""

    markdown: Path  # report.md: the contrast and slice tables, links to the plots
    contrast: Path  # contrast.png: per-seed differences of win share
    slices: Path  # slices.png: win rate of both arms per slice

    @property
    def all(self) -> tuple[Path, ...]:
        return (self.markdown, self.contrast, self.slices)


def _interval(ci: Any) -> str:
    return "—" if ci is None else f"[{ci.low:+.3f}, {ci.high:+.3f}]"


def bench_markdown(result: BenchResult, *, plots: Sequence[Path] = ()) -> str:
    """The bench as markdown: what was played, the contrasts per metric, the slices."""
    c = result.cohort
    level = f"{result.level:.0%}"
    lines = [
        f"# {result.a} vs {result.b} on cohort `{c.name}`",
        "",
        f"{c.description}",
        "",
        f"- game: `{c.game}` {dict(c.params)}; others: {', '.join(c.others)}",
        f"- {result.seeds} seeds × {result.samples['win_share'].rotations} rotations × 2 arms "
        f"= {result.games} games in {result.elapsed_s:.1f}s",
        f"- A = `{result.a}`, B = `{result.b}`; contrast = A − B per seed (mean of the seed's "
        f"rotations), {level} intervals",
        "",
        f"| metric | A | B | A − B | {level} t-interval | {level} bootstrap | excludes 0 |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    for metric, contrast in result.contrasts.items():
        sample = result.samples[metric]
        t = contrast.t_interval
        lines.append(
            f"| {metric} | {sum(sample.a) / len(sample.a):.3f} | {sum(sample.b) / len(sample.b):.3f}"
            f" | {contrast.mean:+.3f} | {_interval(t)} | "
            f"{_interval(contrast.bootstrap_interval)} | "
            f"{'yes' if not t.contains(0.0) else 'no'} |"
        )
    lines += [
        "",
        "score is the game's natural score (Mexican Train: pips, lower is better); the other "
        "rows are the game's counts per game (omega_cluster.eval.counts).",
        "",
        "## Slices",
        "",
    ]
    keys = sorted(
        {k for outcomes in result.slices.values() for o in outcomes.values() for k in o.counts}
    )
    lines.append(
        "| arm | slice | games | win rate | fair share | mean score | " + " | ".join(keys) + " |"
    )
    lines.append("|---|---|---:|---|---|---:|" + "---:|" * len(keys))
    for arm, outcomes in result.slices.items():
        player = result.a if arm == "a" else result.b
        for key, o in outcomes.items():
            counts = " | ".join(f"{o.counts.get(k, math.nan):.3g}" for k in keys)
            lines.append(
                f"| {arm}: {player} | {key} | {o.games} | {o.win_rate:.3f} "
                f"[{o.win_rate_ci.low:.3f}, {o.win_rate_ci.high:.3f}] | "
                f"{o.fair_share:.3f} ± {o.fair_share_ci.half_width:.3f} | {o.mean_score:.3g} | "
                f"{counts} |"
            )
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines) + "\n"


def contrast_table(result: BenchResult) -> Table:
    """The contrasts as a rich table (the ``bench`` command prints it)."""
    level = f"{result.level:.0%}"
    table = Table(
        title=f"{result.a} (A) vs {result.b} (B) · cohort {result.cohort.name} · "
        f"{result.seeds} seeds · {result.games} games",
        caption=f"A − B per seed (mean over the seed's rotations); {level} intervals over seeds; "
        f"others: {', '.join(result.cohort.others)}; {result.elapsed_s:.1f}s",
    )
    for column in ("metric", "A", "B", "A − B", f"{level} t-interval", f"{level} bootstrap"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for metric, contrast in result.contrasts.items():
        sample = result.samples[metric]
        t = contrast.t_interval
        style = "" if t.contains(0.0) else "bold"
        table.add_row(
            metric,
            f"{sum(sample.a) / len(sample.a):.3f}",
            f"{sum(sample.b) / len(sample.b):.3f}",
            f"{contrast.mean:+.3f}",
            _interval(t),
            _interval(contrast.bootstrap_interval),
            style=style,
        )
    return table


def write_bench_report(result: BenchResult, out: str | Path) -> BenchReportFiles:
    """Write ``contrast.png``, ``slices.png`` and ``report.md`` into ``out``; return the paths."""
    folder = Path(out)
    contrast = plot_paired_contrast(
        result.samples["win_share"], result.contrasts["win_share"], folder / "contrast.png"
    )
    labelled = {
        f"{arm}: {result.a if arm == 'a' else result.b}": o for arm, o in result.slices.items()
    }
    slices = plot_slice_heatmap(
        labelled, folder / "slices.png", title=f"win rate by slice · cohort {result.cohort.name}"
    )
    markdown = folder / "report.md"
    markdown.write_text(bench_markdown(result, plots=(contrast, slices)))
    return BenchReportFiles(markdown=markdown, contrast=contrast, slices=slices)
