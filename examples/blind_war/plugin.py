"""Blind War as one plugin: the rules, the encoder, the rule-based player and the compiled
kernels, behind the one typed object the service asks (the same shape as a built-in game's
``PLUGIN``)."""

from __future__ import annotations

from omega_cluster.games.plugin import GamePlugin

from .encoder import BlindWarEncoder
from .game import BlindWarGame
from .players import CheapWinner

__all__ = ["PLUGIN"]

PLUGIN = GamePlugin(
    name="blind_war",
    game=BlindWarGame,
    encoder=BlindWarEncoder,
    encoder_options=(),  # the encoder's layout follows from the game's parameters alone
    players={"heuristic": CheapWinner, "cheap_winner": CheapWinner},
    # the compiled kernels (numba, imported only when the search asks): docs/kernels.md
    fast_search=f"{__package__}.fast:for_game",
)
