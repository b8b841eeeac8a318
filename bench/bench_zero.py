"""A run from nothing (``run=zero``) against reference players, and OpenSpiel's bots' ladder.

``python -m bench.bench_zero --run runs/<run dir> [--minutes 15 30 60] [--games 200]
[--workers 2] [--seed S] [--save]``: at each minute of the run, the champion it had then (the last
promotion decided before that minute; ``v0`` before any; without ``--minutes``, the run's final
champion at the run's last decision) plays each reference in ``--games`` games, each deal once
per seat (the reference at every other seat), as the two players its weights make: the search at
the gate's budget (``gate.bench_simulations``, PUCT on the network's prior and value) and the
network alone (greedy). The deals derive from ``--seed`` (never the run's own seed, whose anchor
games the run has already played). :func:`references` chooses the references by game:

* a perfect-information OpenSpiel game (turn-based): OpenSpiel's ``MCTSBot`` with random rollouts
  at 100 and 1,000 simulations (``openspiel_mcts:<n>``: the evaluation of OpenSpiel's own
  AlphaZero), and on tic-tac-toe also at 10,000 simulations, which plays it perfectly enough that
  a perfect player never loses to it. Each line gives W-D-L and the score (a draw a half) with its
  95% Wilson interval (the ``zero`` table of ``docs/results.md``).
* any other game (a user's own, hidden information, chance, more than two players): ``random``,
  and the run's untrained ``v0`` playing as the same kind (its search, or its network alone) — on
  each deal v0 sits in the champion's seat of the deal's other games, so the pair of games is
  paired by deal. Each line gives the champion's score (head-to-head against the other seats, a
  tie a half) and its fair share (win share x players, 1.0 = par) with 95% Student-t intervals by
  deal, the deals the independent sample (``AnchorResult.paired_interval`` and
  ``fair_share_interval``; the ``zero_own`` table).

``--save`` records one row per (minute, player) in ``docs/results/bench_zero.json`` (the minutes,
the self-play games stored by then, the champion and its scores).

``python -m bench.bench_zero --ladder connect_four [--games 200]``: the game preset's anchors
(``gate.anchors`` of ``conf/game/<game>.yaml``: random and the MCTS bots) against each other,
every pair in ``--games`` seat-swapped games, rated by Bradley-Terry with random fixed at 1000:
the anchors' Elo the preset gives them, so that a run's anchored rating curve is on the bots'
measured scale.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_champion import _init, _play
from bench.results import Figure, record
from omega_cluster.config import load_settings
from omega_cluster.data import ShardStore
from omega_cluster.eval.anchors import KINDS, play_anchor
from omega_cluster.eval.arena import play_match
from omega_cluster.eval.gatekeeper import BenchWorker, GateServiceConfig
from omega_cluster.eval.rating import AnchorResult, bradley_terry
from omega_cluster.eval.stats import wilson_interval
from omega_cluster.games.api import Game
from omega_cluster.games.registry import make_game
from omega_cluster.model.registry import ModelRegistry, ModelVersion
from omega_cluster.pipeline.run_state import RunPaths
from omega_cluster.players.registry import available_players
from omega_cluster.wiring import build_game, gate_service_config, load_run_settings, run_registry

MCTS = ("openspiel_mcts:100", "openspiel_mcts:1000")  # a perfect-information OpenSpiel game's
PERFECT = {"openspiel:tic_tac_toe": "openspiel_mcts:10000"}  # a game's perfect-play test
V0 = "@v0"  # the role token of the run's untrained v0 at the reference's seats
OWN = ("random", V0)  # any other game's
COMMAND = "python -m bench.bench_zero"


def references(game: Game) -> tuple[str, ...]:
    """The references a run's champions are benched against, by game (module docstring): MCTS
    (and the perfect-play test) for a turn-based perfect-information game OpenSpiel's
    ``MCTSBot`` plays, else :data:`OWN`."""
    spec = game.spec
    mcts = "openspiel_mcts" in available_players(game)
    if spec.hidden_information or spec.simultaneous or not mcts:
        return OWN
    return (*MCTS, *filter(None, [PERFECT.get(spec.name)]))


def label(reference: str) -> str:
    """How a line and the table name a reference (the v0 token as ``v0``)."""
    return "v0" if reference == V0 else reference


def wilson(r: AnchorResult) -> str:
    """Score (a draw a half) [95% Wilson] (W-D-L): a reference bot's cell."""
    ci = wilson_interval(r.wins + 0.5 * r.draws, r.wins + r.draws + r.losses)
    return f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] ({r.wins}-{r.draws}-{r.losses})"


