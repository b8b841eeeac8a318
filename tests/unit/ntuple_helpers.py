"""A tiny pattern set for the n-tuple tests (Kuhn poker: own card x betting so far)."""

from __future__ import annotations

import numpy as np

from omega_cluster.games.api import State
from omega_cluster.games.patterns import PatternFamily, PatternSet


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
