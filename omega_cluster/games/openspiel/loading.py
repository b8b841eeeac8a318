"""Loading pyspiel games: the optional import of pyspiel, the game types the adapter accepts, and
the parameters of one game checked against pyspiel's own specification before it is loaded.

pyspiel is imported on first use (:func:`pyspiel_module`), so ``import omega_cluster`` never needs
it (``pip install 'omega_cluster[openspiel]'``).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping
from typing import Any, Final

from omega_cluster.games.api import InvalidParameterError, ParamSpec

__all__ = [
    "INSTALL_HINT",
    "find_game_type",
    "not_implemented",
    "parameter_specs",
    "probe_resample",
    "pyspiel_module",
    "registered_types",
    "resolve_and_load",
    "supported_openspiel_games",
    "unsupported_reason",
]

INSTALL_HINT: Final = (
    "OpenSpiel games need pyspiel: pip install 'omega_cluster[openspiel]' (package open_spiel)"
)


def pyspiel_module() -> Any:
    """The pyspiel module, imported on first use so ``import omega_cluster`` never needs it."""
    try:
        import pyspiel  # optional dependency: only OpenSpiel games need it
    except ImportError as err:
        raise ImportError(INSTALL_HINT) from err
    return pyspiel


@functools.cache
def registered_types() -> dict[str, Any]:
    return {t.short_name: t for t in pyspiel_module().registered_games()}


def unsupported_reason(game_type: Any) -> str | None:
    """Why the adapter refuses a game type, or None when it can wrap it."""
    gt = pyspiel_module().GameType
    if game_type.dynamics == gt.Dynamics.MEAN_FIELD:
        return "it is a mean-field game (no per-player states)"
    if game_type.chance_mode == gt.ChanceMode.SAMPLED_STOCHASTIC:
        return (
            "its chance events are sampled inside pyspiel (SAMPLED_STOCHASTIC), so a game cannot "
            "be replayed exactly from its action history"
        )
    if game_type.action_structs_only:
        return "it uses action structs only (no integer action ids)"
    return None


def supported_openspiel_games() -> list[str]:
    """pyspiel short names the adapter can wrap (sorted)."""
    return sorted(n for n, t in registered_types().items() if unsupported_reason(t) is None)


def find_game_type(name: Any) -> Any:
    """The pyspiel ``GameType`` of ``name``; an error naming the supported games otherwise."""
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(
            f"openspiel: parameter name={name!r} must be a pyspiel game name, one of: "
            f"{', '.join(supported_openspiel_games())}"
        )
    game_type = registered_types().get(name)
    if game_type is None:
        raise InvalidParameterError(
            f"openspiel: unknown pyspiel game {name!r}; supported games: "
            f"{', '.join(supported_openspiel_games())}"
        )
    reason = unsupported_reason(game_type)
    if reason is not None:
        raise InvalidParameterError(f"openspiel: game {name!r} is not supported: {reason}")
    return game_type


def parameter_specs(name: str) -> dict[str, ParamSpec]:
    """Every parameter ``OpenSpielGame(name=name, ...)`` accepts, with defaults and types."""
    kind = find_game_type(name)
    specs: dict[str, ParamSpec] = {"name": ParamSpec(name, "pyspiel short name", kind=str)}
    for key, default in sorted(kind.parameter_specification.items()):
        if key == "players":
            specs[key] = ParamSpec(
                default,
                "number of players",
                kind=int,
                minimum=kind.min_num_players,
                maximum=kind.max_num_players,
            )
        else:
            specs[key] = ParamSpec(
                default,
                f"pyspiel {type(default).__name__} parameter of {name}",
                kind=type(default),
            )
    return specs


def resolve_and_load(given: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """Check ``given`` against the game's parameters, load it; return (resolved params, game)."""
    name: str = find_game_type(given.get("name")).short_name
    specs = parameter_specs(name)
    label = f"openspiel:{name}"
    has_players = "players" in specs
    allowed = set(specs) | {"players"}

    def valid() -> str:
        listed = ", ".join(f"{k} ({p.describe()})" for k, p in specs.items())
        return listed if has_players else f"{listed}, players (the game's fixed player count)"

    unknown = sorted(set(given) - allowed)
    if unknown:
        raise InvalidParameterError(
            f"{label}: unknown parameter(s) {', '.join(unknown)}; valid parameters: {valid()}"
        )
    # Defaults are not checked: pyspiel uses sentinels (hanabi's players=0 means "the default").
    resolved = {
        k: spec.check(label, k, given[k]) if k in given else spec.default
        for k, spec in specs.items()
    }
    # Only values that differ from the defaults go to pyspiel, so the resolved dict (which lists
    # every default) rebuilds the very same game.
    to_pyspiel = {
        k: v for k, v in resolved.items() if k != "name" and (k in given and v != specs[k].default)
    }
    pyspiel = pyspiel_module()
    try:
        game = pyspiel.load_game(name, to_pyspiel)
    except Exception as err:  # SpielError, or IndexError/RuntimeError from some C++ loaders
        raise InvalidParameterError(
            f"{label}: pyspiel refused parameters {to_pyspiel!r}: {err}; valid parameters: {valid()}"
        ) from err
    fixed = game.num_players()
    if has_players:
        resolved["players"] = fixed  # the real count, where the default is a sentinel
    else:
        players = given.get("players", fixed)
        if isinstance(players, bool) or players != fixed:
            raise InvalidParameterError(
                f"{label}: parameter players={players!r} is not allowed; {name} is played by "
                f"exactly {fixed} players (it has no 'players' parameter)"
            )
        resolved["players"] = fixed
    return resolved, game


def probe_resample(game: Any) -> str | None:
    """Why ``sample_world`` cannot use pyspiel's ``resample_from_infostate`` for ``game``, or None.

    Walks to the first node that is not a chance node (random outcomes: always taking the first
    one loops forever in crazy_eights) and resamples there. Refused: pyspiel's base class
    answering "not implemented", and a world whose own history does not rebuild it (gin_rummy
    changes hidden cards without rewriting the history, so its worlds cannot be checked against
    what the player saw, and a world rebuilt from its history is the true state). Other errors
    count as implemented (some games only fail at chance nodes; the sampler works around those).
    """
    rng = random.Random(0)  # a constant sampler makes rejection samplers (hearts) loop forever
    state = game.new_initial_state()
    for _ in range(100_000):
        if not state.is_chance_node():
            break
        state.apply_action(rng.choice(state.chance_outcomes())[0])
    try:
        world = state.resample_from_infostate(max(0, state.current_player()), rng.random)
    except Exception as err:
        return "it does not implement resample_from_infostate" if not_implemented(err) else None
    rebuilt = game.new_initial_state()
    for action in world.history():
        rebuilt.apply_action(action)
    if str(rebuilt) != str(world):
        return (
            "its resample_from_infostate changes hidden cards without rewriting the history, so "
            "a world cannot be checked against what the player saw"
        )
    return None


def not_implemented(err: Exception) -> bool:
    return "not implemented" in str(err).lower()
