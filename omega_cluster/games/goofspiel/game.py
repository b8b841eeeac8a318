"""Goofspiel's parameters: :class:`GoofspielGame` validates OpenSpiel's parameters, builds the spec
and precomputes the bit widths of the information-set codes every state shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from omega_cluster.games.api import CHANCE, Game, GameSpec, InvalidParameterError, ParamSpec
from omega_cluster.games.goofspiel.state import GoofspielState

__all__ = ["GoofspielGame"]

_ORDERS = ("random", "descending", "ascending")
_RETURNS = ("win_loss", "point_difference", "total_points")


class GoofspielGame(Game):
    """Goofspiel for 2..10 players (OpenSpiel ``goofspiel``)."""

    name: ClassVar[str] = "goofspiel"
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "players": ParamSpec(2, "number of players", int, minimum=2, maximum=10),
        "num_cards": ParamSpec(13, "cards per hand and point cards", int, minimum=1, maximum=64),
        "num_turns": ParamSpec(
            -1, "turns to play, -1 for num_cards (num_cards - 1 never ends, as in OpenSpiel)", int
        ),
        "points_order": ParamSpec("random", "order of the point cards", str, choices=_ORDERS),
        "returns_type": ParamSpec("win_loss", "what returns() reports", str, choices=_RETURNS),
        "imp_info": ParamSpec(False, "bids stay hidden; only turn winners are public", bool),
        "egocentric": ParamSpec(False, "OpenSpiel tensor layout only; no effect here", bool),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n, nc = self.params["players"], self.params["num_cards"]
        turns = self.params["num_turns"]
        if turns == -1:
            turns = nc
        # OpenSpiel plays turn num_cards - 1 automatically and only ends at num_turns, so
        # num_turns == num_cards - 1 (or 0) leaves a state with no moves that never ends.
        if not 1 <= turns <= nc or turns == nc - 1:
            raise InvalidParameterError(
                f"goofspiel: parameter num_turns={self.params['num_turns']} is not allowed for "
                f"num_cards={nc}; allowed: -1, or 1..{nc} except {nc - 1}"
            )
        self.num_cards: int = nc
        self.num_turns: int = turns
        self.order = _ORDERS.index(self.params["points_order"])  # 0 random, 1 desc, 2 asc
        self.returns_kind = _RETURNS.index(self.params["returns_type"])
        self.imp_info: bool = self.params["imp_info"]
        total = nc * (nc + 1) // 2
        bounds = ((-1.0, 1.0), (-total / n, total * (n - 1) / n), (0.0, float(total)))
        self.spec = GameSpec(
            name=self.name,
            num_players=n,
            min_players=2,
            max_players=10,
            num_actions=nc,
            simultaneous=True,
            hidden_information=self.imp_info,
            explicit_chance=self.order == 0,
            objectives=("win", "points"),
            objective="win" if self.returns_kind == 0 else "points",
            max_game_length=turns,
            min_return=bounds[self.returns_kind][0],
            max_return=bounds[self.returns_kind][1],
            zero_sum=self.returns_kind != 2,
        )
        self._all = tuple(range(n))
        self._full = (1 << nc) - 1  # a full hand or deck
        # public code digits: point card + 1, then winner + 2 (1 = tie), alternating
        self._digit_bits = max(nc, n + 1).bit_length()
        self._bid_bits = nc.bit_length()  # own-bid code digits: bid + 1
        # The inline two-player turn of GoofspielState.apply_joint_action: it runs when the acting
        # tuple is this one (two players, no imp_info: None never matches), and it opens the next
        # turn's chance node itself while the turns played stay below _chance_until (random order,
        # neither the automatic last turn nor the end follows).
        self._inline_pair = self._all if n == 2 and not self.imp_info else None
        self._chance_until = min(turns, nc - 1) if self.order == 0 else 0

    def new_initial_state(self, seed: int = 0) -> GoofspielState:
        """Before the first point card; ``seed`` is unused (every chance event is explicit)."""
        return GoofspielState(self)

    def describe_action(self, action: int, player: int | None = None) -> str:
        """``bid 7`` (action 6); with ``player=CHANCE``, the point card turned (``point card 7``)."""
        if not 0 <= action < self.num_cards:
            return f"unknown action {action}"
        return f"point card {action + 1}" if player == CHANCE else f"bid {action + 1}"
