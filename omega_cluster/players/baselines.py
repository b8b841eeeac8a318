"""Rule-based baseline players for the small reference games (Kuhn, Leduc, Goofspiel).

They are the fixed anchors the arena and the gatekeeper rate against (``make_player("heuristic",
game)`` builds the one for the game, see :mod:`omega_cluster.players.registry`): cheap, legal,
clearly better than :class:`~omega_cluster.games.player.RandomPlayer`, and far from optimal. Each
decides only from ``state.observation(player)`` (what that seat may know), so it never peeks at
hidden cards. Construct as ``Cls(game, **knobs)``; ``act(state, player, rng) -> action``.
"""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State
from omega_cluster.games.goofspiel import GoofspielObservation
from omega_cluster.games.kuhn_poker import BET, PASS, KuhnObservation
from omega_cluster.games.leduc_poker import CALL, FOLD, RAISE, LeducObservation

__all__ = ["GoofspielMatchPlayer", "KuhnRulePlayer", "LeducRulePlayer"]


def _check_game(player: object, game: Game, name: str) -> None:
    if game.spec.name != name:
        raise ValueError(f"{type(player).__name__} plays {name}, not {game.spec.name}")


class KuhnRulePlayer:
    """Kuhn poker by card strength (for any player count; ``N + 1`` cards ranked ``0..N``):

    * the highest card bets, and calls any bet;
    * the lowest card passes and folds to a bet, except that it opens with a bet (a bluff) with
      probability ``bluff``;
    * a middle card checks when nobody has bet and calls a bet with probability ``call_middle``
      (1/3 is what the equilibrium does with the Queen in two-player Kuhn when facing a bet).
    """

    name = "kuhn_rules"

    def __init__(self, game: Game, *, bluff: float = 0.0, call_middle: float = 1 / 3) -> None:
        _check_game(self, game, "kuhn_poker")
        if not (0.0 <= bluff <= 1.0 and 0.0 <= call_middle <= 1.0):
            raise ValueError(f"bluff={bluff} and call_middle={call_middle} must be in [0, 1]")
        self.game = game
        self.bluff = bluff
        self.call_middle = call_middle
        self.top = game.num_players  # highest card

    def act(self, state: State, player: int, rng: random.Random) -> int:
        obs = state.observation(player)
        assert isinstance(obs, KuhnObservation)
        facing_bet = BET in obs.bets
        if obs.card == self.top:
            return BET
        if obs.card == 0:
            return BET if not facing_bet and rng.random() < self.bluff else PASS
        if facing_bet:
            return BET if rng.random() < self.call_middle else PASS
        return PASS

    def __repr__(self) -> str:
        return f"KuhnRulePlayer(bluff={self.bluff}, call_middle={self.call_middle})"


class LeducRulePlayer:
    """Leduc poker by hand strength (ranks ``J < Q < K`` heads-up; more ranks with more players):

    * raise with a pair (private card matches the board) or the top rank (K); call instead when the
      round's two raises are used up;
    * call (or check) with a middle rank;
    * with the lowest rank (J) and no pair: check, and fold when facing a bet.
    """

    name = "leduc_rules"

    def __init__(self, game: Game) -> None:
        _check_game(self, game, "leduc_poker")
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


class GoofspielMatchPlayer:
    """The classic "matching" Goofspiel strategy: bid the card equal to the prize.

    When that card is already spent, bid the cheapest card above the prize (still likely to win it);
    when none is left above, throw away the lowest card.
    """

    name = "goofspiel_match"

    def __init__(self, game: Game) -> None:
        _check_game(self, game, "goofspiel")
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
