"""OpenSpiel adapter encoder: pyspiel's own tensors for any ``openspiel:<name>`` game.

Observation: pyspiel's ``information_state_tensor(player)`` where the game provides it (perfect
recall), else its ``observation_tensor(player)`` — exactly what
:meth:`omega_cluster.games.openspiel.OpenSpielState.observation_tensor` returns. These tensors are
not seat-relative (most include the player's one-hot), but the network's values still are.
Action features: the action id one-hot over pyspiel's ``num_distinct_actions``.
Hidden state (``info().hidden``, training only, imperfect-information games of two or more
players): the other players' tensors, concatenated (:meth:`OpenSpielState.hidden_state`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from omega_cluster.games.api import Game, State
from omega_cluster.games.encoding import (
    EncoderError,
    EncoderInfo,
    HiddenSpec,
    OneHotActions,
    Segment,
)
from omega_cluster.games.openspiel import OpenSpielGame, OpenSpielState

__all__ = ["OpenSpielEncoder"]


class OpenSpielEncoder:
    """Encoder for games wrapped by :class:`~omega_cluster.games.openspiel.OpenSpielGame`."""

    name = "openspiel"
    version = 1

    def __init__(self, game: Game) -> None:
        if not isinstance(game, OpenSpielGame):
            raise EncoderError(
                f"OpenSpielEncoder serves openspiel:<name> games, not {game.spec.name}"
            )
        self.game_name = game.spec.name
        self.max_players = game.num_players
        pg = game.pyspiel_game
        game_type = pg.get_type()
        if game_type.provides_information_state_tensor:
            self.tensor = "information_state_tensor"
            self.observation_size = int(pg.information_state_tensor_size())
        elif game_type.provides_observation_tensor:
            self.tensor = "observation_tensor"
            self.observation_size = int(pg.observation_tensor_size())
        else:
            raise EncoderError(
                f"{game.spec.name}: pyspiel provides neither an information-state nor an "
                "observation tensor; write an encoder for it (see omega_cluster.model.encoders)"
            )
        self._params = {k: v for k, v in game.params.items()}
        n = game.num_players
        self._hidden = (
            HiddenSpec(
                "vector",
                (n - 1) * self.observation_size,
                0,
                f"the other players' {self.tensor}s, seat player + 1 first",
            )
            if n > 1 and game.spec.hidden_information
            else None
        )
        self._actions = OneHotActions(game.spec.num_actions)
        self.action_feature_size = game.spec.num_actions

    def info(self) -> EncoderInfo:
        return EncoderInfo.of(
            self,
            options={"tensor": self.tensor, "game_params": self._params},
            observation_layout=(
                Segment(self.tensor, 0, self.observation_size, f"pyspiel's {self.tensor}"),
            ),
            action_layout=self._actions.layout,
            hidden=self._hidden,
        )

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        if not isinstance(state, OpenSpielState):
            raise EncoderError(f"OpenSpielEncoder needs an OpenSpielState, got {type(state)}")
        return state.observation_tensor(player)

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        return self._actions(legal)
