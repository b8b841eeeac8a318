"""Blind War's rule-based player: the anchor a trained network must beat (``heuristic``)."""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State

from .game import BlindWarState

__all__ = ["CheapWinner"]


class CheapWinner:
    """Win a trick as cheaply as possible, else throw the lowest card away.

    The leader plays its lowest card (a high lead is wasted against a random hand half the time);
    a follower plays the lowest card that beats every card on the table when it has one, else
    its lowest card. It reads only its own hand and the table, both in its observation.
    """

    name = "cheap_winner"

    def __init__(self, game: Game) -> None:
        if game.spec.name != "blind_war":
            raise ValueError(f"CheapWinner plays blind_war, not {game.spec.name}")
        self.game = game

    def act(self, state: State, player: int, rng: random.Random) -> int:
        assert isinstance(state, BlindWarState)
        hand = state.hands[player]  # sorted: the player's own cards
        best = max(state.table, default=0)
        winners = [c for c in hand if c > best] if state.table else []
        card = winners[0] if winners else hand[0]
        return card - 1

    def __repr__(self) -> str:
        return "CheapWinner()"