def by_deal(r: AnchorResult) -> str:
    """Score and fair share [95% by deal] (games): a paired reference's cell."""
    s, f = r.paired_interval(), r.fair_share_interval()
    return (f"{s.estimate:.3f} [{s.low:.3f}, {s.high:.3f}]; fair share {f.estimate:.2f} "
            f"[{f.low:.2f}, {f.high:.2f}] ({r.wins + r.draws + r.losses} games)")  # fmt: skip


def champion_at(registry: ModelRegistry, minute: float) -> ModelVersion:
    """The run's champion ``minute`` minutes after it began (``v0`` was made): the last version
    promoted by then (v0 before any promotion)."""
    start = registry.get(0).created
    promoted = [v for v in registry.versions if v.version > 0
                and v.status in ("champion", "retired")
                and v.decided is not None and v.decided <= start + 60.0 * minute]  # fmt: skip
    return max(promoted, key=lambda v: v.version, default=registry.get(0))


def games_at(store: ShardStore, start: float, minute: float) -> int:
    """Self-play games stored in the run's first ``minute`` minutes."""
    end = start + 60.0 * minute
    return sum(len(e.game_ids or ()) for e in store.entries() if e.created_unix <= end)


def run_minutes(registry: ModelRegistry) -> float:
    """Minutes from v0 to the run's last gate decision (0 before any)."""
    start = registry.get(0).created
    decided = [v.decided for v in registry.versions if v.decided is not None]
    return max((t - start) / 60.0 for t in decided) if decided else 0.0


@contextlib.contextmanager
def bench_play(config: GateServiceConfig, workers: int) -> Iterator[Callable[[Any], list[Any]]]:
    """A ``play`` for :func:`play_anchor`: a pool of ``workers`` bench-worker processes, or this
    process alone (``workers`` <= 1)."""
    if workers <= 1:
        worker = BenchWorker(config)
        yield lambda tasks: [worker.play(t) for t in tasks]
        return
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(config,)) as pool:
        yield lambda tasks: list(pool.map(_play, tasks))


def bench(
    run_dir: Path, minutes: Sequence[float] | None, games: int, workers: int, seed: int
) -> list[dict[str, Any]]:
    """Every (minute, player kind) row: the champion then and its scores (module docstring)."""
    settings = load_run_settings(run_dir, [f"run.seed={seed}"])
    game = build_game(settings)
    registry = run_registry(run_dir, settings)
    store = ShardStore(RunPaths(run_dir, settings.run.shard_store).store_uri)
    start = registry.get(0).created
    config = gate_service_config(settings)
    assert config.fleet is not None
    table = config.fleet.slices[0]
    opponents = references(game)
    show = wilson if opponents[0] in MCTS else by_deal
    roles = {V0: registry.get(0).uri}
    rows = []
    with bench_play(config, workers) as play:
        for minute in minutes or [round(run_minutes(registry), 1)]:
            champion = champion_at(registry, minute)
            played = games_at(store, start, minute)
            for kind in KINDS:
                began = time.perf_counter()
                scores = [play_anchor(config, champion.version, champion.uri, play,
                                      anchor=opponent, table=table, games=games, kind=kind,
                                      roles=roles) for opponent in opponents]  # fmt: skip
                player = (f"search, {settings.gate.bench_simulations} simulations"
                          if kind == "search" else "network alone")  # fmt: skip
                rows.append({"game": settings.game.name, "minutes": minute, "games": played,
                             "champion": champion.version, "player": player, "scores": scores})  # fmt: skip
                print(f"{minute:g} min ({played} self-play games), champion v{champion.version}, "
                      f"{player}: " + "; ".join(f"vs {label(s.anchor)} {show(s)}" for s in scores)
                      + f" ({time.perf_counter() - began:.0f} s)", flush=True)  # fmt: skip
    return rows


