"""Registry of players by spec string: ``make_player("commander", game)``.

The arena, the CLI and (later) the gatekeeper name their players with short spec strings, so a
match can be written on a command line: ``seats=commander,lieutenant,ensign,ensign``. A spec is
``name[:arg[:arg…]]``; each ``arg`` is either positional (mapped, in order, onto the keyword names
the entry declares, e.g. ``ismcts:commander_rollout:400`` → ``leaf="commander_rollout",
simulations=400``) or ``key=value``. Values parse as int, float, ``true``/``false``, ``none`` or
else stay strings. Every player is built as ``Cls(game, **kw)``.

Built-in entries are lazy ``"module:Class"`` paths, so importing this module imports no player
(search players live in modules that may pull in much more). An entry serves every game, or the
games a user named when registering it, or — for the rule-based players (``heuristic``,
``lieutenant``, ``commander``) — whatever the game's plugin gives under that name
(:meth:`omega_cluster.games.plugin.GamePlugin.player`): the Mexican Train officers, the small games'
baselines, a user game's own heuristic. Any other player a plugin names is reachable by its name
too. Users add players with :func:`register_player` and a heuristic for their own game with
:func:`register_heuristic` (or by giving it in their game's plugin).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.player import Player
from omega_cluster.games.registry import game_plugin, register_plugin

__all__ = [
    "PlayerEntry",
    "PlayerSpec",
    "PlayerSpecError",
    "available_players",
    "make_player",
    "parse_player_spec",
    "parse_scalar",
    "register_heuristic",
    "register_player",
]

PlayerFactory: TypeAlias = Callable[..., Player]
"""Called as ``factory(game, **kw)``; a player class is one."""
Target: TypeAlias = str | PlayerFactory
"""A lazy ``"module:Class"`` path or a factory."""

ANY_GAME = "*"  # key of a target that serves every game


class PlayerSpecError(UserError, ValueError):
    """An unknown player name, a player that does not support the game, or bad spec arguments."""


@dataclass(frozen=True)
class PlayerEntry:
    """How to build the players of one name."""

    name: str
    targets: Mapping[str, Target]  # game name (or ANY_GAME) -> "module:Class" or factory
    arg_names: tuple[str, ...] = ()  # keyword names of the positional spec arguments, in order
    doc: str = ""
    from_plugin: bool = False  # the game's plugin gives the player of this name (rule-based ones)

    def target_for(self, game: Game | str) -> Target | None:
        if self.from_plugin:
            return game_plugin(game).players.get(self.name)
        game_name = game if isinstance(game, str) else game.spec.name
        return self.targets.get(game_name, self.targets.get(ANY_GAME))

    def supports(self, game: Game | str) -> bool:
        return self.target_for(game) is not None


_RANDOM = "omega_cluster.games.player:RandomPlayer"
_SEARCH = "omega_cluster.players.search"
_SEARCH_ARGS = ("leaf", "simulations")


def _rule_based(name: str, doc: str) -> PlayerEntry:
    """An entry the game's plugin serves (its ``players[name]``)."""
    return PlayerEntry(name, {}, doc=doc, from_plugin=True)


_ENTRIES: dict[str, PlayerEntry] = {
    "random": PlayerEntry("random", {ANY_GAME: _RANDOM}, doc="uniform over legal actions"),
    "ensign": PlayerEntry(
        "ensign", {ANY_GAME: _RANDOM}, doc="alias of random (the Ensign officer)"
    ),
    "lieutenant": _rule_based("lieutenant", "Mexican Train heuristic officer (the game's plugin)"),
    "commander": _rule_based(
        "commander", "strongest Mexican Train heuristic officer (the game's plugin)"
    ),
    "heuristic": _rule_based("heuristic", "the game's rule-based player (the game's plugin)"),
    "ismcts": PlayerEntry(
        "ismcts",
        {ANY_GAME: f"{_SEARCH}:ISMCTSPlayer"},
        _SEARCH_ARGS,
        doc="information-set MCTS (turn-based games): ismcts:<leaf>:<simulations>[:key=value]",
    ),
    "smmcts": PlayerEntry(
        "smmcts",
        {ANY_GAME: f"{_SEARCH}:SMMCTSPlayer"},
        _SEARCH_ARGS,
        doc="simultaneous-move MCTS: smmcts:<leaf>:<simulations>[:key=value]",
    ),
    "lookahead": PlayerEntry(
        "lookahead",
        {ANY_GAME: "omega_cluster.players.lookahead:LookaheadPlayer"},
        ("evaluator", "depth"),
        doc="depth-limited determinized max-n search (turn-based games): "
        "lookahead:<leaf>:<depth>[:worlds=W][:tables=<dir>][:hand=<w>]",
    ),
    "network": PlayerEntry(
        "network",
        {ANY_GAME: "omega_cluster.players.network:network_player"},
        ("checkpoint", "greedy", "temperature"),
        doc="the policy network alone, no search: network:<checkpoint dir>[:greedy[:temperature]]",
    ),
    "champion": PlayerEntry(
        "champion",
        {ANY_GAME: "omega_cluster.wiring:champion_player"},
        ("run", "simulations"),
        doc="a training run's champion, played as its gate plays it: "
        "champion:<run dir>[:<simulations>][:version=<k>][:leaf=<search leaf>]",
    ),
    "rllib": PlayerEntry(
        "rllib",
        {ANY_GAME: "omega_cluster.players.rllib:RLlibPolicyPlayer"},
        ("policy", "greedy"),
        doc="a policy exported by `omega-cluster baseline rllib_ppo`: rllib:<out dir>[:greedy]",
    ),
    "search": PlayerEntry(
        "search",
        {ANY_GAME: f"{_SEARCH}:SearchPlayer"},
        _SEARCH_ARGS,
        doc="ISMCTS, or SM-MCTS for simultaneous games: search:<leaf>:<simulations>[:key=value]",
    ),
}


