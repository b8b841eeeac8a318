"""``omega-cluster tune game=mexican_train players=4 target=commander out=<dir>``: CMA-ES
self-play tuning of a weight set against a pool of its own snapshots
(:mod:`omega_cluster.eval.tuning`).

Keys in :data:`TUNE_KEYS`; every other key is a game parameter (as ``arena``'s). The jobs run in
this process (``cluster=inprocess``, the default) or over Ray actors, one per core
(``cluster=embedded``: a local Ray started here; ``local``: the Ray running on this machine).
Progress is a rich bar per generation; the figures and the tuning curve go to MLflow (a store in
``out`` unless ``tracking=<uri>``). Running the same command again on the same ``out`` resumes
after the last finished generation. The result: ``<out>/preset.json`` (the weights and the run
that made them); copied to ``omega_cluster/games/mexican_train/officers/presets/<name>.json`` it
is the preset ``commander:weights=<name>``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from omega_cluster.cli.args import Settings, UsageError, check_writable, integer, key_command
from omega_cluster.eval.tuning import Generation, TuneConfig, Tuner, game_targets

__all__ = ["TUNE", "TUNE_KEYS"]

TUNE_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`)",
    "target": "the weight set to tune (the game's targets, or search:<leaf>:<simulations>)",
    "generations": "CMA-ES generations (default 15)",
    "population": "candidates per generation (default 12)",
    "deals": "deals each candidate plays per generation (default 200)",
    "pool": "snapshots played against: the defaults + the latest bests (default 5)",
    "seed": "run seed: CMA-ES and every generation's deals (default 1)",
    "out": "directory of the log, the MLflow store and preset.json (required; resumes)",
    "cluster": "inprocess (default), embedded (a local Ray) or local (the running Ray)",
    "tracking": "MLflow tracking URI (default: a store in out)",
}
CLUSTERS = ("inprocess", "embedded", "local")


def _config(s: Settings) -> TuneConfig:
    game = s.game()
    if not s.text("target"):
        own = ", ".join(game_targets(game)) or "none of its own"
        raise UsageError(f"tune needs target=<name>; targets of {game.spec.name}: {own}, "
                         "search:<leaf>:<simulations>")  # fmt: skip
    minimum = {"population": 2, "seed": 0}
    ints = {
        k: integer(k, s.text(k), minimum=minimum.get(k, 1))
        for k in ("generations", "population", "deals", "pool", "seed")
        if k in s
    }
    return TuneConfig(game.spec.name, dict(game.params), s.text("target"), **ints)


def run_tune(args: argparse.Namespace) -> int:
    s = Settings("tune", args.settings, TUNE_KEYS, game_params=True)
    s.require("out=<dir>", hint="the log, the MLflow store and the preset")
    cluster = s.choice("cluster", "inprocess", CLUSTERS)
    out = s.text("out")
    check_writable("out", out)
    config = _config(s)
    command = shlex.join(["omega-cluster", "tune", *args.settings])
    mapper = None
    if cluster != "inprocess":
        from omega_cluster.cluster.tuning import RayMap

        mapper = RayMap(cluster)
    try:
        tuner = Tuner(config, Path(out), command=command)
        if mapper is not None:
            tuner.map = mapper
        return _run(tuner, s.text("tracking") or None)
    finally:
        if mapper is not None:
            mapper.close()


def _run(tuner: Tuner, uri: str | None) -> int:
    from omega_cluster.tracking.tuning import (
        log_generation,
        log_result,
        open_tuning_tracking,
    )

    tracker = open_tuning_tracking(tuner, uri=uri)
    cfg = tuner.config
    done = len(tuner.history)
    if done:
        print(f"resuming {tuner.out} after generation {done - 1}", file=sys.stderr)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with tracker, Progress(*columns, transient=False) as progress:
        task = progress.add_task("tuning", total=cfg.generations, completed=done)

        def on_generation(g: Generation) -> None:
            log_generation(tracker, g)
            s = g.summary()
            progress.update(task, advance=1, description=(
                f"gen {g.index}: best {s['best_fitness']:.3f} mean {s['mean_fitness']:.3f} "
                f"sigma {g.sigma:.3f} ({g.seconds:.1f}s)"))  # fmt: skip

        tuner.run(on_generation)
        preset = tuner.write_preset()
        curve = log_result(tracker, tuner, preset)
    print(f"wrote {preset} and {curve}; MLflow run {tuner.run_id}")
    return 0


TUNE = key_command(
    "tune",
    "CMA-ES self-play tuning of a weight set against a pool of its snapshots; writes a preset",
    TUNE_KEYS,
    run_tune,
    note="every other key is a game parameter (see `omega-cluster games`).",
    usage=(
        "omega-cluster tune game=mexican_train players=4 rounds=1 target=commander "
        "generations=15 population=12 deals=200 pool=5 seed=1 out=outputs/tune-4p",
    ),
)
