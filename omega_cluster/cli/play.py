"""``omega-cluster play``: sit at a table with any players (:mod:`omega_cluster.play.terminal`).

``seats`` names one player spec per seat, ``you`` for a person (several seats may be people);
``players`` defaults to the number of seats; every key but :data:`PLAY_KEYS` is a game parameter
(``rounds=1``). An unknown game, a bad seat spec, a champion of another game or the wrong number
of seats is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

from omega_cluster.cli.args import (
    Command,
    UsageError,
    build_game,
    default_players,
    integer,
    parse_key_values,
)
from omega_cluster.games.registry import available_games
from omega_cluster.play.session import TableSession
from omega_cluster.play.terminal import TerminalTable

__all__ = ["PLAY", "PLAY_KEYS"]

PLAY_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`)",
    "seats": "comma-separated player specs, one per seat; `you` is a person "
    "(e.g. you,champion:runs/default,commander,commander)",
    "seed": "the deal and the bots' randomness (default 0)",
}


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("settings", nargs="*", metavar="key=value", help="play keys, game params")


def run_play(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    keys = {key: pairs.pop(key) for key in list(pairs) if key in PLAY_KEYS}
    if "game" not in keys or "seats" not in keys:
        raise UsageError(
            f"play needs game=<name> and seats=<spec,...>; games: {', '.join(available_games())}"
        )
    seats = [s.strip() for s in keys["seats"].split(",") if s.strip()]
    if not seats:
        raise UsageError("seats= is empty; give one player spec (or you) per seat")
    default_players(keys["game"], pairs, seats)
    game = build_game(keys["game"], pairs, "play", PLAY_KEYS)
    session = TableSession(game, seats, seed=integer("seed", keys.get("seed", "0"), minimum=0))
    return TerminalTable(session).run()


PLAY = Command(
    "play",
    "sit at a table: play a game in the terminal against any players, with the advisor",
    _configure,
    run_play,
    epilog="play keys:\n"
    + "\n".join(f"  {k:<6} {v}" for k, v in PLAY_KEYS.items())
    + "\nevery other key is a game parameter.\n"
    "at the prompt: a move number or name, ? advisor, ?? advisor with search, q quit.\n"
    "example: omega-cluster play game=mexican_train players=4 "
    "seats=you,champion:runs/default,commander,commander rounds=1",
)
