"""A fleet champion against Commander at every table size, as two players from one set of weights.

``python -m bench.bench_fleet --run runs/<fleet run> [--sizes 2,3,4,6,8] [--deals 400]
[--objective points] [--kinds network,search] [--seed 22001] [--workers 2]`` plays the run's
champion (or ``--version K``) against the anchor ``commander`` at each table size: deal ``d`` puts
the champion at seat ``d mod N`` and Commander at every other seat, so the seats rotate over the
deals. Two players of the same weights: ``network`` (the greedy network alone, what the ONNX
bundle runs) and ``search`` (the run's search with this network in its leaf, at
``gate.bench_simulations``). Per slice it prints the champion's score against the Commanders'
seats one by one (1 for each seat whose win share it beats, 0.5 for a tie, averaged over the
seats: 0.5 is par at any table size; the anchored ratings are fitted on the same score) and its
fair share (N × mean win share; 1.0 is par), each with a 95% Student-t interval over the deals
(one game a deal).

The bar of the fleet issue: the network alone above par at every size (fair share > 1.0, and at
2 players score > 0.5), and its fair-share interval above par at 4 players. ``--save`` records
the figures in ``docs/results/bench_fleet.json`` (the strength table of ``docs/results.md``);
with ``--label`` the network-alone rows are recorded under that label with the learning-signal
bars instead (2 players: score > 0.55; 4 players: fair share > 1.15), e.g. for a ``make train``
champion.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster.eval.gatekeeper import ModelPlayerSpec, model_player
from omega_cluster.eval.matches import MatchSpec, match_spec, play_spec
from omega_cluster.eval.stats import ConfidenceInterval, head_to_head, mean_ci
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.player import Player
from omega_cluster.games.registry import make_game
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player
from omega_cluster.wiring import leaf_spec, load_run_settings, run_registry

ANCHOR = "commander"
CHAMPION = "@champion"


@dataclass(frozen=True)
class _Setup:
    uri: str
    kind: str  # network | search
    spec: ModelPlayerSpec


_SETUP: _Setup | None = None
_PLAYERS: dict[tuple[Any, ...], Player] = {}


def _init(setup: _Setup) -> None:
    global _SETUP
    pin_threads(1)
    _SETUP = setup


def _player(seat: str, spec: MatchSpec) -> Player:
    assert _SETUP is not None
    key = (seat, spec.params)
    if key not in _PLAYERS:
        game = make_game(spec.game, **dict(spec.params))
        if seat == CHAMPION:
            _PLAYERS[key] = model_player(_SETUP.spec, game, _SETUP.uri)
        else:
            _PLAYERS[key] = make_player(seat, game)
    return _PLAYERS[key]


def _play(specs: Sequence[MatchSpec]) -> list[tuple[float, float]]:
    """(score against the other seats one by one, fair share) of the champion in each game."""
    out = []
    for spec in specs:
        players = [_player(s, spec) for s in spec.seats]
        for p in players:
            reset = getattr(p, "reset", None)
            if callable(reset):
                reset()
        shares = play_spec(spec, players=players, counts=False).record.win_shares
        focus = spec.focus
        assert focus is not None
        n = len(shares)
        pairwise = [head_to_head(shares[focus], s) for i, s in enumerate(shares) if i != focus]
        out.append((sum(pairwise) / (n - 1), n * shares[focus]))
    return out


def slice_specs(
    game: str, params: dict[str, Any], players: int, deals: int, seed: int
) -> list[MatchSpec]:
    """Deal ``d``: the champion at seat ``d mod players``, Commander at the others."""
    table = {**params, "players": players}
    specs = []
    for d in range(deals):
        r = d % players
        seats = [ANCHOR] * players
        seats[r] = CHAMPION
        deal_seed = derive_seed(seed, "fleet-bench", players, d)
        specs.append(match_spec(game, seats, deal_seed, params=table, index=d, deal=d,
                                rotation=r, focus=r))  # fmt: skip
    return specs


@dataclass(frozen=True)
class SliceFigure:
    players: int
    kind: str
    deals: int
    score: ConfidenceInterval
    fair_share: ConfidenceInterval
    seconds: float


def bench(
    run_dir: Path,
    *,
    sizes: Sequence[int],
    deals: int,
    objective: str,
    kinds: Sequence[str],
    seed: int,
    workers: int,
    version: int | None = None,
) -> list[SliceFigure]:
    settings = load_run_settings(run_dir)
    registry = run_registry(run_dir, settings)
    model = registry.champion if version is None else registry.get(version)
    if model is None:
        raise SystemExit(f"{run_dir}: no champion")
    params = {**settings.game.params, "objective": objective}
    figures = []
    for kind in kinds:
        spec = ModelPlayerSpec(kind, leaf_spec(settings),
                               simulations=settings.gate.bench_simulations,
                               c_uct=settings.search.c_uct, c_puct=settings.search.c_puct)  # fmt: skip
        with ProcessPoolExecutor(workers, initializer=_init,
                                 initargs=(_Setup(model.uri, kind, spec),)) as pool:  # fmt: skip
            for n in sizes:
                started = time.perf_counter()
                specs = slice_specs(settings.game.name, params, n, deals, seed)
                chunks = [specs[i : i + 10] for i in range(0, len(specs), 10)]
                rows = [r for chunk in pool.map(_play, chunks) for r in chunk]
                fig = SliceFigure(n, kind, deals, mean_ci([r[0] for r in rows]),
                                  mean_ci([r[1] for r in rows]),
                                  time.perf_counter() - started)  # fmt: skip
                figures.append(fig)
                print(_line(fig, model.version, objective), flush=True)
    return figures


def _line(f: SliceFigure, version: int, objective: str) -> str:
    s, fs = f.score, f.fair_share
    return (
        f"v{version} {f.kind:7s} {f.players}p {objective}: score {s.estimate:.3f} "
        f"[{s.low:.3f}, {s.high:.3f}], fair share {fs.estimate:.3f} [{fs.low:.3f}, "
        f"{fs.high:.3f}] over {f.deals} deals vs Commander ({f.seconds:.0f} s)"
    )


def _value_bars(figures: Sequence[SliceFigure], label: str, command: str) -> list[Any]:
    """The learning-signal issue's bars: the network alone, score > 0.55 at 2 players and fair
    share > 1.15 at 4."""
    from bench.results import Figure

    out = []
    for f in figures:
        if f.kind != "network" or f.players not in (2, 4):
            continue
        if f.players == 2:
            bar, met = "score > 0.55", f.score.estimate > 0.55
        else:
            bar, met = "fair share > 1.15", f.fair_share.estimate > 1.15
        out.append(Figure(
            name=f"{label} (network alone) vs Commander, {f.players}p",
            figure=f"score {f.score.estimate:.3f} [{f.score.low:.3f}, {f.score.high:.3f}]; "
                   f"fair share {f.fair_share.estimate:.3f} [{f.fair_share.low:.3f}, "
                   f"{f.fair_share.high:.3f}] ({f.deals} deals)",
            reference="Commander at the other seats",
            ratio=f"bar {bar}: {'met' if met else 'not met'}",
            command=command,
            table="strength",
        ))  # fmt: skip
    return out


def _record(figures: Sequence[SliceFigure], argv: Sequence[str], label: str) -> None:
    from bench.results import Figure, record

    command = "python -m bench.bench_fleet " + " ".join(argv)
    if label:
        record("bench_fleet", _value_bars(figures, label, command))
        return
    out = []
    for f in figures:
        bar = "> 1.0" + (", score > 0.5" if f.players == 2 else "")
        if f.players == 4 and f.kind == "network":
            bar += ", interval > 1.0"
        out.append(Figure(
            name=f"fleet champion ({f.kind}) vs Commander, {f.players}p",
            figure=f"fair share {f.fair_share.estimate:.3f} [{f.fair_share.low:.3f}, "
                   f"{f.fair_share.high:.3f}]; score {f.score.estimate:.3f} "
                   f"[{f.score.low:.3f}, {f.score.high:.3f}] ({f.deals} deals)",
            reference="Commander at the other seats",
            ratio=bar,
            command=command,
            table="strength",
        ))  # fmt: skip
    for kind in dict.fromkeys(f.kind for f in figures):  # one line per player for the README
        rows = [f for f in figures if f.kind == kind]
        cells = " / ".join(f"{f.players}p {f.fair_share.estimate:.2f} [{f.fair_share.low:.2f}, "
                           f"{f.fair_share.high:.2f}]" for f in rows)  # fmt: skip
        met = (
            all(f.fair_share.estimate > 1.0 for f in rows)
            and all(f.score.estimate > 0.5 for f in rows if f.players == 2)
            and any(f.players == 4 and f.fair_share.low > 1.0 for f in rows)
        )
        out.append(Figure(
            name=f"fleet champion ({kind}) vs Commander, fair share by table size",
            figure=cells,
            reference="Commander at the other seats (fair share 1.0 = par)",
            ratio=("bar: above par at every size, interval above par at 4p: "
                   + ("met" if met else "not met")) if kind == "network" else "no bar",
            command=command,
            table="strength",
            headline=f"fleet champion ({kind}) vs Commander",
        ))  # fmt: skip
    record("bench_fleet", out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.bench_fleet", description=__doc__)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--sizes", default="2,3,4,6,8")
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--objective", default="points")
    parser.add_argument("--kinds", default="network,search")
    parser.add_argument("--seed", type=int, default=22001)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--version", type=int, default=None)
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    parser.add_argument(
        "--label", default="", help="record as '<label> (network alone)' rows with the "
        "learning-signal bars (2p score > 0.55, 4p fair share > 1.15) instead of the fleet's"
    )  # fmt: skip
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    figures = bench(args.run, sizes=sizes, deals=args.deals, objective=args.objective,
                    kinds=args.kinds.split(","), seed=args.seed, workers=args.workers,
                    version=args.version)  # fmt: skip
    if args.save:
        _record(figures, sys.argv[1:] if argv is None else argv, args.label)


if __name__ == "__main__":
    main()
