"""The ``omega-cluster`` command line (also ``python -m omega_cluster``).

Commands take ``key=value`` arguments, the form the Hydra-based ``train`` command will take too:

* ``omega-cluster arena game=mexican_train seats=commander,lieutenant,ensign,ensign games=200`` —
  a match through :func:`omega_cluster.eval.arena.play_match`; prints a progress bar (stderr), then
  the results table (stdout). Arena keys are listed in :data:`ARENA_KEYS`; every other key is a
  game parameter, checked against the game class's ``parameters``. ``players`` defaults to the
  number of seats; ``seats`` defaults to ``random`` at every seat.
* ``omega-cluster bench a=commander b=lieutenant cohort=mt4p-200`` — a paired contrast of two
  players on a registered cohort (:func:`omega_cluster.eval.cohorts.run_cohort`): prints the
  contrast table with intervals and writes ``contrast.png``, ``slices.png`` and ``report.md``
  (:func:`omega_cluster.eval.report.write_bench_report`); keys in :data:`BENCH_KEYS`.
* ``omega-cluster games`` — the registered games and their parameters.
* ``omega-cluster export checkpoint=<dir> out=<dir>`` — a portable agent bundle from a checkpoint
  (:func:`omega_cluster.model.export.export_bundle`): ``model.onnx``, ``encoder.json``,
  ``README.md``; keys in :data:`EXPORT_KEYS`. torch is imported only by this command.

Values parse as int, float, ``true``/``false``, ``none``, and ``a,b,c`` as a tuple (``seats`` is
always a list of player specs; a game parameter declared as ``str`` keeps the raw text). ``game``
is a registered name, ``openspiel:<pyspiel name>`` or a user's class as ``package.module:Class``.

Bad input (an unknown key, game, player or parameter value) exits with status 2 and one line on
stderr, no traceback. New subcommands (train, bench, play, export, inspect) are one more
:class:`Command` in :data:`COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster import __version__
from omega_cluster.eval.arena import ArenaError, play_match, print_table
from omega_cluster.games.api import Game, InvalidParameterError, ParamSpec
from omega_cluster.games.registry import available_games, game_class, make_game
from omega_cluster.players.registry import PlayerSpecError, parse_scalar

__all__ = [
    "ARENA_KEYS",
    "BENCH_KEYS",
    "COMMANDS",
    "EXPORT_KEYS",
    "Command",
    "UsageError",
    "main",
    "parse_key_values",
]

PROG = "omega-cluster"

ARENA_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`), openspiel:<name> or package.module:Class",
    "seats": "comma-separated player specs, one per seat (default: random at every seat)",
    "games": "number of games (default 100; a multiple of the player count balances seats)",
    "seed": "match seed: fixes every deal and every player's randomness (default 0)",
    "rotate": "rotate seats over each deal (default true)",
    "progress": "show a progress bar on stderr (default true)",
    "quiet": "no progress bar (quiet=true is progress=false)",
}


class UsageError(ValueError):
    """Bad command-line input: reported in one line, exit status 2."""


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, how to add its arguments and what it runs."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: str = ""


# -- key=value parsing ----------------------------------------------------------------------------


def parse_key_values(tokens: Sequence[str]) -> dict[str, str]:
    """``["game=kuhn_poker", "games=10"]`` → ``{"game": "kuhn_poker", "games": "10"}`` (raw text)."""
    pairs: dict[str, str] = {}
    for token in tokens:
        key, eq, value = token.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UsageError(f"expected key=value, got {token!r}")
        if key in pairs:
            raise UsageError(f"key {key!r} given twice")
        pairs[key] = value.strip()
    return pairs


def parse_value(text: str, spec: ParamSpec | None = None) -> Any:
    """A command-line value: scalar, or a tuple for ``a,b``; raw text for a ``str`` parameter."""
    if spec is not None and spec.kind is str:
        return text
    if "," in text:
        return tuple(parse_scalar(part) for part in text.split(",") if part.strip())
    value = parse_scalar(text)
    if spec is not None and spec.kind is tuple and not isinstance(value, tuple):
        return (value,)  # a one-element list needs no comma
    return value


def _flag(key: str, text: str) -> bool:
    value = parse_scalar(text)
    if not isinstance(value, bool):
        raise UsageError(f"{key}={text!r} must be true or false")
    return value


def _int(key: str, text: str, *, minimum: int) -> int:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"{key}={text!r} must be an int >= {minimum}")
    return value


# -- games ---------------------------------------------------------------------------------------


def _resolve_game(name: str) -> tuple[Callable[..., Game], Mapping[str, ParamSpec], dict[str, Any]]:
    """The factory, its parameters and fixed keywords for a ``game=`` value."""
    if ":" in name and not name.startswith("openspiel:"):
        module, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise UsageError(f"game={name!r}: cannot import {attr} from {module}: {err}") from None
        return factory, getattr(factory, "parameters", {}), {}
    if name.startswith("openspiel:"):
        factory = game_class("openspiel")
        pyspiel_name = name.split(":", 1)[1]
        parameters_of = getattr(factory, "parameters_of", None)
        params = parameters_of(pyspiel_name) if parameters_of else factory.parameters  # type: ignore[attr-defined]
        return factory, {k: v for k, v in params.items() if k != "name"}, {"name": pyspiel_name}
    factory = game_class(name)
    return factory, getattr(factory, "parameters", {}), {}


def _build_game(name: str, pairs: dict[str, str]) -> Game:
    if name == "openspiel" and "name" in pairs:  # game=openspiel name=liars_dice
        name = f"openspiel:{pairs.pop('name')}"
    factory, parameters, fixed = _resolve_game(name)
    unknown = [key for key in pairs if key not in parameters]
    if unknown:
        raise UsageError(
            f"unknown key {unknown[0]!r}; arena keys: {', '.join(ARENA_KEYS)}; "
            f"parameters of {name}: {', '.join(parameters) or 'none'}"
        )
    kwargs = {key: parse_value(text, parameters.get(key)) for key, text in pairs.items()}
    if name in available_games() or name.startswith("openspiel:"):
        return make_game(name, **kwargs)
    return factory(**fixed, **kwargs)


# -- commands ------------------------------------------------------------------------------------


def _configure_arena(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "settings", nargs="*", metavar="key=value", help="arena keys and game parameters"
    )


def run_arena(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    arena = {key: pairs.pop(key) for key in list(pairs) if key in ARENA_KEYS}
    if "game" not in arena:
        raise UsageError(
            f"arena needs game=<name>; available games: {', '.join(available_games())}"
        )
    seats = [s.strip() for s in arena.get("seats", "").split(",") if s.strip()]
    if seats and "players" not in pairs:
        pairs["players"] = str(len(seats))
    game = _build_game(arena["game"], pairs)
    if not seats:
        seats = ["random"] * game.num_players
    if len(seats) != game.num_players:
        raise UsageError(
            f"{len(seats)} seats ({','.join(seats)}) for a {game.num_players}-player game; "
            "give one player spec per seat"
        )
    progress = _flag("progress", arena.get("progress", "true"))
    if _flag("quiet", arena.get("quiet", "false")):
        progress = False
    result = play_match(
        game,
        seats,
        games=_int("games", arena.get("games", "100"), minimum=1),
        seed=_int("seed", arena.get("seed", "0"), minimum=0),
        rotate_seats=_flag("rotate", arena.get("rotate", "true")),
        progress=progress,
    )
    print_table(result)
    return 0


def _configure_games(parser: argparse.ArgumentParser) -> None:
    del parser  # no arguments


def run_games(args: argparse.Namespace) -> int:
    from rich.table import Table

    from omega_cluster.eval.table import wide_console

    console = wide_console()
    for name in available_games():
        try:
            factory = game_class(name)
        except Exception as err:  # a game whose module is broken or missing: list it anyway
            console.print(f"[bold]{name}[/bold]  (unavailable: {type(err).__name__}: {err})")
            continue
        doc = (factory.__doc__ or "").strip().splitlines()
        console.print(f"[bold]{name}[/bold]  {doc[0] if doc else ''}")
        parameters: Mapping[str, ParamSpec] = getattr(factory, "parameters", {})
        table = Table(show_header=True, box=None, padding=(0, 2))
        for column in ("parameter", "default", "allowed", "meaning"):
            table.add_column(column)
        for key, spec in parameters.items():
            allowed = spec.describe().split(" (default")[0].removeprefix("allowed: ")
            table.add_row(key, repr(spec.default), allowed, spec.doc)
        console.print(table)
    return 0


EXPORT_KEYS: dict[str, str] = {
    "checkpoint": "checkpoint directory (model.safetensors + metadata.json)",
    "out": "directory to write the bundle to (model.onnx, encoder.json, README.md)",
    "opset": "ONNX opset (default 17)",
    "verify": "positions of random playouts on which ONNX Runtime must match torch (default 64)",
    "overwrite": "replace an existing out directory (default false)",
}


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("settings", nargs="*", metavar="key=value", help="export keys")


def run_export(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    unknown = [key for key in pairs if key not in EXPORT_KEYS]
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r}; export keys: {', '.join(EXPORT_KEYS)}")
    missing = [key for key in ("checkpoint", "out") if not pairs.get(key)]
    if missing:
        raise UsageError(f"export needs {' and '.join(f'{k}=<dir>' for k in missing)}")
    from omega_cluster.model import CheckpointError, EncoderError, ExportError, export_bundle

    try:
        result = export_bundle(
            pairs["checkpoint"],
            pairs["out"],
            opset=_int("opset", pairs.get("opset", "17"), minimum=7),
            verify_positions=_int("verify", pairs.get("verify", "64"), minimum=0),
            overwrite=_flag("overwrite", pairs.get("overwrite", "false")),
        )
    except (CheckpointError, EncoderError, ExportError) as err:
        raise UsageError(str(err)) from err
    check = (
        "not verified"
        if result.max_difference is None
        else f"ONNX Runtime matches torch within {result.max_difference:.2g}"
    )
    print(f"wrote {result.directory} (model.onnx, encoder.json, README.md); {check}")
    return 0


BENCH_KEYS: dict[str, str] = {
    "a": "player spec of arm A, the candidate (e.g. commander)",
    "b": "player spec of arm B, the reference (e.g. lieutenant)",
    "cohort": "registered cohort name (bench/cohorts/<name>.yaml) or path to a cohort file",
    "out": "directory for contrast.png, slices.png, report.md (default outputs/bench/<cohort>-<a>-vs-<b>)",
    "seeds": "play only the cohort's first N seeds (default: all)",
    "rotations": "focus seats to play, e.g. 0,2 (default: the cohort's)",
    "level": "confidence level of the intervals (default 0.95)",
    "bootstrap": "bootstrap replicates over seeds (default 2000; 0: none)",
    "rng": "seed of the bootstrap resampling (default 0)",
    "progress": "show a progress bar on stderr (default true)",
    "quiet": "no progress bar (quiet=true is progress=false)",
}


def _configure_bench(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("settings", nargs="*", metavar="key=value", help="bench keys")


def _float(key: str, text: str, *, low: float, high: float) -> float:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
        raise UsageError(f"{key}={text!r} must be a number in ({low:g}, {high:g})")
    return float(value)


def run_bench(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    unknown = [key for key in pairs if key not in BENCH_KEYS]
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r}; bench keys: {', '.join(BENCH_KEYS)}")
    missing = [key for key in ("a", "b", "cohort") if not pairs.get(key)]
    if missing:
        raise UsageError(
            f"bench needs {', '.join(f'{k}=' for k in missing)}; "
            "e.g. omega-cluster bench a=commander b=lieutenant cohort=mt4p-200"
        )
    from omega_cluster.eval.cohorts import load_cohort, run_cohort
    from omega_cluster.eval.matches import BenchError
    from omega_cluster.eval.report import contrast_table, write_bench_report
    from omega_cluster.eval.table import wide_console

    rotations = None
    if "rotations" in pairs:
        rotations = [_int("rotations", r, minimum=0) for r in pairs["rotations"].split(",")]
    progress = _flag("progress", pairs.get("progress", "true"))
    if _flag("quiet", pairs.get("quiet", "false")):
        progress = False
    try:
        cohort = load_cohort(pairs["cohort"])
        result = run_cohort(
            cohort,
            pairs["a"],
            pairs["b"],
            seeds=_int("seeds", pairs["seeds"], minimum=1) if "seeds" in pairs else None,
            rotations=rotations,
            level=_float("level", pairs.get("level", "0.95"), low=0.0, high=1.0),
            bootstrap=_int("bootstrap", pairs.get("bootstrap", "2000"), minimum=0),
            rng_seed=_int("rng", pairs.get("rng", "0"), minimum=0),
            progress=progress,
        )
    except BenchError as err:  # cohort errors name the registered cohorts themselves
        raise UsageError(str(err)) from None
    default_out = f"outputs/bench/{cohort.name}-{_slug(result.a)}-vs-{_slug(result.b)}"
    files = write_bench_report(result, pairs.get("out") or default_out)
    console = wide_console()
    console.print(contrast_table(result))
    console.print("wrote " + ", ".join(str(p) for p in files.all))
    return 0


def _configure_train(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "overrides", nargs="*", metavar="override",
        help="Hydra overrides: group=option (run=smoke, game=goofspiel) or key=value",
    )  # fmt: skip
    parser.add_argument("--cfg", action="store_true", help="print the resolved config and exit")


def run_train(args: argparse.Namespace) -> int:
    from omega_cluster.config import ConfigError, load_settings, to_yaml

    try:
        settings = load_settings(args.overrides)
    except ConfigError as err:
        raise UsageError(str(err)) from None
    config_yaml = to_yaml(settings)
    if args.cfg:
        print(config_yaml, end="")
        return 0
    from omega_cluster.service import run_training

    try:
        result = run_training(settings, config_yaml=config_yaml)
    except KeyboardInterrupt:
        print(f"{PROG} train: interrupted; what was written is kept", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError, RuntimeError) as err:
        if type(err).__name__ not in _TRAIN_START_ERRORS:
            raise
        raise UsageError(str(err)) from None
    st = result.state
    print(f"run {result.run_dir}: {result.reason}; {st.decisions} gate decisions, "
          f"{st.promotions} promotions, {st.games} games, {st.shards} shards")  # fmt: skip
    if result.tracking_uri:
        print(f"MLflow run {result.mlflow_run_id} at {result.tracking_uri}")
        from omega_cluster.service import dashboard_hint

        print(f"dashboard: {dashboard_hint(result.tracking_uri)}")
    return 0


_TRAIN_START_ERRORS = frozenset(
    {"FileNotFoundError", "TrackingError", "ClusterError", "RegistryError", "ValueError"}
)


def _slug(spec: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in spec)


COMMANDS: dict[str, Command] = {
    "train": Command(
        "train",
        "train a champion: self-play actors, learner and gatekeeper on Ray, tracked in MLflow",
        _configure_train,
        run_train,
        epilog="Hydra overrides of conf/ (groups: game search model learner gate cluster "
        "tracking run).\nexamples:\n  omega-cluster train run=smoke game=mexican_train\n"
        "  omega-cluster train game=goofspiel cluster.self_play_actors=2\n"
        "  omega-cluster train run.resume=runs/mexican_train-20261129-120000",
    ),
    "arena": Command(
        "arena",
        "play a match between players and print win rates and fair shares with 95% intervals",
        _configure_arena,
        run_arena,
        epilog="arena keys:\n"
        + "\n".join(f"  {k:<9} {v}" for k, v in ARENA_KEYS.items())
        + "\nevery other key is a game parameter (see `omega-cluster games`).\n"
        "example: omega-cluster arena game=mexican_train "
        "seats=commander,lieutenant,ensign,ensign games=200",
    ),
    "bench": Command(
        "bench",
        "paired contrast of two players on a registered cohort: table with intervals, plots",
        _configure_bench,
        run_bench,
        epilog="bench keys:\n"
        + "\n".join(f"  {k:<10} {v}" for k, v in BENCH_KEYS.items())
        + "\nexample: omega-cluster bench a=commander b=lieutenant cohort=mt4p-200",
    ),
    "games": Command(
        "games", "list the registered games and their parameters", _configure_games, run_games
    ),
    "export": Command(
        "export",
        "write a portable agent bundle (ONNX + encoder metadata + README) from a checkpoint",
        _configure_export,
        run_export,
        epilog="export keys:\n"
        + "\n".join(f"  {k:<10} {v}" for k, v in EXPORT_KEYS.items())
        + "\nexample: omega-cluster export checkpoint=runs/leduc/v3 out=bundles/leduc-v3",
    ),
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
    """Run a command; returns the exit status (0 ok, 2 bad input)."""
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
    except (UsageError, InvalidParameterError, PlayerSpecError, ArenaError) as err:
        message = " ".join(str(err).split())
        print(f"{PROG} {args.command}: error: {message}", file=sys.stderr)
        return 2
    return status
