"""The Player protocol and the simplest player, uniform random (Ensign among the officers).

A player picks one action for one seat: ``act(state, player, rng) -> action``. It receives the full
state, as OpenSpiel bots do, and is trusted to use only what ``player`` may know
(``state.observation(player)``, ``state.information_set_key(player)``, ``state.sample_world``);
the search's leak test checks this for searching players. At a simultaneous node each acting player
is asked separately and the arena assembles the joint action.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from omega_cluster.games.api import Game, State

__all__ = ["Player", "RandomPlayer"]


@runtime_checkable
class Player(Protocol):
    """Anything that picks a legal action for a seat."""

    name: str

    def act(self, state: State, player: int, rng: random.Random) -> int:
        """A legal action of ``player`` in ``state``. ``rng`` is the only source of randomness."""
        ...


class RandomPlayer:
    """Uniform over the legal actions (Ensign). Works for every game."""

    name = "random"

    def __init__(self, game: Game | None = None) -> None:
        self.game = game

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        return legal[int(rng.random() * len(legal))]

    def __repr__(self) -> str:
        return "RandomPlayer()"
