"""How the network alone grows with self-play: a run's learning curve against Commander.

``python -m bench.bench_scaling --run runs/<run dir> --games 2000 --seed <fresh seed> [--save]``
takes the versions of one training run (its continuous learner's snapshots, ``models/v<k>``) at
doubling amounts of self-play — the last version, and those nearest to 1/2, 1/4, 1/8 … of its
self-play games, down to ``--points`` of them — plus ``v0`` (no self-play) as the reference, and
benches each as the greedy network alone against the game's rule-based player (Commander for
Mexican Train): ``--games`` games on fresh deals, each deal played once per seat, scored as the
mean win share with the 95% interval by deal (Student-t over the deals' mean scores). The
champion is also benched against ``v0`` on paired deals (the run's headline question: did the
run make its first network stronger?).

The curve is fitted as ``score = a + b·log2(games)`` (weighted by the intervals) and read at
what a cluster of N self-play workers would play in the same wall time, if the trend holds: the
run's own self-play rate (games per actor-hour, from its state) times N. It is drawn into
``docs/scaling.png`` with ``--save``, and the figures go into ``docs/results/bench_scaling.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bench_champion import _init, _play
from bench.results import ROOT, Figure, record
from omega_cluster.eval.anchors import play_anchor
from omega_cluster.eval.gatekeeper import GateServiceConfig, PlayFn
from omega_cluster.eval.rating import AnchorResult
from omega_cluster.eval.stats import ConfidenceInterval
from omega_cluster.games.fleet import TableSlice
from omega_cluster.pipeline.run_state import PipelineState, RunPaths
from omega_cluster.wiring import gate_service_config, load_run_settings, run_registry

WORKERS_READ = (2, 8, 32, 128)  # cluster sizes the fitted trend is read at


@dataclass(frozen=True)
class Point:
    """One version's strength: its self-play games and its score with the 95% interval."""

    version: int
    games: float  # self-play games the learner had read when the version was saved
    score: float
    low: float
    high: float
    deals: int


def doubling_versions(
    rows: dict[int, float], games_per_row: float, points: int
) -> list[tuple[int, float]]:
    """``(version, games)`` of the versions nearest to the last one's games / 2^i, i < points,
    first the fewest; a version is taken once (so fewer points when the run is short)."""
    if not rows:
        return []
    last = max(rows, key=lambda v: (rows[v], v))
    chosen: list[int] = []
    for i in range(points):
        target = rows[last] / 2**i
        best = min(rows, key=lambda v: (abs(math.log(max(rows[v], 1.0) / target)), -v))
        if best not in chosen:
            chosen.append(best)
    return sorted(((v, rows[v] * games_per_row) for v in chosen), key=lambda p: p[1])


def fit_log2(points: Sequence[Point]) -> tuple[float, float]:
    """``(a, b)`` of ``score = a + b·log2(games)``, least squares weighted by 1/half-width²."""
    xs = [math.log2(p.games) for p in points]
    ws = [1.0 / max(1e-6, ((p.high - p.low) / 2) ** 2) for p in points]
    sw = sum(ws)
    mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / sw
    my = sum(w * p.score for w, p in zip(ws, points, strict=True)) / sw
    sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
    if sxx == 0:
        return my, 0.0
    sxy = sum(w * (x - mx) * (p.score - my) for w, x, p in zip(ws, xs, points, strict=True))
    b = sxy / sxx
    return my - b * mx, b