def register_player(
    name: str,
    factory: Target,
    *,
    games: Iterable[str] | None = None,
    arg_names: Iterable[str] = (),
    doc: str = "",
    replace: bool = False,
) -> None:
    """Make ``make_player(name, game)`` build ``factory(game, **kw)``.

    ``games`` limits the entry to those game names (default: every game); ``arg_names`` are the
    keywords that positional spec arguments fill, in order.
    """
    key = _normalize(name)
    if not key or ":" in key or "," in key or "=" in key:
        raise PlayerSpecError(f"invalid player name {name!r}: no ':', ',' or '=' and not empty")
    if key in _ENTRIES and not replace:
        raise PlayerSpecError(f"a player named {key!r} is already registered (pass replace=True)")
    targets = {ANY_GAME: factory} if games is None else dict.fromkeys(games, factory)
    _ENTRIES[key] = PlayerEntry(key, targets, tuple(arg_names), doc)


def register_heuristic(game: Game | str, factory: Target, *, replace: bool = False) -> None:
    """Make ``heuristic`` (the game's rule-based player) build ``factory`` for ``game`` (a game,
    or the name of a registered one): the game's plugin is registered again, with
    ``players["heuristic"] = factory`` (which registers the game by its name too)."""
    plugin = game_plugin(game)
    if "heuristic" in plugin.players and not replace:
        raise PlayerSpecError(
            f"game {plugin.name!r} already has a heuristic player (pass replace=True)"
        )
    players = {**plugin.players, "heuristic": factory}
    register_plugin(dataclasses.replace(plugin, players=players), replace=True)


def available_players(game: Game | str | None = None) -> list[str]:
    """Registered player names, limited to those that support ``game`` when it is given (the
    players its plugin names included)."""
    if game is None:
        return sorted(_ENTRIES)
    names = {name for name, entry in _ENTRIES.items() if entry.supports(game)}
    return sorted(names | set(game_plugin(game).players))


def parse_scalar(text: str) -> Any:
    """``"400"`` → 400, ``"0.5"`` → 0.5, ``"true"``/``"false"`` → bool, ``"none"`` → None, else str."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec ``name[:arg…][:key=value…]``: the value the layers below the command
    line take (:func:`make_player`, the tuner), parsed once where the string comes in
    (:meth:`parse`). ``text`` is the string as the user typed it; ``str(spec)`` gives it back."""

    name: str
    args: tuple[Any, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # the key=value arguments, in order
    text: str = field(default="", compare=False)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.options)

    def __str__(self) -> str:
        return self.text

    @classmethod
    def parse(cls, spec: str | PlayerSpec) -> PlayerSpec:
        """Split ``name[:arg…]`` into the name, the positional args and the ``key=value`` args
        (a :class:`PlayerSpec` is returned as it is)."""
        if isinstance(spec, PlayerSpec):
            return spec
        name, *raw_args = spec.strip().split(":")
        name = _normalize(name)
        if not name:
            raise PlayerSpecError(
                f"empty player spec {spec!r}; expected name[:arg…], one of "
                f"{', '.join(sorted(_ENTRIES))}"
            )
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for raw in raw_args:
            key, eq, value = raw.partition("=")
            if eq:
                if not key.strip().isidentifier():
                    raise PlayerSpecError(f"player spec {spec!r}: bad argument name {key!r}")
                kwargs[key.strip()] = parse_scalar(value)
            elif kwargs:
                raise PlayerSpecError(f"player spec {spec!r}: positional {raw!r} after key=value")
            else:
                args.append(parse_scalar(raw))
        return cls(name, tuple(args), tuple(kwargs.items()), spec.strip())

    def with_option(self, key: str, value: Any) -> PlayerSpec:
        """This spec with ``key=value`` added (or replaced), as typed: ``<text>:key=value``."""
        options = {**self.kwargs, key: value}
        return PlayerSpec(
            self.name, self.args, tuple(options.items()), f"{self.text}:{key}={value!r}"
        )


