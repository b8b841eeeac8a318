"""The checks of a config's fields, with one wording: :class:`FieldError` and :class:`FieldChecks`.

A component's frozen config (``SelfPlayConfig``, ``LearnerConfig``, ``ModelConfig``,
``GateConfig``) checks its own fields in ``__post_init__`` with :class:`FieldChecks`, so a direct
Python user is protected; the settings layer (:mod:`omega_cluster.config`) builds that config from
its keys and reports the error under its own key name (:meth:`FieldError.describe`), so each value
is checked in one place, and a problem reads the same from both:
``<name>=<value> must be an int >= 1``, ``<name>=<value> is not allowed; allowed: a, b``,
``<name>=<value> must be a finite number in [0, 1)``. The ``*_problem`` functions give that
requirement text (None when the value passes); the settings layer words its own checks with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, Self

from omega_cluster.errors import UserError

__all__ = [
    "FieldChecks",
    "FieldError",
    "choice_problem",
    "flag_problem",
    "int_problem",
    "number_problem",
]


class FieldError(UserError, ValueError):
    """A config's field refused. Built by :meth:`refuse` it knows the ``field``, its ``value``
    and the ``requirement`` it broke, whose ``{other}`` placeholders name the other fields of a
    rule across fields (``others``: their values), so a layer that calls the fields by other names
    can word it with its own (:meth:`describe`). Built from a message alone, ``field`` is None."""

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        value: Any = None,
        requirement: str = "",
        others: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.field, self.value, self.requirement = field, value, requirement
        self.others = dict(others or {})

    @classmethod
    def refuse(cls, owner: str, field: str, value: Any, requirement: str, **others: Any) -> Self:
        """The error of ``<owner>.<field>=<value> <requirement>``."""
        message = _describe(field, value, requirement, others, lambda name: f"{owner}.{name}")
        return cls(message, field=field, value=value, requirement=requirement, others=others)

    def describe(self, name: Callable[[str], str]) -> str:
        """The problem, each field called ``name(field)`` (an error built by :meth:`refuse`)."""
        if self.field is None:
            return str(self)
        return _describe(self.field, self.value, self.requirement, self.others, name)


def _describe(
    field: str,
    value: Any,
    requirement: str,
    others: Mapping[str, Any],
    name: Callable[[str], str],
) -> str:
    named = {other: f"{name(other)}={v!r}" for other, v in others.items()}
    return f"{name(field)}={value!r} {requirement.format_map(named)}"


def int_problem(value: Any, minimum: int | None = None, *, optional: bool = False) -> str | None:
    if optional and value is None:
        return None
    ok = isinstance(value, int) and not isinstance(value, bool)
    if ok and (minimum is None or value >= minimum):
        return None
    want = "an int" if minimum is None else f"an int >= {minimum}"
    return f"must be {want}{' or null' if optional else ''}"


def number_problem(
    value: Any,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    open_low: bool = False,
    open_high: bool = False,
    optional: bool = False,
) -> str | None:
    if optional and value is None:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and math.isfinite(value):
        above = value > low if open_low else value >= low
        below = value < high if open_high else value <= high
        if above and below:
            return None
    want = "a finite number" + _range_text(low, high, open_low, open_high)
    return f"must be {want}{' or null' if optional else ''}"


def _range_text(low: float, high: float, open_low: bool, open_high: bool) -> str:
    if high == math.inf:
        return "" if low == -math.inf else f" {'>' if open_low else '>='} {low:g}"
    if low == -math.inf:
        return f" {'<' if open_high else '<='} {high:g}"
    return f" in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"


def choice_problem(value: Any, allowed: Sequence[str]) -> str | None:
    if isinstance(value, str) and value in allowed:
        return None
    return f"is not allowed; allowed: {', '.join(allowed)}"


def flag_problem(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


class FieldChecks:
    """The checks of one config's fields (read from ``config``), each raising ``error`` (a
    :class:`FieldError`) named ``<type of config>.<field>`` at the first bad value."""

    def __init__(self, config: object, error: type[FieldError]) -> None:
        self._config, self._error, self._owner = config, error, type(config).__name__

    def _value(self, name: str) -> Any:
        return getattr(self._config, name)

    def _check(self, name: str, problem: str | None) -> None:
        if problem is not None:
            self.refuse(name, problem)

    def integer(self, name: str, minimum: int | None = None, *, optional: bool = False) -> None:
        self._check(name, int_problem(self._value(name), minimum, optional=optional))

    def number(
        self,
        name: str,
        low: float = -math.inf,
        high: float = math.inf,
        *,
        open_low: bool = False,
        open_high: bool = False,
        optional: bool = False,
    ) -> None:
        problem = number_problem(self._value(name), low, high, open_low=open_low,
                                 open_high=open_high, optional=optional)  # fmt: skip
        self._check(name, problem)

    def choice(self, name: str, allowed: Sequence[str]) -> None:
        self._check(name, choice_problem(self._value(name), allowed))

    def flag(self, name: str) -> None:
        self._check(name, flag_problem(self._value(name)))

    def refuse(self, name: str, requirement: str, **others: Any) -> NoReturn:
        """Raise: ``name``'s value breaks ``requirement`` (``{other}``: another field, named
        with its value; ``others``: those values)."""
        raise self._error.refuse(self._owner, name, self._value(name), requirement, **others)