def plot(
    points: Sequence[Point], reference: Point, fit: tuple[float, float], out: Path, players: int
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = [p.games for p in points]
    ax.errorbar(xs, [p.score for p in points],
                yerr=[[p.score - p.low for p in points], [p.high - p.score for p in points]],
                fmt="o", capsize=4, label="network alone vs Commander (95% by deal)")  # fmt: skip
    statistic, par = _statistic(players)
    ax.axhspan(
        reference.low,
        reference.high,
        color="grey",
        alpha=0.2,
        label=f"v0 (warm start) {reference.score:.3f}",
    )
    ax.axhline(par, color="black", lw=0.8, ls=":")
    a, b = fit
    lo, hi = min(xs) / 1.5, max(xs) * 64
    grid = [lo * (hi / lo) ** (i / 50) for i in range(51)]
    ax.plot(
        grid, [a + b * math.log2(g) for g in grid], "--", label=f"fit {a:.3f} + {b:.4f}·log2(games)"
    )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("self-play games read by the learner")
    ax.set_ylabel(f"{statistic} against Commander")
    ax.set_title(f"Mexican Train {players}p: the network alone as self-play grows")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _statistic(players: int) -> tuple[str, float]:
    """What a point measures at ``players`` and its par."""
    return ("fair share", 1.0) if players > 2 else ("win share", 0.5)


def _name(players: int) -> str:
    """The bench's results name and plot stem: the 2-player curve keeps the first name."""
    return "bench_scaling" if players == 2 else f"bench_scaling_{players}p"


def network_alone(
    config: GateServiceConfig,
    table: TableSlice,
    version: int,
    uri: str,
    play: PlayFn,
    games: int,
    anchor: str,
    name: str,
) -> tuple[AnchorResult, ConfidenceInterval]:
    """Bench the network at ``uri`` alone (greedy) against ``anchor`` on the deals of the
    config's seed, each deal once per seat, and print one line: against Commander at N > 2
    players the fair share (1.0 par), else the score against the other seats (0.5 par); every
    player benched with one config and ``version`` plays the same deals (paired)."""
    started = time.perf_counter()
    result = play_anchor(config, version, uri, play, anchor=anchor, table=table, games=games,
                         kind="network")  # fmt: skip
    fair = table.players > 2 and anchor == "heuristic"
    p = result.fair_share_interval() if fair else result.paired_interval()
    print(f"{name} (network alone) vs {anchor}: {'fair share ' if fair else ''}"
          f"{p.estimate:.3f} [{p.low:.3f}, {p.high:.3f}] by deal over {p.n} deals "
          f"({time.perf_counter() - started:.0f} s)", flush=True)  # fmt: skip
    return result, p


def bench(run_dir: Path, games: int, seed: int, points: int, workers: int) -> dict[str, Any]:
    settings = load_run_settings(run_dir, [f"run.seed={seed}"])
    registry = run_registry(run_dir, settings)
    state = PipelineState.load(RunPaths(run_dir).state, game=settings.game.name)
    games_per_row = state.games / max(1, state.records)
    rows = {v.version: float(v.metrics["rows_seen"]) for v in registry.versions
            if v.version > 0 and "rows_seen" in v.metrics}  # fmt: skip
    versions = doubling_versions(rows, games_per_row, points)
    champion = registry.champion
    assert champion is not None
    config = gate_service_config(settings)
    assert config.fleet is not None
    table = config.fleet.slices[0]
    out: dict[str, Any] = {"run": str(run_dir), "games": games, "seed": seed, "points": [],
                           "players": table.players}  # fmt: skip
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(config,)) as pool:

        def play(tasks: Any) -> list[Any]:
            return list(pool.map(_play, tasks))

        def score(version: int, anchor: str) -> Point:
            uri = str(run_dir / registry.get(version).uri)
            _, p = network_alone(config, table, version, uri, play, games, anchor, f"v{version}")
            return Point(version, 0.0, p.estimate, p.low, p.high, p.n)

        reference = score(0, "heuristic")
        curve = []
        for version, played in versions:
            s = score(version, "heuristic")
            curve.append(Point(version, played, s.score, s.low, s.high, s.deals))
        taken = {0: reference, **{p.version: p for p in curve}}
        best = taken.get(champion.version) or score(champion.version, "heuristic")
        v0_spec = f"network:{run_dir / registry.get(0).uri}"
        head = score(champion.version, v0_spec) if champion.version != 0 else None
    out["reference"] = reference.__dict__
    out["points"] = [p.__dict__ for p in curve]
    out["champion_vs_v0"] = None if head is None else head.__dict__
    out["champion_vs_commander"] = best.__dict__
    out["champion"] = champion.version
    minutes = float(settings.run.max_minutes or 60.0)
    actors = settings.cluster.self_play_actors
    out["games_per_actor_hour"] = state.games / actors / (minutes / 60.0)
    return out


def strength_row(
    opponent: str, players: int, p: Point | ConfidenceInterval, command: str, seed: int
) -> dict[str, Any]:
    """One row of a strength file (:mod:`omega_cluster.release.strength`): the network alone
    against ``opponent`` ("commander", or another network) at ``players``."""
    value, deals = (p.score, p.deals) if isinstance(p, Point) else (p.estimate, p.n)
    statistic = _statistic(players)[0] if opponent == "commander" else "score vs each seat"
    return {"opponent": opponent, "players": players, "games": players * deals,
            "statistic": f"{statistic} (by deal, 95% t)", "value": round(value, 4),
            "low": round(p.low, 4), "high": round(p.high, 4), "command": command,
            "seed": seed}  # fmt: skip


