"""``key=value`` arguments of the ``omega-cluster`` commands, and the :class:`Command` type.

Values parse as int, float, ``true``/``false``, ``none``, and ``a,b,c`` as a tuple (a game
parameter declared as ``str`` keeps the raw text). Bad input raises :class:`UsageError`, which
the CLI reports in one line with exit status 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, GameError, ParamSpec
from omega_cluster.games.registry import game_parameters, make_game
from omega_cluster.players.registry import parse_scalar

__all__ = [
    "PROG",
    "Command",
    "UsageError",
    "build_game",
    "check_writable",
    "default_players",
    "flag",
    "integer",
    "number",
    "parse_key_values",
    "parse_value",
    "slug",
]

PROG = "omega-cluster"


class UsageError(UserError, ValueError):
    """Bad command-line input: reported in one line, exit status 2."""


@dataclass(frozen=True)
class Command:
    """One subcommand: its help line, how to add its arguments and what it runs."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    epilog: str = ""


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


def default_players(name: str, pairs: dict[str, str], seats: Sequence[str]) -> None:
    """``players`` defaults to the number of seats, for a game that has a ``players`` parameter
    (a fixed-size game such as ``openspiel:connect_four`` has none; its seat count is checked)."""
    if not seats or "players" in pairs:
        return
    try:
        _, parameters = game_parameters(name, dict(pairs))
    except GameError:
        return  # build_game names the unknown game
    if "players" in parameters:
        pairs["players"] = str(len(seats))


def build_game(name: str, pairs: dict[str, str], command: str, keys: Iterable[str]) -> Game:
    """The game of a ``game=`` value and its parameters (``pairs``, raw text).

    A key that is neither a game parameter nor one of the ``command``'s ``keys`` is one line
    naming both lists.
    """
    try:
        name, parameters = game_parameters(name, pairs)
    except GameError as err:
        raise UsageError(str(err)) from None
    unknown = [key for key in pairs if key not in parameters]
    if unknown:
        raise UsageError(
            f"unknown key {unknown[0]!r}; {command} keys: {', '.join(keys)}; "
            f"parameters of {name}: {', '.join(parameters) or 'none'}"
        )
    kwargs = {key: parse_value(text, parameters.get(key)) for key, text in pairs.items()}
    return make_game(name, **kwargs)


def flag(key: str, text: str) -> bool:
    value = parse_scalar(text)
    if not isinstance(value, bool):
        raise UsageError(f"{key}={text!r} must be true or false")
    return value


def integer(key: str, text: str, *, minimum: int) -> int:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise UsageError(f"{key}={text!r} must be an int >= {minimum}")
    return value


def number(key: str, text: str, *, low: float, high: float) -> float:
    value = parse_scalar(text)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
        raise UsageError(f"{key}={text!r} must be a number in ({low:g}, {high:g})")
    return float(value)


def slug(spec: str) -> str:
    """``spec`` as a file name: characters other than letters, digits, ``-_.`` become ``_``."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in spec)


def check_writable(key: str, path: str | Path) -> None:
    """Refuse, with a :class:`UsageError` naming ``key``, a directory ``path`` that could not be
    made or written (a parent is a file; no permission; a read-only disk), before a command's
    work starts so that its results are not lost at the end. Nothing is created."""
    folder = Path(path).absolute()
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(f"{key}={str(path)!r}: cannot write there: {existing} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{key}={str(path)!r}: cannot write there: {existing} is not writable")
