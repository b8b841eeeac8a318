"""Kuhn poker encoder: compact one-hots of the acting player's information state.

Observation: the player's seat (absolute: acting order matters in Kuhn), own card (rank one-hot),
and the public pass/bet sequence, one two-way one-hot per betting slot (at most ``2N - 1``).
Action features: the action id one-hot (pass, bet). Values are chips won, seat-relative.
Hidden state (``info().hidden``, training only): where each card is, relative to the player.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import (
    EncoderError,
    EncoderInfo,
    HiddenSpec,
    LayoutBuilder,
    OneHotActions,
)
from omega_cluster.games.kuhn_poker import KuhnPokerState

__all__ = ["KuhnPokerEncoder"]


class KuhnPokerEncoder:
    """Encoder for native ``kuhn_poker`` games (one player count per encoder)."""

    name = "kuhn_poker"
    game_name = "kuhn_poker"
    version = 1

    def __init__(self, game: Game) -> None:
        if game.spec.name != self.game_name:
            raise EncoderError(f"KuhnPokerEncoder serves kuhn_poker, not {game.spec.name}")
        n = self.max_players = self.num_players = game.num_players
        lay = LayoutBuilder()
        self._o_seat = lay.add("seat", n, "own seat (absolute), one-hot")
        self._o_card = lay.add("card", n + 1, "own card rank, one-hot (0 = lowest)")
        self._o_bets = lay.add("bets", 2 * (2 * n - 1), "betting slot k: pass, bet (one-hot)")
        self.observation_size = lay.size
        self._layout = tuple(lay.segments)
        self._actions = OneHotActions(2)
        self.action_feature_size = 2

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={"players": self.num_players},
            observation_layout=self._layout,
            action_layout=self._actions.layout,
            hidden=HiddenSpec(
                "locations",
                self.num_players + 1,
                1 + self.max_players,
                "per card rank: 0 own, 1 undealt, 1 + k the card of relative seat k",
            ),
        )

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        if not isinstance(state, KuhnPokerState):
            raise EncoderError(f"KuhnPokerEncoder needs a KuhnPokerState, got {type(state)}")
        obs = state.observation(player)
        out = np.zeros(self.observation_size, np.float32)
        out[self._o_seat + player] = 1.0
        if obs.card >= 0:
            out[self._o_card + obs.card] = 1.0
        for k, bet in enumerate(obs.bets):
            out[self._o_bets + 2 * k + bet] = 1.0
        return out

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        return self._actions(legal)