def figures(rows: Sequence[dict[str, Any]], command: str) -> list[Figure]:
    """The table rows (one per minute and player): the ``zero`` table's against the MCTS bots,
    the ``zero_own`` table's against :data:`OWN`."""
    out = []
    for row in rows:
        by = {s.anchor: s for s in row["scores"]}
        own = OWN[0] in by
        head = (f"{row['minutes']:g}", str(row["games"]), f"v{row['champion']}", row["player"])
        if own:
            cells = (*head, *(by_deal(by[o]) for o in OWN))
        else:
            p = by.get(PERFECT.get(row["game"], ""))
            losses = f"{p.losses} losses in {p.wins + p.draws + p.losses}" if p else ""
            cells = (*head, *(wilson(by[o]) for o in MCTS), losses)
        out.append(Figure(
            name=f"zero champion at {row['minutes']:g} min, {row['player']}, {row['game']}",
            figure=cells[4], reference=label((OWN if own else MCTS)[0]), command=command,
            table="zero_own" if own else "zero", cells=cells,
        ))  # fmt: skip
    return out


def ladder(game_preset: str, games: int, seed: int) -> dict[str, float]:
    """The preset's anchors rated against each other (module docstring): spec -> Elo."""
    settings = load_settings(["run=zero", f"game={game_preset}"])
    bots = list(settings.gate.anchors)
    game = make_game(settings.game.name, **dict(settings.game.params))
    wins, draws = np.zeros((len(bots), len(bots))), np.zeros((len(bots), len(bots)))
    for i, j in itertools.combinations(range(len(bots)), 2):
        match = play_match(game, [bots[i], bots[j]], games=games, seed=seed)
        for r in match.records:
            a, b = (r.win_shares[r.seating.index(k)] for k in (0, 1))
            if a == b:
                draws[i, j] += 1
                draws[j, i] += 1
            else:
                wins[(i, j) if a > b else (j, i)] += 1
        print(f"{bots[i]} vs {bots[j]}: W-D-L {wins[i, j]:.0f}-{draws[i, j]:.0f}-{wins[j, i]:.0f}",
              flush=True)  # fmt: skip
    anchor = "random" if "random" in bots else bots[0]
    fit = bradley_terry(bots, wins, draws, anchor=anchor, anchor_elo=1000.0)
    for bot, elo, err in zip(fit.players, fit.elo, fit.stderr, strict=True):
        print(f"{bot}: {elo:.0f} ± {err:.0f} (preset: {settings.gate.anchors[bot]:g})")
    return dict(zip(fit.players, fit.elo, strict=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--run", type=Path, help="a run=zero run directory")
    what.add_argument("--ladder", metavar="GAME", help="a game preset: connect_four, tic_tac_toe")
    parser.add_argument("--minutes", type=float, nargs="+", default=None)
    parser.add_argument("--games", type=int, default=200, help="per bot and player kind")
    parser.add_argument("--workers", type=int, default=2, help="bench processes (1: this one)")
    parser.add_argument("--seed", type=int, default=2027, help="the bench deals' seed")
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    if args.ladder:
        ladder(args.ladder, args.games, args.seed)
        return 0
    rows = bench(args.run, args.minutes, args.games, args.workers, args.seed)
    minutes = (
        "" if args.minutes is None else " --minutes " + " ".join(f"{m:g}" for m in args.minutes)
    )
    command = f"{COMMAND} --run {args.run}{minutes} --games {args.games} --seed {args.seed}"
    record("bench_zero", figures(rows, command), quick=not args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
