"""``omega-cluster arena`` (a match between players) and ``omega-cluster games`` (the registered
games and their parameters).

Arena keys are listed in :data:`ARENA_KEYS`; every other key is a game parameter, checked against
the game class's ``parameters``. ``players`` defaults to the number of seats; ``seats`` defaults to
``random`` at every seat. ``game`` is a registered name, ``openspiel:<pyspiel name>`` or a user's
class as ``package.module:Class``.

``threads`` pins torch's intra-op threads (:func:`omega_cluster.model.threads.pin_threads`,
default 1) before any player is built; the line after the table says how many the match ran with.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping

import torch
from rich.table import Table

from omega_cluster.cli.args import Command, Settings, UsageError, key_command
from omega_cluster.eval.arena import play_match, print_table
from omega_cluster.eval.table import wide_console
from omega_cluster.games.api import ParamSpec
from omega_cluster.games.registry import available_games, game_class
from omega_cluster.model.threads import pin_threads

__all__ = ["ARENA", "ARENA_KEYS", "GAMES"]

ARENA_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`), openspiel:<name> or package.module:Class",
    "seats": "comma-separated player specs, one per seat (default: random at every seat)",
    "games": "number of games (default 100; a multiple of the player count balances seats)",
    "seed": "match seed: fixes every deal and every player's randomness (default 0)",
    "rotate": "rotate seats over each deal (default true)",
    "progress": "show a progress bar on stderr (default true)",
    "quiet": "no progress bar (quiet=true is progress=false)",
    "threads": "torch intra-op threads of this process (default 1: small forward passes run "
    "fastest on one, and several processes on one machine do not fight for its cores)",
}


def run_arena(args: argparse.Namespace) -> int:
    s = Settings("arena", args.settings, ARENA_KEYS, game_params=True)
    pin_threads(s.integer("threads", 1, minimum=1))
    seats = [seat.strip() for seat in s.text("seats").split(",") if seat.strip()]
    game = s.game(seats)
    if not seats:
        seats = ["random"] * game.num_players
    if len(seats) != game.num_players:
        raise UsageError(
            f"{len(seats)} seats ({','.join(seats)}) for a {game.num_players}-player game; "
            "give one player spec per seat"
        )
    result = play_match(
        game,
        seats,
        games=s.integer("games", 100, minimum=1),
        seed=s.integer("seed", 0, minimum=0),
        rotate_seats=s.flag("rotate", True),
        progress=s.progress(),
    )
    print_table(result)
    print(f"torch threads: {torch.get_num_threads()}")  # what the match ran with (threads=)
    return 0


def _configure_games(parser: argparse.ArgumentParser) -> None:
    del parser  # no arguments


def run_games(args: argparse.Namespace) -> int:
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


ARENA = key_command(
    "arena",
    "play a match between players and print win rates and fair shares with 95% intervals",
    ARENA_KEYS,
    run_arena,
    note="every other key is a game parameter (see `omega-cluster games`).",
    usage=(
        "omega-cluster arena game=mexican_train seats=commander,lieutenant,ensign,ensign games=200",
    ),
)
GAMES = Command(
    "games", "list the registered games and their parameters", _configure_games, run_games
)
