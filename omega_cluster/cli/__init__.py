"""The ``omega-cluster`` command line (also ``python -m omega_cluster``).

Commands take ``key=value`` arguments (:mod:`.args`), the form the Hydra-based ``train`` command
takes too; one module per command:

* ``omega-cluster train run=smoke game=goofspiel`` — a training run (:mod:`.train`);
* ``omega-cluster arena game=mexican_train seats=commander,lieutenant,ensign,ensign games=200`` —
  a match through :func:`omega_cluster.eval.arena.play_match`; prints a progress bar (stderr),
  then the results table (stdout); ``omega-cluster games`` lists the registered games and their
  parameters (:mod:`.arena`);
* ``omega-cluster bench a=commander b=lieutenant cohort=mt4p-200`` — a paired contrast of two
  players on a registered cohort, with its report (:mod:`.bench`);
* ``omega-cluster tune game=mexican_train players=4 target=commander out=<dir>`` — CMA-ES
  self-play tuning of a weight set, resumable, written as a preset (:mod:`.tune`);
* ``omega-cluster export checkpoint=<dir> out=<dir>`` — a portable agent bundle from a checkpoint
  (:mod:`.export`);
* ``omega-cluster release run=<run dir> out=models/mexican_train`` — a run's champion released:
  checkpoint, ONNX bundle and model card, seated as ``network:models/mexican_train``
  (:mod:`.release`);
* ``omega-cluster tables game=mexican_train players=2 minutes=10 out=<dir>`` — n-tuple value
  tables trained by TD self-play, resumable (:mod:`.tables`).
* ``omega-cluster play game=mexican_train seats=you,commander,commander,commander`` — a game at
  the terminal table against any players, with the advisor (:mod:`.play`).
* ``omega-cluster serve runs=<dir>`` — the web table and the game viewer (:mod:`.serve`).
* ``omega-cluster baseline rllib_ppo game=leduc_poker minutes=10 out=<dir>`` — RLlib's PPO with
  a league of frozen snapshots, the outside baseline (:mod:`.baseline`).
* ``omega-cluster shards run=<run dir>`` — a run's shards as Parquet files for DuckDB
  (:mod:`.shards`).

Bad input (an unknown key, game, player or parameter value) and every other expected error (an
:class:`omega_cluster.errors.UserError`) exits with status 2 and one line on stderr, no
traceback; Ctrl-C exits with status 130 and one line, also while the command line or a command
still imports (``omega_cluster.__main__``, :func:`omega_cluster.errors.exit_on_interrupt`). A
new subcommand is one more module with its :class:`Command`, listed in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from omega_cluster import __version__
from omega_cluster.cli.arena import ARENA, ARENA_KEYS, GAMES
from omega_cluster.cli.args import PROG, Command, UsageError, parse_key_values, parse_value
from omega_cluster.cli.baseline import BASELINE
from omega_cluster.cli.bench import BENCH, BENCH_KEYS
from omega_cluster.cli.export import EXPORT, EXPORT_KEYS
from omega_cluster.cli.play import PLAY
from omega_cluster.cli.release import RELEASE, RELEASE_KEYS
from omega_cluster.cli.serve import SERVE
from omega_cluster.cli.shards import SHARDS
from omega_cluster.cli.tables import TABLES
from omega_cluster.cli.train import TRAIN
from omega_cluster.cli.tune import TUNE
from omega_cluster.errors import UserError, exit_on_interrupt, one_line

__all__ = [
    "ARENA_KEYS",
    "BENCH_KEYS",
    "COMMANDS",
    "EXPORT_KEYS",
    "RELEASE_KEYS",
    "Command",
    "UsageError",
    "main",
    "parse_key_values",
    "parse_value",
]

COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        TRAIN,
        ARENA,
        BENCH,
        GAMES,
        EXPORT,
        RELEASE,
        TABLES,
        PLAY,
        SERVE,
        TUNE,
        BASELINE,
        SHARDS,
    )
}


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="omega_cluster: self-play training and evaluation for game AI"
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for command in COMMANDS.values():
        child = sub.add_parser(
            command.name,
            help=command.help.replace("%", "%%"),  # argparse %-formats help strings
            description=command.help,
            epilog=command.epilog,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.configure(child)
        child.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; returns the exit status (0 ok, 2 bad input, 130 interrupted)."""
    with exit_on_interrupt(PROG):  # a Ctrl-C before the command starts: one line, 130
        parser = _build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exit_:  # --help / --version (0) and argparse's usage errors (2)
            return exit_.code if isinstance(exit_.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        status: int = args.run(args)
    except UserError as err:  # expected: one line, no traceback (omega_cluster.errors)
        print(f"{PROG} {args.command}: error: {one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the user's choice, not a bug (train reports its own)
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130
    return status