def write_strength(path: Path, result: dict[str, Any], command: str, seed: int) -> None:
    """The champion's rows (network alone against Commander and against v0, at the run's
    table) in the shape :mod:`omega_cluster.release.strength` reads."""
    players = int(result["players"])
    rows = [strength_row(opponent, players, Point(**result[key]), command, seed)
            for key, opponent in (("champion_vs_commander", "commander"), ("champion_vs_v0", "v0"))
            if result.get(key) is not None]  # fmt: skip
    note = (
        f"v{result['champion']} as the greedy network alone, fresh deals each played once "
        f"per seat (Mexican Train, {players} players, one round)."
    )
    path.write_text(json.dumps({"rows": rows, "note": note}, indent=1) + "\n")
    print(f"strength rows written to {path}")


def _clip(value: float, players: int) -> str:
    """A share stays in [0, 1], a fair share in [0, players]."""
    top = float(players) if players > 2 else 1.0
    return f"{min(top, max(0.0, value)):.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--games", type=int, default=2000, help="games per point (2 per deal)")
    parser.add_argument("--seed", type=int, required=True, help="fresh: never used to choose")
    parser.add_argument("--points", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--save", action="store_true", help="record the figures and the plot")
    parser.add_argument("--strength", type=Path, help="write the champion's rows as a strength "
                        "file for `omega-cluster release strength=`")  # fmt: skip
    args = parser.parse_args(argv)
    result = bench(args.run, args.games, args.seed, args.points, args.workers)
    curve = [Point(**p) for p in result["points"]]
    reference = Point(**result["reference"])
    fit = fit_log2(curve) if len(curve) > 1 else (reference.score, 0.0)
    a, b = fit
    rate = result["games_per_actor_hour"]
    print(f"fit: score = {a:.4f} + {b:.4f}·log2(games); self-play {rate:.0f} games per actor-hour")
    reads = []
    for n in WORKERS_READ:
        g = rate * n
        reads.append(
            f"{n} workers, 1 h ({g:,.0f} games): {_clip(a + b * math.log2(g), result['players'])}"
        )
    print("if the trend holds: " + "; ".join(reads))
    command = (f"python -m bench.bench_scaling --run {args.run} --games {args.games} "
               f"--seed {args.seed} --points {args.points}")  # fmt: skip
    if args.strength is not None:
        write_strength(args.strength, result, command, args.seed)
    if not args.save:
        return 0
    players = int(result["players"])
    statistic = _statistic(players)[0]
    stem = "scaling" if players == 2 else f"scaling-{players}p"
    plot(curve, reference, fit, ROOT / "docs" / f"{stem}.png", players)
    figures = [
        Figure(
            f"network alone vs Commander, Mexican Train {players}p, after {p.games:,.0f} "
            f"self-play games (v{p.version})",
            f"{statistic} {p.score:.3f} [{p.low:.3f}, {p.high:.3f}] by deal, "
            f"{players * p.deals} games",
            f"v0 (warm start) {reference.score:.3f} [{reference.low:.3f}, {reference.high:.3f}]",
            "",
            command,
            table="strength",
        )
        for p in curve
    ]
    head = result["champion_vs_v0"]
    if head is not None:
        figures.append(Figure(
            f"{'default' if players == 2 else f'{players}p'} run's champion v{result['champion']} "
            "vs its v0, network alone, paired deals",
            f"{head['score']:.3f} [{head['low']:.3f}, {head['high']:.3f}] by deal, "
            f"{players * head['deals']} games", "v0 (0.5 = level)", "interval above 0.5", command,
            table="strength",
            headline="default run: champion vs v0" if players == 2 else f"{players}p run: "
            "champion vs v0"))  # fmt: skip
    figures.append(Figure(
        f"scaling fit, network alone vs Commander (Mexican Train {players}p), read at N self-play "
        "workers for 1 hour", "; ".join(reads), f"score = {a:.4f} + {b:.4f}·log2(games)",
        f"{rate:.0f} games per actor-hour (this run)", command, table="strength"))  # fmt: skip
    record(_name(players), figures, whole=True)  # one run's curve: the old run's points go
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
