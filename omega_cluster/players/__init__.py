"""Players: the Player protocol and its kinds (random, heuristic, search, pure network).

``make_player("commander", game)`` builds any registered player from a spec string. The
rule-based players are the games' own (the Mexican Train officers in
:mod:`omega_cluster.games.mexican_train.officers`, each small game's baseline in its module); the
registry asks the game's plugin for them and imports them lazily.
"""

from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.players.registry import (
    PlayerSpec,
    PlayerSpecError,
    available_players,
    make_player,
    parse_player_spec,
    register_heuristic,
    register_player,
)

__all__ = [
    "Player",
    "PlayerSpec",
    "PlayerSpecError",
    "RandomPlayer",
    "available_players",
    "make_player",
    "parse_player_spec",
    "register_heuristic",
    "register_player",
]
