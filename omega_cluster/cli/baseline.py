"""``omega-cluster baseline rllib_ppo game=<name> minutes=<m> out=<dir>``: the outside baseline,
RLlib's PPO trained by self-play against a league of its frozen snapshots
(:func:`omega_cluster.cluster.rllib_baseline.train_league`) on an embedded Ray (or the one this
process joined), within a wall-clock limit counted from the command's start (the module
docstring of ``train_league``'s says how it is kept); logged to MLflow like a training run
(params, one point per iteration, the tags ``checkpoint`` and ``player``), the RLlib checkpoint
in ``<out>/checkpoint`` and the learner's policy in ``<out>/policy``, which the arena plays as
the player spec ``rllib:<out>`` (:mod:`omega_cluster.players.rllib`). While it runs, a live
panel (off a terminal, one line per event) shows the phase, each iteration and the time left
(:class:`omega_cluster.progress.BaselineProgress`). A limit that comes before the first
iteration ends is one line on stderr and exit status 1: nothing trained, nothing saved. Keys in
:data:`BASELINE_KEYS`; every other key is a game parameter. Ray and RLlib are imported only when
the command runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from omega_cluster.cli.args import Settings, UsageError, key_command

__all__ = ["BASELINE", "BASELINES", "BASELINE_KEYS"]

BASELINES = ("rllib_ppo",)

BASELINE_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`) or openspiel:<name>",
    "minutes": "wall-clock limit from the command's start, Ray's start and RLlib's build "
    "included; only the saving comes after it (required; a fraction is fine: 0.5)",
    "out": "directory of the run: the RLlib checkpoint and the MLflow store (required)",
    "league": "frozen snapshots the learner plays against (default 4)",
    "snapshot_every": "iterations between two snapshots into the league (default 5)",
    "batch": "environment steps per PPO iteration (default 4000)",
    "cpus": "CPUs of the embedded Ray (default 2)",
    "tracking": "log to MLflow in <out> (default true)",
}


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The command's checked settings; every bad value is one line before Ray starts."""
    if args.baseline not in BASELINES:
        raise UsageError(f"unknown baseline {args.baseline!r}; baselines: {', '.join(BASELINES)}")
    s = Settings(f"baseline {args.baseline}", args.settings, BASELINE_KEYS, game_params=True)
    s.require("game=<name>", "minutes=<m>", "out=<dir>")
    game = s.game()
    return {
        "game": s.text("game"),
        "game_params": dict(game.params),
        "minutes": s.number("minutes", low=0.0, high=7 * 24 * 60.0),
        "out": Path(s.text("out")),
        "league": s.integer("league", 4, minimum=1),
        "snapshot_every": s.integer("snapshot_every", 5, minimum=1),
        "batch": s.integer("batch", 4000, minimum=8),
        "cpus": s.integer("cpus", 2, minimum=1),
        "tracking": s.flag("tracking", True),
    }


def run_baseline(args: argparse.Namespace) -> int:
    started = time.monotonic()  # the limit counts from here
    s = _settings(args)
    try:
        from omega_cluster.cluster.rllib_baseline import embedded_ray, train_league
    except ImportError as err:  # the interop extra is not installed
        raise UsageError(
            f"baseline rllib_ppo needs RLlib ({err}): pip install 'omega_cluster[interop]'"
        ) from None
    from omega_cluster.progress import BaselineProgress
    from omega_cluster.tracking import Tracker

    out: Path = s["out"]
    tracker = (
        Tracker(run_dir=out, experiment="baselines", run_name=out.name) if s["tracking"] else None
    )
    if tracker is not None:
        tracker.set_tags({"baseline": "rllib_ppo", "game": s["game"]})
        tracker.log_params({k: v for k, v in s.items() if k not in ("out", "tracking", "cpus")})

    progress = BaselineProgress(args.baseline, s["game"], minutes=s["minutes"], started=started)

    def on_iteration(summary: dict[str, float]) -> None:
        progress.iteration(summary)
        if tracker is not None:
            tracker.log_metrics(summary, step=int(summary["iteration"]))

    status = "FAILED"
    progress.start()
    try:
        with embedded_ray(s["cpus"]):
            result = train_league(
                s["game"], s["game_params"], minutes=s["minutes"], out=out, league=s["league"],
                snapshot_every=s["snapshot_every"], started=started, on_built=progress.built,
                on_iteration=on_iteration, train_batch_size=s["batch"],
                minibatch_size=min(128, s["batch"]),
            )  # fmt: skip
        progress.stop(result.stopped)
        if result.checkpoint is not None:
            status = "FINISHED"
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    finally:
        progress.close()  # the terminal back, whatever happened
        if tracker is not None:
            if status == "FINISHED":
                tracker.set_tags(
                    {"checkpoint": str(result.checkpoint), "player": f"rllib:{result.policy}"}
                )
            tracker.close(status)
    if result.checkpoint is None:
        print(
            f"baseline {args.baseline}: minutes={s['minutes']:g} ran out before the first PPO "
            f"iteration ended ({result.stopped}); nothing saved: give it more minutes= or a "
            "smaller batch=",
            file=sys.stderr,
        )
        return 1
    print(
        f"rllib_ppo on {s['game']}: {result.iterations} iterations, {result.snapshots} "
        f"snapshots; checkpoint {result.checkpoint}; play it as rllib:{result.policy}"
    )
    return 0


BASELINE = key_command(
    "baseline",
    "train an outside baseline (RLlib PPO with a league of frozen snapshots) for a time budget",
    BASELINE_KEYS,
    run_baseline,
    positional=("baseline", f"one of {', '.join(BASELINES)}"),
    note="every other key is a game parameter.",
    usage=("omega-cluster baseline rllib_ppo game=leduc_poker minutes=10 out=runs/ppo-leduc",),
)
