"""Players: the Player protocol and its kinds (random, heuristic, search, pure network)."""

from omega_cluster.players.base import Player, RandomPlayer

__all__ = ["Player", "RandomPlayer"]
