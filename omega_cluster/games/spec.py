"""The static description of a game: its parameters (:class:`ParamSpec`) and its shape
(:class:`GameSpec`: table size, action space, simultaneity, hidden information, objectives).

A game declares one :class:`ParamSpec` per keyword parameter; :meth:`ParamSpec.check` refuses a
value with an error that names the parameter and the allowed values. The contract
(:mod:`omega_cluster.games.api`) re-exports both names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omega_cluster.games.errors import InvalidParameterError

__all__ = ["GameSpec", "ParamSpec"]


@dataclass(frozen=True)
class ParamSpec:
    """One game parameter: its default, the type it must have and, optionally, the allowed values."""

    default: Any
    doc: str
    kind: type | tuple[type, ...] = object  # accepted Python type(s)
    choices: tuple[Any, ...] | None = None  # allowed values, when the set is finite
    minimum: float | None = None  # inclusive bounds for numbers
    maximum: float | None = None

    def check(self, game: str, name: str, value: Any) -> Any:
        """Return ``value`` (coerced where harmless) or raise an error naming the allowed values."""
        if self.kind is not object:
            kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
            if float in kinds and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if bool not in kinds and isinstance(value, bool):
                ok = False
            else:
                ok = isinstance(value, kinds)
            if not ok:
                names = "/".join(k.__name__ for k in kinds)
                raise InvalidParameterError(
                    f"{game}: parameter {name}={value!r} must be of type {names}; {self.describe()}"
                )
        if self.choices is not None and value not in self.choices:
            raise InvalidParameterError(
                f"{game}: parameter {name}={value!r} is not allowed; {self.describe()}"
            )
        if self.minimum is not None and value < self.minimum:
            raise InvalidParameterError(
                f"{game}: parameter {name}={value!r} is below the minimum; {self.describe()}"
            )
        if self.maximum is not None and value > self.maximum:
            raise InvalidParameterError(
                f"{game}: parameter {name}={value!r} is above the maximum; {self.describe()}"
            )
        return value

    def describe(self) -> str:
        if self.choices is not None:
            allowed = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.minimum is not None or self.maximum is not None:
            lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
            hi = "inf" if self.maximum is None else f"{self.maximum:g}"
            allowed = f"in [{lo}, {hi}]"
        else:
            allowed = "any value"
        return f"allowed: {allowed} (default {self.default!r}) — {self.doc}"


@dataclass(frozen=True)
class GameSpec:
    """The static shape of a game, as the search, the encoders and the arena need it."""

    name: str  # registry name, e.g. "mexican_train"
    num_players: int  # players at this table (a Game instance has a fixed count)
    min_players: int  # range the game supports
    max_players: int
    num_actions: int  # size of the fixed action space: action ids are 0..num_actions-1
    simultaneous: bool  # some nodes have several acting players
    hidden_information: bool  # some players cannot see part of the state
    explicit_chance: bool  # has CHANCE nodes (otherwise chance is resolved from the seed)
    objectives: tuple[str, ...] = ("win",)  # objectives this game can be scored on
    objective: str = "win"  # the objective of this instance
    max_game_length: int | None = None  # upper bound on decisions, when known
    min_return: float | None = None  # bounds of a player's return, when known
    max_return: float | None = None
    zero_sum: bool = False
