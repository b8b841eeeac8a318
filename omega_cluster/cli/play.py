"""``omega-cluster play``: sit at a table with any players (:mod:`omega_cluster.play.terminal`).

``seats`` names one player spec per seat, ``you`` for a person (several seats may be people);
``players`` defaults to the number of seats; every key but :data:`PLAY_KEYS` is a game parameter
(``rounds=1``). An unknown game, a bad seat spec, a champion of another game or the wrong number
of seats is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse

from omega_cluster.cli.args import Settings, UsageError, key_command
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


def run_play(args: argparse.Namespace) -> int:
    s = Settings("play", args.settings, PLAY_KEYS, game_params=True)
    s.require("game=<name>", "seats=<spec,...>", hint=f"games: {', '.join(available_games())}")
    seats = [seat.strip() for seat in s.text("seats").split(",") if seat.strip()]
    if not seats:
        raise UsageError("seats= is empty; give one player spec (or you) per seat")
    game = s.game(seats)
    session = TableSession(game, seats, seed=s.integer("seed", 0, minimum=0))
    return TerminalTable(session).run()


PLAY = key_command(
    "play",
    "sit at a table: play a game in the terminal against any players, with the advisor",
    PLAY_KEYS,
    run_play,
    note="every other key is a game parameter.\n"
    "at the prompt: a move number or name, ? advisor, ?? advisor with search, q quit.",
    usage=(
        "omega-cluster play game=mexican_train players=4 "
        "seats=you,champion:runs/default,commander,commander rounds=1",
    ),
)
