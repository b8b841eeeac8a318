"""Registry of games by name: ``make_game("mexican_train", players=4, objective="points")``.

Built-in games are registered lazily by import path, so ``import omega_cluster`` stays cheap and
pyspiel is imported only when an OpenSpiel game is asked for. A user registers their own game with
:func:`register_game` and from then on every tool (arena, search, training) can build it by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from omega_cluster.games.api import Game, InvalidParameterError
from omega_cluster.games.plugin import GamePlugin

__all__ = [
    "available_games",
    "game_class",
    "game_plugin",
    "make_game",
    "register_game",
    "register_plugin",
]

GameFactory = Callable[..., Game]

# name -> "module:attribute" (lazy) or a factory (registered at run time)
_BUILTIN: dict[str, str] = {
    "mexican_train": "omega_cluster.games.mexican_train:MexicanTrainGame",
    "goofspiel": "omega_cluster.games.goofspiel:GoofspielGame",
    "kuhn_poker": "omega_cluster.games.kuhn_poker:KuhnPokerGame",
    "leduc_poker": "omega_cluster.games.leduc_poker:LeducPokerGame",
    "openspiel": "omega_cluster.games.openspiel:OpenSpielGame",
}
_REGISTERED: dict[str, GameFactory] = {}

# name -> "module:attribute" of the game's GamePlugin (lazy); a game without one gets a bare plugin
_PLUGINS: dict[str, str] = {
    "mexican_train": "omega_cluster.games.mexican_train.plugin:PLUGIN",
    "goofspiel": "omega_cluster.games.goofspiel:PLUGIN",
    "kuhn_poker": "omega_cluster.games.kuhn_poker:PLUGIN",
    "leduc_poker": "omega_cluster.games.leduc_poker:PLUGIN",
    "openspiel": "omega_cluster.games.openspiel:PLUGIN",
}
_REGISTERED_PLUGINS: dict[str, GamePlugin] = {}


def register_game(name: str, factory: GameFactory, *, replace: bool = False) -> None:
    """Make ``make_game(name, **params)`` build a game with ``factory(**params)``."""
    if not replace and (name in _REGISTERED or name in _BUILTIN):
        raise InvalidParameterError(f"a game named {name!r} is already registered")
    _REGISTERED[name] = factory


def game_plugin(game: Game | str) -> GamePlugin:
    """The plugin of a game (or of a registered name): its rules and optional extras.

    ``openspiel:<name>`` games share the OpenSpiel adapter's plugin; a game registered without a
    plugin gets a bare one (rules only: the generic encoder, no rule-based players).
    """
    name = game if isinstance(game, str) else game.spec.name
    key = "openspiel" if name.startswith("openspiel:") else name
    if key in _REGISTERED_PLUGINS:
        return _REGISTERED_PLUGINS[key]
    if key in _PLUGINS:
        module, attr = _PLUGINS[key].split(":")
        plugin: GamePlugin = getattr(importlib.import_module(module), attr)
        return plugin
    if isinstance(game, str):
        return GamePlugin(name=name, game=game_class(name))
    return GamePlugin(name=name, game=type(game))


def register_plugin(plugin: GamePlugin, *, replace: bool = False) -> None:
    """Register a game with its plugin: ``make_game(plugin.name)`` and every extra it gives."""
    register_game(plugin.name, plugin.rules(), replace=replace)
    _REGISTERED_PLUGINS[plugin.name] = plugin


def available_games() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def game_class(name: str) -> GameFactory:
    """The factory registered under ``name``; an unknown name lists the known ones."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name in _BUILTIN:
        module, attr = _BUILTIN[name].split(":")
        factory: GameFactory = getattr(importlib.import_module(module), attr)
        return factory
    raise InvalidParameterError(
        f"unknown game {name!r}; available games: {', '.join(available_games())}"
        " (any OpenSpiel game: make_game('openspiel', name='<pyspiel name>', ...))"
    )


def make_game(name: str, /, **params: Any) -> Game:
    """Build a registered game from keyword parameters, validating every one of them.

    ``make_game("openspiel:liars_dice", players=3)`` wraps any pyspiel game (the OpenSpiel adapter).
    """
    if name.startswith("openspiel:"):
        return game_class("openspiel")(name=name.split(":", 1)[1], **params)
    return game_class(name)(**params)
