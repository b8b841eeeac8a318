"""Registry of games by name: ``make_game("mexican_train", players=4, objective="points")``.

Built-in games are registered lazily by import path, so ``import omega_cluster`` stays cheap and
pyspiel is imported only when an OpenSpiel game is asked for. A game is named three ways:

- a registered name (``mexican_train``; :func:`available_games` lists them);
- ``openspiel:<pyspiel name>``: any OpenSpiel game, through the adapter;
- ``<module>:<Class>``: a user's game by import path (``blind_war:BlindWarGame`` with the
  module's directory on ``PYTHONPATH``). The module is imported, ``Class`` must be a
  :class:`~omega_cluster.games.api.Game` subclass (or a :class:`GamePlugin`), and the module's
  ``PLUGIN``, when it defines one for that class, gives the game's extras (encoder, rule-based
  players). Importing it also registers the game under its own ``name`` (the ``game.spec.name``
  that shards and checkpoints record), so a process that built the game once rebuilds it by that
  name too.

A user may also register a game with :func:`register_game` / :func:`register_plugin`; from then
on every tool (arena, search, training) can build it by name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

from omega_cluster.games.api import Game, InvalidParameterError, ParamSpec
from omega_cluster.games.plugin import GamePlugin

__all__ = [
    "available_games",
    "game_class",
    "game_parameters",
    "game_plugin",
    "is_import_path",
    "make_game",
    "register_game",
    "register_plugin",
]

GameFactory = Callable[..., Game]

_REGISTERED: dict[str, GameFactory] = {}  # name -> factory, registered at run time

# the built-in games: name -> "module:attribute" of the game's GamePlugin (imported when asked
# for); the plugin's rules are the game's factory
_PLUGINS: dict[str, str] = {
    "mexican_train": "omega_cluster.games.mexican_train.plugin:PLUGIN",
    "goofspiel": "omega_cluster.games.goofspiel:PLUGIN",
    "kuhn_poker": "omega_cluster.games.kuhn_poker:PLUGIN",
    "leduc_poker": "omega_cluster.games.leduc_poker:PLUGIN",
    "openspiel": "omega_cluster.games.openspiel:PLUGIN",
}
_REGISTERED_PLUGINS: dict[str, GamePlugin] = {}
_IMPORTED: dict[str, GamePlugin] = {}  # "<module>:<Class>" -> the plugin it resolved to


def register_game(name: str, factory: GameFactory, *, replace: bool = False) -> None:
    """Make ``make_game(name, **params)`` build a game with ``factory(**params)``."""
    if not replace and (name in _REGISTERED or name in _PLUGINS):
        raise InvalidParameterError(f"a game named {name!r} is already registered")
    _REGISTERED[name] = factory


def game_plugin(game: Game | str) -> GamePlugin:
    """The plugin of a game (or of a game name): its rules and optional extras.

    ``openspiel:<name>`` games share the OpenSpiel adapter's plugin; ``<module>:<Class>`` imports
    the user's module (see the module docstring). A game instance whose name is not registered
    gets its module's ``PLUGIN`` when that plugin is for its class (a Ray worker that unpickled
    the game without building it by name), else a bare plugin (rules only: the generic encoder,
    no rule-based players).
    """
    name = game if isinstance(game, str) else game.spec.name
    if isinstance(game, str) and is_import_path(name):
        return _import_game(name)
    key = "openspiel" if name.startswith("openspiel:") else name
    if key in _REGISTERED_PLUGINS:
        return _REGISTERED_PLUGINS[key]
    if key in _PLUGINS:
        return _builtin_plugin(key)
    if isinstance(game, str):
        return GamePlugin(name=name, game=game_class(name))
    return _module_plugin(type(game)) or GamePlugin(name=name, game=type(game))


def _builtin_plugin(name: str) -> GamePlugin:
    module, attr = _PLUGINS[name].split(":")
    plugin: GamePlugin = getattr(importlib.import_module(module), attr)
    return plugin


def register_plugin(plugin: GamePlugin, *, replace: bool = False) -> None:
    """Register a game with its plugin: ``make_game(plugin.name)`` and every extra it gives."""
    register_game(plugin.name, plugin.rules(), replace=replace)
    _REGISTERED_PLUGINS[plugin.name] = plugin


def is_import_path(name: str) -> bool:
    """Whether ``name`` names a user's game by import path (``<module>:<Class>``)."""
    return ":" in name and not name.startswith("openspiel:")


