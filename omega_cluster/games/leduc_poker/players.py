"""Leduc poker's rule-based player: :class:`LeducRulePlayer`, the game's ``heuristic`` (a fixed
rating anchor). It reads only ``state.observation(player)``, so it never sees a hidden card.
"""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State
from omega_cluster.games.leduc_poker.game import LeducPokerGame
from omega_cluster.games.leduc_poker.rules import CALL, FOLD, RAISE, LeducObservation

__all__ = ["LeducRulePlayer"]


class LeducRulePlayer:
    """Leduc poker by hand strength (ranks ``J < Q < K`` heads-up; more ranks with more players):

    * raise with a pair (private card matches the board) or the top rank (K); call instead when the
      round's two raises are used up;
    * call (or check) with a middle rank;
    * with the lowest rank (J) and no pair: check, and fold when facing a bet.
    """

    name = "leduc_rules"

    def __init__(self, game: Game) -> None:
        if not isinstance(game, LeducPokerGame):
            raise ValueError(f"LeducRulePlayer plays leduc_poker, not {game.spec.name}")
        self.game = game
        self.isomorphic = bool(game.params["suit_isomorphism"])
        self.top = game.num_players  # highest rank

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, LeducObservation)
        legal = state.legal_actions(player)
        rank = obs.card if self.isomorphic else obs.card // 2
        board = -1 if obs.board < 0 else (obs.board if self.isomorphic else obs.board // 2)
        if rank == board or rank == self.top:
            return RAISE if RAISE in legal else CALL
        if rank == 0 and FOLD in legal:
            return FOLD
        return CALL

    def __repr__(self) -> str:
        return "LeducRulePlayer()"
