"""A tiny pattern set for the n-tuple tests (Kuhn poker: own card x betting so far)."""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from omega_cluster.games.api import State
from omega_cluster.games.patterns import PatternFamily, PatternSet
from omega_cluster.search.ntuple import TupleTables


class KuhnInfoSet(PatternSet):
    """One family: the seat's information set (own card and the bets), one entry each."""

    name = "test-kuhn-infoset"
    version = 1

    def __init__(self, game: object = None) -> None:
        super().__init__([PatternFamily("infoset", 64)])

    def extract(self, state: State, seat: int) -> np.ndarray:
        return np.array([state.information_set_key(seat) % 64], dtype=np.int64)  # type: ignore[operator]


class Flat(PatternSet):
    """Two families of given sizes; ``extract`` is unused (tests pass indices directly)."""

    name = "test-flat"
    version = 1

    def __init__(self, a: int = 6, b: int = 4) -> None:
        super().__init__([PatternFamily("a", a), PatternFamily("b", b)])


class Constant(PatternSet):
    """One entry every position looks up: a trivial window that any game can train."""

    name = "test-constant"
    version = 1

    def __init__(self, game: object = None) -> None:
        super().__init__([PatternFamily("all", 1)])

    def extract(self, state: State, seat: int) -> np.ndarray:
        return np.zeros(1, dtype=np.int64)


@dataclass(frozen=True)
class GreedyPolicy:
    """A one-ply greedy player over the tables (a stand-in for the lookahead policy)."""

    def __call__(self, tables: TupleTables) -> Greedy:
        return Greedy(tables)


class Greedy:
    name = "greedy"

    def __init__(self, tables: TupleTables) -> None:
        self.tables = tables

    def act(self, state: State, player: int, rng: random.Random) -> int:
        best, best_value = None, -np.inf
        for action in state.legal_actions(player):
            after = state.clone()
            after.apply_action(action)
            if not after.current_players:
                value = after.win_shares()[player]
            else:
                value = float(self.tables.value(self.tables.patterns.extract(after, player))[0])
            value += 1e-6 * rng.random()
            if value > best_value:
                best, best_value = action, value
        assert best is not None
        return best
