"""Players: the Player protocol and its kinds (random, heuristic, search, pure network).

``make_player("commander", game)`` builds any registered player from a spec string; the
Mexican Train officers live in :mod:`omega_cluster.games.mexican_train.officers` and the small games'
rule-based baselines in :mod:`omega_cluster.players.baselines` (both imported lazily).
"""

from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.players.registry import (
    PlayerSpecError,
    available_players,
    make_player,
    parse_player_spec,
    register_heuristic,
    register_player,
)

__all__ = [
    "Player",
    "PlayerSpecError",
    "RandomPlayer",
    "available_players",
    "make_player",
    "parse_player_spec",
    "register_heuristic",
    "register_player",
]
