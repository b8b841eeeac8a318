"""Strength of a training run's champion against the game's rule-based player (Commander).

``python -m bench.bench_champion --run runs/<run dir> [--games 400] [--workers 2]`` benches the
run's champion, playing the way the run's gate plays it (``gate.player``: the greedy network, or
the search with the network in its leaf), against the anchor ``heuristic`` (Commander for
Mexican Train), each fresh deal played once per seat, and prints its score with two 95%
intervals: Wilson over the games, and Student-t over the deals' mean scores ("by deal": the
duplicate/pentanomial view, where a deal's seat advantage cancels out of each deal's score).
The reference, measured in the same run: the run's first champion ``v0`` (random weights) in the
same player — for ``gate.player=search`` that is the search alone, so the difference is what
training added. Without ``--run`` (as in ``make bench``) it trains a smoke run first (a few
minutes).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from omega_cluster.eval.anchors import play_anchor
from omega_cluster.eval.gatekeeper import BenchTask, BenchWorker, GateServiceConfig
from omega_cluster.eval.stats import wilson_interval
from omega_cluster.wiring import gate_service_config, load_run_settings, run_registry

_WORKER: BenchWorker | None = None


def _init(config: GateServiceConfig) -> None:
    global _WORKER
    _WORKER = BenchWorker(config)


def _play(task: BenchTask) -> Any:
    assert _WORKER is not None
    return _WORKER.play(task)


def bench(
    run_dir: Path,
    games: int,
    workers: int,
    anchor: str = "heuristic",
    overrides: Sequence[str] = (),
    reference: bool = True,
    save: Path | None = None,
    only: int | None = None,
) -> list[str]:
    settings = load_run_settings(run_dir, overrides)
    registry = run_registry(run_dir, settings)
    champion = registry.champion
    assert champion is not None
    out = []
    with ProcessPoolExecutor(
        workers, initializer=_init, initargs=(gate_service_config(settings),)
    ) as pool:

        def play(tasks: Any) -> list[Any]:
            return list(pool.map(_play, tasks))

        config = gate_service_config(settings)
        assert config.fleet is not None
        table = config.fleet.slices[0]  # the run's first table
        if only is not None:  # one version of the registry instead
            versions = [("reference" if only == 0 else f"v{only}", registry.get(only))]
        else:
            versions = [("champion", champion)] + (
                [("reference", registry.get(0))] if reference else []
            )
        if overrides:
            print("overrides: " + " ".join(overrides), flush=True)
        for label, version in versions:
            start = time.perf_counter()
            result = play_anchor(config, version.version, version.uri, play, anchor=anchor,
                                 table=table, games=games, kind=settings.gate.player)  # fmt: skip
            n = result.wins + result.draws + result.losses
            ci = wilson_interval(result.wins + 0.5 * result.draws, n)
            paired = ""
            if len(result.deal_scores) > 1:
                p = result.paired_interval()
                paired = f"; by deal {p.estimate:.3f} [{p.low:.3f}, {p.high:.3f}] over {p.n} deals"
            out.append(
                f"{label} v{version.version} ({settings.gate.player}, "
                f"{settings.gate.bench_simulations} simulations) vs {anchor}: score "
                f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] over {n} games{paired} "
                f"(W-D-L {result.wins}-{result.draws}-{result.losses}, "
                f"{time.perf_counter() - start:.0f} s)"
            )
            print(out[-1], flush=True)
            if save is not None:
                record = {"label": label, "version": version.version, "anchor": anchor,
                          "overrides": list(overrides), "wins": result.wins,
                          "draws": result.draws, "losses": result.losses,
                          "deal_scores": list(result.deal_scores)}  # fmt: skip
                with save.open("a") as f:
                    f.write(json.dumps(record) + "\n")
    return out


def _smoke_run(root: Path) -> Path:
    from omega_cluster.config import load_settings, to_yaml
    from omega_cluster.service import run_training

    settings = load_settings(["run=smoke", f"run.dir={root}", "cluster=inprocess",
                              "tracking.enabled=false", "run.progress=false"])  # fmt: skip
    run_training(settings, config_yaml=to_yaml(settings))
    return root


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.bench_champion", description=__doc__)
    parser.add_argument("--run", type=Path, help="run directory (default: a fresh smoke run)")
    parser.add_argument("--games", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--anchor", default="heuristic")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override the run's config for the bench, e.g. gate.bench_simulations=400",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the v0 reference (half the time)"
    )
    parser.add_argument(
        "--save", type=Path, default=None, metavar="FILE",
        help="append each result (W-D-L and the per-deal scores) as a JSON line to FILE",
    )  # fmt: skip
    parser.add_argument(
        "--version", type=int, default=None, metavar="K",
        help="bench only version K of the run's registry (0: the untrained reference)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    run = args.run
    if run is None:
        import tempfile

        run = _smoke_run(Path(tempfile.mkdtemp(prefix="bench-champion-")) / "run")
    games = args.games or (40 if args.quick else 400)
    bench(run, games, args.workers, args.anchor, args.set, reference=not args.no_reference,
          save=args.save, only=args.version)  # fmt: skip


if __name__ == "__main__":
    main()
