"""Games: the contract (api), the registry, the conformance suite and the built-in games."""

from omega_cluster.games.api import (
    CHANCE,
    ConstraintError,
    Game,
    GameError,
    GameInputError,
    GameSpec,
    IllegalActionError,
    InvalidParameterError,
    ParamSpec,
    ReplayError,
    SamplingNotSupportedError,
    State,
    as_rng,
)
from omega_cluster.games.registry import available_games, make_game, register_game

__all__ = [
    "CHANCE",
    "ConstraintError",
    "Game",
    "GameError",
    "GameInputError",
    "GameSpec",
    "IllegalActionError",
    "InvalidParameterError",
    "ParamSpec",
    "ReplayError",
    "SamplingNotSupportedError",
    "State",
    "as_rng",
    "available_games",
    "make_game",
    "register_game",
]