def parse_player_spec(spec: str | PlayerSpec) -> PlayerSpec:
    """:meth:`PlayerSpec.parse`."""
    return PlayerSpec.parse(spec)


def make_player(spec: str | PlayerSpec, game: Game) -> Player:
    """Build the player that ``spec`` names for ``game`` (see the module docstring); a string is
    parsed here, a :class:`PlayerSpec` was parsed where it came in."""
    parsed = PlayerSpec.parse(spec)
    spec, name, args, kwargs = parsed.text, parsed.name, parsed.args, parsed.kwargs
    game_name = game.spec.name
    entry = _ENTRIES.get(name) or _plugin_entry(name, game)
    target = entry.target_for(game) if entry is not None else None
    if entry is None or target is None:
        raise PlayerSpecError(_unavailable(spec, name, entry, game))
    if len(args) > len(entry.arg_names):
        takes = ":".join(entry.arg_names) or "no positional arguments"
        raise PlayerSpecError(f"player spec {spec!r}: too many arguments; {name} takes {takes}")
    for key, value in zip(entry.arg_names, args, strict=False):
        if key in kwargs:
            raise PlayerSpecError(f"player spec {spec!r}: {key} given twice")
        kwargs[key] = value
    factory = _load(name, game_name, target)
    _check_signature(spec, factory, game, kwargs)
    player = factory(game, **kwargs)
    if not isinstance(player, Player):
        raise TypeError(f"player {spec!r}: {factory!r} built {player!r}, which has no name/act")
    return player


def _normalize(name: str) -> str:
    return name.strip().lower()


def _plugin_entry(name: str, game: Game) -> PlayerEntry | None:
    """An entry for a player only the game's plugin names (None: it names none by ``name``)."""
    factory = game_plugin(game).player(name)
    if factory is None:
        return None
    args = tuple(getattr(factory, "spec_args", ()))  # a plugin player's positional arguments
    return PlayerEntry(name, {}, args, doc="the game's own player", from_plugin=True)


def _unavailable(spec: str, name: str, entry: PlayerEntry | None, game: Game) -> str:
    """Why ``spec`` builds no player for ``game``, with the players it has."""
    game_name = game.spec.name
    if entry is None:
        why = f"unknown player {name!r} (spec {spec!r})"
    else:
        why = f"player {name!r} does not support game {game_name!r}"
        if entry.from_plugin:
            own = ", ".join(sorted(game_plugin(game).players)) or "none"
            why += f" (its rule-based players: {own})"
    valid = ", ".join(available_players(game))
    return f"{why}; valid players for {game_name}: {valid}"


def _load(name: str, game_name: str, target: Target) -> PlayerFactory:
    """Import a lazy target. Only a missing target module or class is a spec error (the player
    is not installed or not written yet); any other import error is a bug and propagates."""
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    try:
        factory: PlayerFactory = getattr(importlib.import_module(module), attr)
    except ModuleNotFoundError as err:
        if err.name is None or not (module == err.name or module.startswith(err.name + ".")):
            raise
        raise PlayerSpecError(
            f"player {name!r} for {game_name} needs {target}, but module {err.name} is missing"
        ) from err
    except AttributeError as err:
        raise PlayerSpecError(
            f"player {name!r} for {game_name} needs {target}, but {module} has no {attr}"
        ) from err
    return factory


def _check_signature(spec: str, factory: PlayerFactory, game: Game, kwargs: dict[str, Any]) -> None:
    """Reject bad spec arguments before construction, naming the accepted ones."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins or C extensions: let the call speak for itself
        return
    try:
        signature.bind(game, **kwargs)
    except TypeError as err:
        accepted = [p for p in list(signature.parameters)[1:] if p not in ("args", "kwargs")]
        raise PlayerSpecError(
            f"player spec {spec!r}: {err}; accepted arguments: {', '.join(accepted) or 'none'}"
        ) from None
