"""Goofspiel's rule-based player: :class:`GoofspielMatchPlayer`, the game's ``heuristic`` (a fixed
rating anchor). It reads only ``state.observation(player)``.
"""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State
from omega_cluster.games.goofspiel.game import GoofspielGame
from omega_cluster.games.goofspiel.state import GoofspielObservation

__all__ = ["GoofspielMatchPlayer"]


class GoofspielMatchPlayer:
    """The classic "matching" Goofspiel strategy: bid the card equal to the prize.

    When that card is already spent, bid the cheapest card above the prize (still likely to win it);
    when none is left above, throw away the lowest card.
    """

    name = "goofspiel_match"

    def __init__(self, game: Game) -> None:
        if not isinstance(game, GoofspielGame):
            raise ValueError(f"GoofspielMatchPlayer plays goofspiel, not {game.spec.name}")
        self.game = game

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, GoofspielObservation)
        prize = obs.point_cards[-1]  # the face-up card (bidding happens after it is turned)
        hand = obs.hands[0] if len(obs.hands) == 1 else obs.hands[player]
        if prize in hand:
            return prize
        above = [c for c in hand if c > prize]
        return above[0] if above else hand[0]

    def __repr__(self) -> str:
        return "GoofspielMatchPlayer()"
