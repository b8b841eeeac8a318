"""Where the tuner's targets come from: the game's plugin hook ``tune_targets`` (``factory() ->
{name: TuneTarget}``, :mod:`omega_cluster.games.tuning` has the types) and, for every game, the
generic targets ``search:<leaf>:<simulations>[:key=value]`` (the search's exploration constant
``c_uct``; the spec's other arguments stay fixed) and, for a game with a hand-written value (its
plugin's ``hand_value`` hook), ``lookahead:hand:<depth>[:worlds=W]``: the hand value's term weights
as the leaf of the lookahead search (its ``scale`` stays: at a max-n leaf it only rescales);
and ``lookahead:tables+hand:<depth>:tables=<dir>``: the blend's weight ``hand`` on the
hand-written terms.
"""

from __future__ import annotations

import dataclasses
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
from omega_cluster.players.registry import PlayerSpec, PlayerSpecError, make_player
from omega_cluster.search.ismcts import ISMCTSConfig

__all__ = [
    "BLEND_TARGET",
    "HAND_TARGET",
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

HAND_TARGET = "lookahead:hand:<depth>"
"""The generic target of a game with a hand-written value: its term weights as the search leaf."""

BLEND_TARGET = "lookahead:tables+hand:<depth>:tables=<dir>"
"""The generic target of a game with tables and a hand-written value: the blend's weight."""


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
    hand = game_plugin(game).hook("hand_value")
    search = name.split(":", 1)[0] in ("search", "ismcts", "smmcts") and ":" in name
    lookahead = hand is not None and name.startswith(("lookahead:hand:", "lookahead:tables+hand:"))
    if search or lookahead:  # a player spec: parsed here, once; the targets take the parsed value
        try:
            spec = PlayerSpec.parse(name)
        except PlayerSpecError as err:
            raise TuneError(f"target {name!r}: {err}") from None
        if search:
            return _search_target(game, spec)
        if name.startswith("lookahead:hand:"):
            return _hand_target(game, spec, hand)
        return _blend_target(game, spec)
    extra = [HAND_TARGET, BLEND_TARGET] if hand is not None else []
    listed = ", ".join([*own, SEARCH_TARGET, *extra])
    raise TuneError(f"unknown target {name!r} for {game.spec.name}; targets: {listed}")


def _search_target(game: Game, spec: PlayerSpec) -> TuneTarget:
    """``search:<leaf>:<simulations>[:key=value]``: the search's ``c_uct``."""
    weight = WeightSpec("c_uct", ISMCTSConfig.c_uct, 0.05, 6.0, 1.0)
    return _option_target(game, spec, weight, "the search's UCT exploration constant")


def _blend_target(game: Game, spec: PlayerSpec) -> TuneTarget:
    """``lookahead:tables+hand:<depth>:tables=<dir>``: the blend's weight ``hand``."""
    weight = WeightSpec("hand", 0.25, 0.0, 2.0, 0.25)
    return _option_target(game, spec, weight, "the blend's weight on the hand-written terms")


def _option_target(game: Game, spec: PlayerSpec, weight: WeightSpec, doc: str) -> TuneTarget:
    """A player spec with one option tuned: ``<spec>:<weight.name>=<value>``."""
    if weight.name in spec.kwargs:
        raise TuneError(
            f"target {spec.text!r}: {weight.name} is the tuned weight, leave it out of the spec"
        )
    try:
        make_player(spec, game)  # a bad spec (or tables directory) is refused now, in one line
    except (PlayerSpecError, ValueError) as err:
        raise TuneError(f"target {spec.text!r}: {err}") from None

    def build(game: Game, values: Mapping[str, float]) -> Player:
        return make_player(spec.with_option(weight.name, values[weight.name]), game)

    return TuneTarget(spec.text, (weight,), build, doc=doc)


def _hand_target(game: Game, spec: PlayerSpec, factory: Any) -> TuneTarget:
    """``lookahead:hand:<depth>[:worlds=W]``: the hand value's term weights (module doc)."""
    from omega_cluster.players.lookahead import LookaheadPlayer
    from omega_cluster.search.evaluators import HeuristicEvaluator

    try:
        make_player(spec, game)  # a bad depth or option is refused now, in one line
    except (PlayerSpecError, ValueError) as err:
        raise TuneError(f"target {spec.text!r}: {err}") from None
    args, options = spec.args, spec.kwargs
    base = factory(game).weights
    terms = {k: float(v) for k, v in dataclasses.asdict(base).items() if k != "scale"}

    def build(game: Game, values: Mapping[str, float]) -> Player:
        weights = factory(game, weights={**dataclasses.asdict(base), **values})
        leaf = HeuristicEvaluator(weights, name="hand")
        return LookaheadPlayer(game, leaf, *args[1:], **options)

    return TuneTarget(
        spec.text,
        tuple(spec_from_default(name, value) for name, value in terms.items()),
        build,
        doc="the hand-written value's term weights, as the lookahead search's leaf",
    )


@lru_cache(maxsize=16)
def job_context(
    game: str, params: tuple[tuple[str, Any], ...], target: str
) -> tuple[Game, TuneTarget]:
    """The game and target of a job, built once per process (games are immutable)."""
    built = make_game(game, **dict(params))
    return built, resolve_target(built, target)
