"""The pattern contract of n-tuple value tables: what a game declares so a lookup table can value
its positions (:mod:`omega_cluster.search.ntuple` holds the tables and their training).

A game reads a position through small windows (a *pattern*): each window maps what one seat can
see to one index into the table of its **family**. Windows of one family share one table, so one
entry serves every symmetric place (every train end, every suit). The value of a position for a
seat is the sum of the entries its windows look up, in win-probability units.

A :class:`PatternSet` is what the game's plugin hook ``ntuple_patterns`` builds for a game
(``factory(game) -> PatternSet``). Its :meth:`PatternSet.extract` reads ONLY what ``seat`` may
know in ``state``: its own hand, the public board and the public counts. On a sampled world (a
full state the search drew) the seat's own hand is the world's, and every other hidden part is
never read, so the same tables serve the search's leaf and the training policy.

Indices are global: family ``f``'s local index ``i`` is ``offsets[f] + i`` in one concatenated
table (:meth:`PatternSet.index`), so a lookup is one fancy-indexing sum over a flat array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.games.api import State

__all__ = ["PatternFamily", "PatternSet"]


@dataclass(frozen=True)
class PatternFamily:
    """One shared table: its name (unique in a set) and its number of entries."""

    name: str
    size: int

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.size, int) or self.size < 1:
            raise ValueError(
                f"PatternFamily({self.name!r}, {self.size!r}): need a name and size >= 1"
            )


class PatternSet:
    """A game's windows: its families (tables), a version, and :meth:`extract`.

    Subclasses set :attr:`name` and :attr:`version` (bump the version whenever an index changes
    meaning: saved tables record it and a mismatch is refused) and implement :meth:`extract`.
    """

    name: str = "patterns"
    version: int = 1

    def __init__(self, families: Sequence[PatternFamily]) -> None:
        names = [f.name for f in families]
        if not families or len(set(names)) != len(names):
            raise ValueError(f"a PatternSet needs families with unique names, got {names}")
        self.families: tuple[PatternFamily, ...] = tuple(families)
        offsets = np.cumsum([0, *(f.size for f in families)])
        self.offsets: tuple[int, ...] = tuple(int(o) for o in offsets[:-1])
        self.size: int = int(offsets[-1])

    def index(self, family: int, local: int) -> int:
        """The global index of entry ``local`` of family number ``family``."""
        return self.offsets[family] + local

    def extract(self, state: State, seat: int) -> np.ndarray:
        """The global indices (int64[k]) ``seat``'s windows look up in ``state`` (a decision
        node or a terminal state); reads only what ``seat`` may know."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """The JSON layout saved beside the tables (checked when tables are loaded)."""
        return {
            "name": self.name,
            "version": self.version,
            "families": [{"name": f.name, "size": f.size} for f in self.families],
        }
