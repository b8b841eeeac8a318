"""``key=value`` arguments of the ``omega-cluster`` commands, and the :class:`Command` type.

One home for the commands' argument parsing: :class:`Settings` splits a command's tokens into
its own keys and (for a command that plays a game) the game's parameters, refuses an unknown
key in one line naming the allowed keys, and reads each value as its type (:func:`integer`,
:func:`number`, :func:`flag`, :meth:`Settings.choice`): a bad value is one line naming the key
and what it must be. :func:`key_command` builds a command whose arguments are such keys, its
help listing them.

Values parse as int, float, ``true``/``false``, ``none``, and ``a,b,c`` as a tuple (a game
parameter declared as ``str`` keeps the raw text). Bad input raises :class:`UsageError`, which
the CLI reports in one line with exit status 2.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, GameError, ParamSpec
from omega_cluster.games.registry import available_games, game_parameters, make_game
from omega_cluster.players.registry import parse_scalar

__all__ = [
    "PROG",
    "Command",
    "Settings",
    "UsageError",
    "build_game",
    "check_writable",
    "default_players",
    "flag",
    "integer",
    "key_command",
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
    """``key``'s value ``text`` as a bool (``true``/``false``)."""
    value = parse_scalar(text)
    if not isinstance(value, bool):
        raise UsageError(f"{key}={text!r} must be true or false")
    return value


def integer(key: str, text: str, *, minimum: int, maximum: int | None = None) -> int:
    """``key``'s value ``text`` as an int in ``minimum..maximum`` (no upper bound by default)."""
    value = parse_scalar(text)
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or value < minimum or (maximum is not None and value > maximum):
        bound = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise UsageError(f"{key}={text!r} must be an int {bound}")
    return value


def number(key: str, text: str, *, low: float, high: float, closed: bool = False) -> float:
    """``key``'s value ``text`` as a float in the open interval (``low``, ``high``), or the closed
    one with ``closed=True``."""
    value = parse_scalar(text)
    number_ = not isinstance(value, bool) and isinstance(value, int | float)
    inside = number_ and (low <= value <= high if closed else low < value < high)
    if not inside:
        interval = f"[{low:g}, {high:g}]" if closed else f"({low:g}, {high:g})"
        raise UsageError(f"{key}={text!r} must be a number in {interval}")
    return float(value)


class Settings:
    """One command's ``key=value`` arguments, parsed once.

    ``keys`` maps the command's own keys to their help lines; the given ones are in
    :attr:`given` (raw text). With ``game_params=True`` every other key is kept in
    :attr:`params` for :meth:`game`, which checks them against the game's parameters; without,
    an unknown key is refused here. ``command`` names the command in the error lines.
    """

    def __init__(
        self,
        command: str,
        tokens: Sequence[str],
        keys: Mapping[str, str],
        *,
        game_params: bool = False,
    ) -> None:
        pairs = parse_key_values(tokens)
        self.command = command
        self.keys = keys
        self.given = {key: pairs.pop(key) for key in list(pairs) if key in keys}
        self.params = pairs
        if pairs and not game_params:
            raise UsageError(
                f"unknown key {next(iter(pairs))!r}; {command} keys: {', '.join(keys)}"
            )

    def __contains__(self, key: str) -> bool:
        return key in self.given

    def require(self, *forms: str, hint: str = "") -> None:
        """Refuse, naming them, the missing or empty keys of ``forms`` (``"out=<dir>"``)."""
        missing = [form for form in forms if not self.given.get(form.partition("=")[0])]
        if missing:
            raise UsageError(
                f"{self.command} needs {' and '.join(missing)}" + (f"; {hint}" if hint else "")
            )

    def text(self, key: str, default: str = "") -> str:
        """``key``'s raw value; ``default`` when it is absent or empty."""
        return self.given.get(key) or default

    @overload
    def integer(
        self, key: str, default: int, *, minimum: int, maximum: int | None = None
    ) -> int: ...
    @overload
    def integer(
        self, key: str, default: None = None, *, minimum: int, maximum: int | None = None
    ) -> int | None: ...
    def integer(
        self, key: str, default: int | None = None, *, minimum: int, maximum: int | None = None
    ) -> int | None:
        """``key`` as an int (:func:`integer`); ``default`` when it is absent."""
        if key not in self.given:
            return default
        return integer(key, self.given[key], minimum=minimum, maximum=maximum)

    @overload
    def number(
        self, key: str, default: float, *, low: float, high: float, closed: bool = False
    ) -> float: ...
    @overload
    def number(
        self, key: str, default: None = None, *, low: float, high: float, closed: bool = False
    ) -> float | None: ...
    def number(
        self,
        key: str,
        default: float | None = None,
        *,
        low: float,
        high: float,
        closed: bool = False,
    ) -> float | None:
        """``key`` as a float (:func:`number`); ``default`` when it is absent."""
        if key not in self.given:
            return default
        return number(key, self.given[key], low=low, high=high, closed=closed)

    def flag(self, key: str, default: bool) -> bool:
        """``key`` as a bool (:func:`flag`); ``default`` when it is absent."""
        return flag(key, self.given[key]) if key in self.given else default

    def progress(self) -> bool:
        """``progress=`` (default true), off with ``quiet=true``."""
        progress, quiet = self.flag("progress", True), self.flag("quiet", False)
        return progress and not quiet

    def choice(self, key: str, default: str, allowed: Sequence[str]) -> str:
        """``key``'s value, one of ``allowed``; ``default`` when it is absent."""
        value = self.given.get(key, default)
        if value not in allowed:
            raise UsageError(f"{key}={value!r}: allowed values are {', '.join(allowed)}")
        return value

    def game(self, seats: Sequence[str] = ()) -> Game:
        """The game of ``game=`` with :attr:`params` as its parameters; ``players`` defaults to
        the number of ``seats`` (:func:`default_players`)."""
        name = self.given.get("game")
        if not name:
            raise UsageError(
                f"{self.command} needs game=<name>; available games: {', '.join(available_games())}"
            )
        default_players(name, self.params, seats)
        return build_game(name, self.params, self.command, self.keys)


def key_command(
    name: str,
    help: str,
    keys: Mapping[str, str],
    run: Callable[[argparse.Namespace], int],
    *,
    usage: Sequence[str] = (),
    note: str = "",
    positional: tuple[str, str] | None = None,
) -> Command:
    """A :class:`Command` whose arguments are ``key=value`` settings (``args.settings``), after an
    optional ``positional`` (name, help); its help lists ``keys``, the ``note`` and ``usage``."""

    def configure(parser: argparse.ArgumentParser) -> None:
        if positional is not None:
            parser.add_argument(positional[0], metavar=positional[0], help=positional[1])
        parser.add_argument("settings", nargs="*", metavar="key=value", help=f"{name} keys")

    width = max(map(len, keys)) + 1
    lines = [f"{name} keys:", *(f"  {k:<{width}} {v}" for k, v in keys.items())]
    if note:
        lines.append(note)
    if len(usage) == 1:
        lines.append(f"example: {usage[0]}")
    elif usage:
        lines += ["usage:", *(f"  {u}" for u in usage)]
    return Command(name, help, configure, run, epilog="\n".join(lines))


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
