"""Blind War's rules: a complete small game written against omega_cluster's game contract.

It has everything the contract covers except simultaneous moves: 2–4 players, hidden hands,
implicit chance (the deal comes from the seed), a fixed action space and a determinization sampler.

Rules: a deck of cards 1..``deck`` is shuffled and each player is dealt ``hand`` cards, face down.
In each of ``hand`` tricks, players lead in turn (player 0 leads the first trick, the trick's
winner leads the next) and each plays one card face up. The highest card wins the trick. The
player with the most tricks wins; tied players share the win. Action ``c - 1`` plays card ``c``.
"""

from __future__ import annotations

import random
from typing import Any

from omega_cluster.games.api import Game, GameSpec, ParamSpec, RngLike, State, as_rng

__all__ = ["BlindWarGame", "BlindWarState"]


class BlindWarGame(Game):
    """Trick taking with hidden hands: the highest card takes the trick, most tricks win."""

    name = "blind_war"
    parameters = {
        "players": ParamSpec(2, "number of players", int, minimum=2, maximum=4),
        "deck": ParamSpec(13, "cards are numbered 1..deck", int, minimum=2, maximum=52),
        "hand": ParamSpec(3, "cards dealt to each player (= number of tricks)", int, minimum=1),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        n, deck, hand = self.params["players"], self.params["deck"], self.params["hand"]
        if n * hand > deck:
            raise ValueError(f"blind_war: {n} players x {hand} cards need a deck of {n * hand}")
        self.spec = GameSpec(
            name=self.name,
            num_players=n,
            min_players=2,
            max_players=4,
            num_actions=deck,
            simultaneous=False,
            hidden_information=True,
            explicit_chance=False,
            max_game_length=n * hand,
            min_return=0.0,
            max_return=1.0,
        )

    def new_initial_state(self, seed: int = 0) -> BlindWarState:
        n, hand = self.params["players"], self.params["hand"]
        cards = list(range(1, self.params["deck"] + 1))
        random.Random(seed).shuffle(cards)
        hands = [sorted(cards[i * hand : (i + 1) * hand]) for i in range(n)]
        return BlindWarState(self, hands, seed)

    def describe_action(self, action: int) -> str:
        return f"play {action + 1}"


class BlindWarState(State):
    __slots__ = ("hands", "leader", "seed", "table", "tricks")

    def __init__(self, game: BlindWarGame, hands: list[list[int]], seed: int) -> None:
        self.game = game
        self.history = []
        self.hands = hands  # hidden: each player's cards in hand
        self.table: list[int] = []  # cards played in the current trick, in play order
        self.leader = 0  # who led the current trick
        self.tricks = [0] * len(hands)  # tricks won so far (public)
        self.seed = seed

    @property
    def current_players(self) -> tuple[int, ...]:
        if not self.hands[self.leader] and not self.table:
            return ()
        return ((self.leader + len(self.table)) % len(self.hands),)

    def legal_actions(self, player: int | None = None) -> list[int]:
        acting = self.current_players
        if player is None:
            player = acting[0] if acting else -1
        if player not in acting:
            return []
        return [c - 1 for c in self.hands[player]]

    def _apply_action(self, action: int) -> None:
        player = self.current_players[0]
        self.hands[player].remove(action + 1)
        self.table.append(action + 1)
        self.history.append(action)
        n = len(self.hands)
        if len(self.table) == n:  # trick complete: the highest card takes it
            best = max(range(n), key=lambda i: self.table[i])
            winner = (self.leader + best) % n
            self.tricks[winner] += 1
            self.leader = winner
            self.table = []

    def returns(self) -> tuple[float, ...]:
        if self.current_players:
            return (0.0,) * len(self.hands)
        most = max(self.tricks)
        winners = sum(1 for t in self.tricks if t == most)
        return tuple(1.0 / winners if t == most else 0.0 for t in self.tricks)

    def observation(self, player: int) -> tuple[object, ...]:
        # Own hand plus everything played in public order (the history is the public log here).
        return (player, tuple(self.hands[player]), tuple(self.history))

    def information_set_key(self, player: int) -> tuple[object, ...]:
        return self.observation(player)

    def sample_world(self, player: int, rng: RngLike, constraints: Any = None) -> BlindWarState:
        # Determinization: every card the player has not seen (other hands and the undealt rest of
        # the deck) is re-dealt at random; hand sizes are public, so they are kept.
        r = as_rng(rng)
        seen = set(self.hands[player]) | {a + 1 for a in self.history if isinstance(a, int)}
        unseen = [c for c in range(1, self.game.params["deck"] + 1) if c not in seen]
        r.shuffle(unseen)
        world = self.clone()
        for q, hand in enumerate(self.hands):
            if q != player:
                world.hands[q] = sorted(unseen[: len(hand)])
                del unseen[: len(hand)]
        return world

    def clone(self) -> BlindWarState:
        twin = BlindWarState.__new__(BlindWarState)
        twin.game, twin.history, twin.seed = self.game, list(self.history), self.seed
        twin.hands = [list(h) for h in self.hands]
        twin.table, twin.leader, twin.tricks = list(self.table), self.leader, list(self.tricks)
        return twin

    def render(self) -> str:
        hands = "  ".join(f"P{i}:{h}" for i, h in enumerate(self.hands))
        return f"tricks={self.tricks} leader=P{self.leader} table={self.table}  {hands}"
