"""Where the tuner's targets come from: the game's plugin hook ``tune_targets`` (``factory() ->
{name: TuneTarget}``, :mod:`omega_cluster.games.tuning` has the types) and, for every game, the
generic target ``search:<leaf>:<simulations>[:key=value]``: the search's exploration constant
``c_uct`` (the spec's other arguments stay fixed).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from omega_cluster.games.api import Game
from omega_cluster.games.player import Player
from omega_cluster.games.registry import game_plugin, make_game
from omega_cluster.games.tuning import (
    Playout,
    TuneError,
    TuneTarget,
    WeightSpec,
    spec_from_default,
)
from omega_cluster.players.registry import PlayerSpecError, make_player

__all__ = [
    "SEARCH_TARGET",
    "Playout",
    "TuneError",
    "TuneTarget",
    "WeightSpec",
    "game_targets",
    "job_context",
    "resolve_target",
    "spec_from_default",
]

SEARCH_TARGET = "search:<leaf>:<simulations>"
"""The generic target's form (every game): the search's ``c_uct``."""


def game_targets(game: Game) -> dict[str, TuneTarget]:
    """The targets the game's plugin gives (``tune_targets``; none when it gives none)."""
    hook = game_plugin(game).hook("tune_targets")
    return dict(hook()) if hook is not None else {}


def resolve_target(game: Game, name: str) -> TuneTarget:
    """The target called ``name`` for ``game``: one of its plugin's, or the generic search
    target; anything else is refused in one line that lists the game's targets."""
    own = game_targets(game)
    if name in own:
        return own[name]
    head = name.split(":", 1)[0]
    if head in ("search", "ismcts", "smmcts") and ":" in name:
        return _search_target(game, name)
    listed = ", ".join([*own, SEARCH_TARGET])
    raise TuneError(f"unknown target {name!r} for {game.spec.name}; targets: {listed}")


def _search_target(game: Game, spec: str) -> TuneTarget:
    """``search:<leaf>:<simulations>[:key=value]``: the search's ``c_uct``."""
    if "c_uct=" in spec:
        raise TuneError(f"target {spec!r}: c_uct is the tuned weight, leave it out of the spec")
    try:
        make_player(spec, game)  # a bad spec is refused now, in one line
    except (PlayerSpecError, ValueError) as err:
        raise TuneError(f"target {spec!r}: {err}") from None

    def build(game: Game, values: Mapping[str, float]) -> Player:
        return make_player(f"{spec}:c_uct={values['c_uct']!r}", game)

    return TuneTarget(
        spec,
        (WeightSpec("c_uct", 1.4, 0.05, 6.0, 1.0),),
        build,
        doc="the search's UCT exploration constant",
    )


@lru_cache(maxsize=16)
def job_context(
    game: str, params: tuple[tuple[str, Any], ...], target: str
) -> tuple[Game, TuneTarget]:
    """The game and target of a job, built once per process (games are immutable)."""
    built = make_game(game, **dict(params))
    return built, resolve_target(built, target)
