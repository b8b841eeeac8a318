"""``omega-cluster train [overrides]``: a training run from the Hydra config of ``conf/``
(:func:`omega_cluster.service.run_training`); ``--cfg`` prints the resolved config.

Hydra and the service (torch, pyarrow, Ray) are imported only when this command runs, so the
other commands and ``--help`` start fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from omega_cluster.cli.args import PROG, Command, UsageError
from omega_cluster.errors import exit_on_interrupt

__all__ = ["TRAIN"]


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "overrides", nargs="*", metavar="override",
        help="Hydra overrides: group=option (run=smoke, game=goofspiel) or key=value",
    )  # fmt: skip
    parser.add_argument("--cfg", action="store_true", help="print the resolved config and exit")


def run_train(args: argparse.Namespace) -> int:
    # lazy (module docstring): Hydra, then the service with torch and pyarrow, take seconds;
    # a Ctrl-C meanwhile ends the command at once, with one line (nothing is written yet)
    with exit_on_interrupt(f"{PROG} train"):
        from omega_cluster.config import ConfigError, load_settings, to_yaml

        try:
            settings = load_settings(args.overrides)
            if settings.run.resume and not Path(settings.run.resume).expanduser().exists():
                # an MLflow run id: its run directory's saved config is the base (config.resume)
                from omega_cluster.service import resolve_run_dir  # lazy: torch, pyarrow

                settings = load_settings(args.overrides, run_dir=resolve_run_dir(settings))
        except ConfigError as err:
            raise UsageError(str(err)) from None
        config_yaml = to_yaml(settings)
        if args.cfg:
            print(config_yaml, end="")
            return 0
        from omega_cluster.pipeline.run_state import rejections
        from omega_cluster.service import dashboard_hint, run_training  # lazy: torch, pyarrow

    try:
        result = run_training(settings, config_yaml=config_yaml)
    except KeyboardInterrupt:
        print(f"{PROG} train: interrupted; what was written is kept", file=sys.stderr)
        return 130
    # an expected error (a UserError: bad run directory, corrupt checkpoint, unreachable server)
    # reaches main, which prints it on one line; anything else is a bug and shows its traceback
    st = result.state
    print(f"run {result.run_dir}: {result.reason}; {st.decisions} gate decisions, "
          f"{st.promotions} promotions, {st.games} games, {st.records} records, "
          f"{st.shards} shards")  # fmt: skip
    why = rejections(st.elo_log)
    if why:
        print(f"no promotion since the last champion: {why}")
    if result.tracking_uri:
        print(f"MLflow run {result.mlflow_run_id} at {result.tracking_uri}")
        print(f"dashboard: {dashboard_hint(result.tracking_uri)}")
    return 0


TRAIN = Command(
    "train",
    "train a champion: self-play actors, learner and gatekeeper on Ray, tracked in MLflow",
    _configure_train,
    run_train,
    epilog="Hydra overrides of conf/ (groups: game search model learner gate cluster "
    "tracking run).\nexamples:\n  omega-cluster train run=smoke game=mexican_train\n"
    "  omega-cluster train game=goofspiel cluster.self_play_actors=2\n"
    "  omega-cluster train run.resume=runs/mexican_train-20261129-120000",
)
