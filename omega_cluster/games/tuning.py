"""Typed weight sets a tuner may tune: :class:`WeightSpec` (one weight) and :class:`TuneTarget`
(a weight set and how to build a player from it). A game gives its targets through its plugin
hook ``tune_targets`` (``factory() -> {name: TuneTarget}``); the tuner itself is
:mod:`omega_cluster.eval.tuning`.

A tuner searches in normalised coordinates ``z = (w − default) / scale``: every weight starts at
0 and one step moves each weight by about the same share of its own size, whatever its units.
The bounds are mapped the same way, and a value leaves the search clipped to ``[low, high]``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.player import Player

__all__ = ["Playout", "TuneError", "TuneTarget", "WeightSpec", "spec_from_default"]

Playout = Callable[[Game, Sequence[Mapping[str, float]], int], "tuple[float, ...] | None"]
"""``playout(game, values per seat, deal_seed) -> returns`` (None: not here; the tuner then
plays the game with the built players)."""


class TuneError(UserError, ValueError):
    """Bad tuning input: an unknown target or weight, a log of another run, a bad preset."""


@dataclass(frozen=True)
class WeightSpec:
    """One tuned weight: its name, default (where the search starts), bounds and scale (the
    weight change one unit of the normalised coordinate stands for)."""

    name: str
    default: float
    low: float
    high: float
    scale: float

    def __post_init__(self) -> None:
        numbers = (self.default, self.low, self.high, self.scale)
        if not all(isinstance(x, int | float) and math.isfinite(x) for x in numbers):
            raise TuneError(f"weight {self.name!r}: default, low, high and scale must be finite")
        if not self.low < self.default < self.high:
            raise TuneError(
                f"weight {self.name!r}: need low < default < high, got "
                f"{self.low} < {self.default} < {self.high}"
            )
        if self.scale <= 0:
            raise TuneError(f"weight {self.name!r}: scale must be > 0, got {self.scale}")

    def normalise(self, value: float) -> float:
        """``(value − default) / scale``: the weight in the search's coordinates."""
        return (float(value) - self.default) / self.scale

    def value(self, z: float) -> float:
        """The weight at normalised coordinate ``z``, clipped to ``[low, high]``."""
        return min(self.high, max(self.low, self.default + float(z) * self.scale))

    @property
    def bounds(self) -> tuple[float, float]:
        """``(low, high)`` in normalised coordinates."""
        return self.normalise(self.low), self.normalise(self.high)


def spec_from_default(name: str, default: float, *, spread: float = 3.0) -> WeightSpec:
    """A spec whose scale is the default's size (at least 1) and whose bounds lie ``spread``
    scales either side of the default: a weight may change sign, grow or vanish."""
    scale = max(abs(float(default)), 1.0)
    return WeightSpec(
        name, float(default), default - spread * scale, default + spread * scale, scale
    )


@dataclass(frozen=True)
class TuneTarget:
    """A weight set the tuner can tune: ``build(game, values) -> Player`` plays it.

    ``playout`` (optional) plays a whole game between the seats' weight sets faster than the
    built players (e.g. compiled); it must give the returns the built players would."""

    name: str
    specs: tuple[WeightSpec, ...]
    build: Callable[[Game, Mapping[str, float]], Player]
    doc: str = ""
    playout: Playout | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        names = [s.name for s in self.specs]
        if not names or len(set(names)) != len(names):
            raise TuneError(f"target {self.name!r}: needs weights with distinct names: {names}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.specs)

    def defaults(self) -> tuple[float, ...]:
        return tuple(s.default for s in self.specs)

    def values(self, z: Sequence[float]) -> tuple[float, ...]:
        """Weights (spec order) at normalised coordinates ``z``."""
        if len(z) != len(self.specs):
            raise TuneError(f"target {self.name!r}: {len(z)} coordinates for {len(self.specs)}")
        return tuple(s.value(x) for s, x in zip(self.specs, z, strict=True))

    def as_dict(self, values: Sequence[float]) -> dict[str, float]:
        return dict(zip(self.names, (float(v) for v in values), strict=True))

    def from_dict(self, values: Mapping[str, Any]) -> tuple[float, ...]:
        """Weights (spec order) from a mapping; a missing name keeps its default, an unknown
        one is refused by name."""
        unknown = sorted(set(values) - set(self.names))
        if unknown:
            raise TuneError(
                f"target {self.name!r}: unknown weight(s) {', '.join(map(repr, unknown))}; "
                f"allowed: {', '.join(self.names)}"
            )
        return tuple(float(values.get(s.name, s.default)) for s in self.specs)