def _import_game(path: str) -> GamePlugin:
    """The plugin of the game ``<module>:<Class>`` (imported once per process, then registered
    under the class's ``name``); every failure is one line naming the path and what is wrong."""
    if path in _IMPORTED:
        return _IMPORTED[path]
    module_name, _, attr = path.partition(":")
    if not module_name or not attr or ":" in attr:
        raise InvalidParameterError(f"game {path!r}: a user's game is named '<module>:<Class>'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        hint = " (is the directory that holds it on PYTHONPATH?)"
        where = hint if err.name == module_name.split(".")[0] else ""
        raise InvalidParameterError(
            f"game {path!r}: cannot import {module_name}: {err}{where}"
        ) from None
    value = getattr(module, attr, None)
    if value is None:
        raise InvalidParameterError(f"game {path!r}: module {module_name} has no attribute {attr}")
    plugin = _plugin_of(path, value, getattr(module, "PLUGIN", None))
    _register_imported(path, plugin)
    return plugin


def _plugin_of(path: str, value: object, module_plugin: object) -> GamePlugin:
    if isinstance(value, GamePlugin):
        return value
    if not (isinstance(value, type) and issubclass(value, Game)):
        raise InvalidParameterError(
            f"game {path!r}: {type(value).__name__} {value!r} is neither a Game subclass "
            "nor a GamePlugin"
        )
    if module_plugin is not None and not isinstance(module_plugin, GamePlugin):
        raise InvalidParameterError(
            f"game {path!r}: the module's PLUGIN is a {type(module_plugin).__name__}, "
            "not a GamePlugin"
        )
    if isinstance(module_plugin, GamePlugin) and module_plugin.rules() is value:
        return module_plugin
    return GamePlugin(name=getattr(value, "name", path), game=value)


def _register_imported(path: str, plugin: GamePlugin) -> None:
    """Register an imported game under its own name too (what its records and checkpoints say)."""
    rules = plugin.rules()
    name = getattr(rules, "name", None)
    if not isinstance(name, str):
        name = plugin.name
    if name in _PLUGINS or name.startswith("openspiel:") or is_import_path(name):
        raise InvalidParameterError(
            f"game {path!r} is named {name!r}, a name the registry reserves; "
            "give the game (and its plugin) another name"
        )
    if _REGISTERED.get(name, rules) is not rules:
        raise InvalidParameterError(
            f"game {path!r} is named {name!r}, the name of another registered game"
        )
    _REGISTERED[name] = rules
    _REGISTERED_PLUGINS[name] = plugin
    _IMPORTED[path] = plugin


def _module_plugin(cls: type) -> GamePlugin | None:
    """The ``PLUGIN`` of the module that defines ``cls`` or of a package above it (a game
    package's ``__init__``), when it is that class's plugin."""
    parts = cls.__module__.split(".")
    for depth in range(len(parts), 0, -1):
        plugin = getattr(sys.modules.get(".".join(parts[:depth])), "PLUGIN", None)
        if isinstance(plugin, GamePlugin) and plugin.game is cls:
            return plugin
    return None


def available_games() -> list[str]:
    return sorted(set(_PLUGINS) | set(_REGISTERED))


def game_class(name: str) -> GameFactory:
    """The factory registered under ``name`` (or imported from ``<module>:<Class>``); an unknown
    name lists the known ones."""
    if is_import_path(name):
        return _import_game(name).rules()
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name in _PLUGINS:
        factory: GameFactory = _builtin_plugin(name).rules()
        return factory
    raise InvalidParameterError(
        f"unknown game {name!r}; available games: {', '.join(available_games())}"
        " (any OpenSpiel game: 'openspiel:<pyspiel name>'; a game of your own: "
        "'<module>:<Class>')"
    )


def game_parameters(
    name: str, params: dict[str, Any] | None = None
) -> tuple[str, Mapping[str, ParamSpec]]:
    """The canonical name of a game and the parameters ``make_game`` accepts for it.

    ``openspiel:<name>`` has that pyspiel game's own parameters; ``openspiel`` with a ``name`` in
    ``params`` (popped) is ``openspiel:<name>``. Unknown names raise like :func:`game_class`.
    """
    if name == "openspiel" and params is not None and "name" in params:
        name = f"openspiel:{params.pop('name')}"
    if name.startswith("openspiel:"):
        factory = game_class("openspiel")
        parameters_of = getattr(factory, "parameters_of", None)
        pyspiel_name = name.split(":", 1)[1]
        found = parameters_of(pyspiel_name) if parameters_of else factory.parameters  # type: ignore[attr-defined]
        return name, {k: v for k, v in found.items() if k != "name"}
    return name, getattr(game_class(name), "parameters", {})


def make_game(name: str, /, **params: Any) -> Game:
    """Build a registered game from keyword parameters, validating every one of them.

    ``make_game("openspiel:liars_dice", players=3)`` wraps any pyspiel game (the OpenSpiel adapter);
    ``make_game("blind_war:BlindWarGame", players=3)`` imports a user's game.
    """
    if name.startswith("openspiel:"):
        return game_class("openspiel")(name=name.split(":", 1)[1], **params)
    return game_class(name)(**params)
