"""The checks of a config's fields, with one wording: :class:`FieldError` and :class:`FieldChecks`.

A component's frozen config (``SelfPlayConfig``, ``LearnerConfig``, ``ModelConfig``,
``GateConfig``) checks its own fields in ``__post_init__`` with :class:`FieldChecks`, so a direct
Python user is protected; the settings layer (:mod:`omega_cluster.config`) builds that config from
its keys and reports the error under its own key name (:meth:`FieldError.describe`), so each value
is checked in one place, and a problem reads the same from both:
``<name>=<value> must be an int >= 1``, ``<name>=<value> is not allowed; allowed: a, b``,
``<name>=<value> must be a finite number in [0, 1)``. The ``*_problem`` functions give that
requirement text (None when the value passes); the settings layer words its own checks with them.

A budget (simulations, concurrent games, batch and window rows) is also checked against the memory
this process may use (:func:`memory_allowance`): :func:`budget_problem` reads
``needs ~<bytes> for <what>; this machine allows at most <N> (MemAvailable <bytes>)`` from the
bytes the value would take (a cost function its owner derives from the arrays it allocates), and
:func:`check_allocation` refuses an allocation at run time with the same words, on one line
(:class:`MemoryBoundError`), instead of numpy's ``MemoryError`` traceback.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Self

from omega_cluster.errors import UserError

__all__ = [
    "FieldChecks",
    "FieldError",
    "MemoryAllowance",
    "MemoryBoundError",
    "budget_problem",
    "check_allocation",
    "choice_problem",
    "flag_problem",
    "format_bytes",
    "int_problem",
    "memory_allowance",
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


@dataclass(frozen=True)
class MemoryAllowance:
    """The bytes this process may allocate and where that bound comes from (``source``, e.g.
    ``MemAvailable 20 GiB`` or ``cgroup memory.max 8 GiB``)."""

    bytes: int
    source: str


_MEMINFO = Path("/proc/meminfo")
_CGROUP_V2 = Path("/sys/fs/cgroup")
_CGROUP_V1 = Path("/sys/fs/cgroup/memory")
_NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as a number near 2**63


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # cgroup v2 "max": no limit


def _meminfo(field: str) -> int | None:
    try:
        lines = _MEMINFO.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        name, _, rest = line.partition(":")
        if name == field and rest.split() and rest.split()[0].isdigit():
            return int(rest.split()[0]) * 1024  # kB
    return None


def memory_allowance() -> MemoryAllowance | None:
    """What this process may allocate now: the smaller of the machine's available memory
    (``/proc/meminfo`` MemAvailable; else physical memory, ``SC_PHYS_PAGES`` × ``SC_PAGE_SIZE``)
    and its cgroup's room (``memory.max`` less ``memory.current``, when a limit is set). None when
    neither can be read (no bound is then checked)."""
    bounds: list[MemoryAllowance] = []
    available = _meminfo("MemAvailable")
    if available is not None:
        bounds.append(MemoryAllowance(available, f"MemAvailable {format_bytes(available)}"))
    else:
        try:
            physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            physical = -1
        if physical > 0:
            bounds.append(MemoryAllowance(physical, f"physical memory {format_bytes(physical)}"))
    for limit_file, used_file in (("memory.max", "memory.current"),
                                  ("memory.limit_in_bytes", "memory.usage_in_bytes")):  # fmt: skip
        folder = _CGROUP_V2 if limit_file == "memory.max" else _CGROUP_V1
        limit = _read_int(folder / limit_file)
        if limit is None or limit >= _NO_LIMIT:
            continue
        room = max(0, limit - (_read_int(folder / used_file) or 0))
        bounds.append(MemoryAllowance(room, f"cgroup {limit_file} {format_bytes(limit)}, "
                                            f"{format_bytes(room)} free"))  # fmt: skip
        break
    return min(bounds, key=lambda bound: bound.bytes) if bounds else None


def format_bytes(count: float) -> str:
    """``count`` bytes in binary units, about three digits: ``512 B``, ``1.5 GiB``, ``37 TiB``."""
    value, unit = float(count), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value, unit = value / 1024, bigger
    if unit == "B":
        return f"{int(value)} B"
    return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"


_SMALL = 1 << 28  # a budget that needs no more than this is never refused (memory not read)


def budget_problem(value: Any, cost: Callable[[int], int], what: str) -> str | None:
    """The requirement text of a budget ``value`` whose ``cost(value)`` bytes (``what``: what
    they hold, e.g. "the search tree") exceed :func:`memory_allowance`, naming the largest value
    that fits (None: the value fits, is not an int >= 0, or the memory cannot be read). ``cost``
    must grow with the value."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None  # the int check's to report
    need = cost(value)
    if need <= _SMALL:
        return None
    allowance = memory_allowance()
    if allowance is None or need <= allowance.bytes:
        return None
    low, high = 0, value  # cost(low) fits (or low = 0), cost(high) does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if cost(middle) <= allowance.bytes else (low, middle)
    return (
        f"needs ~{format_bytes(need)} for {what}; this machine allows at most {low} "
        f"({allowance.source})"
    )


class MemoryBoundError(UserError, MemoryError):
    """An allocation refused before it is tried: it would exceed :func:`memory_allowance`."""


def check_allocation(what: str, nbytes: int) -> None:
    """Raise :class:`MemoryBoundError` (one line) when ``nbytes`` for ``what`` exceed
    :func:`memory_allowance`."""
    if nbytes <= _SMALL:
        return
    allowance = memory_allowance()
    if allowance is not None and nbytes > allowance.bytes:
        raise MemoryBoundError(
            f"{what} needs ~{format_bytes(nbytes)}; this machine allows at most "
            f"{format_bytes(allowance.bytes)} ({allowance.source})"
        )


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

    def budget(self, name: str, cost: Callable[[int], int], what: str) -> None:
        """``name``'s value must fit in memory: ``cost(value)`` bytes (:func:`budget_problem`)."""
        self._check(name, budget_problem(self._value(name), cost, what))

    def refuse(self, name: str, requirement: str, **others: Any) -> NoReturn:
        """Raise: ``name``'s value breaks ``requirement`` (``{other}``: another field, named
        with its value; ``others``: those values)."""
        raise self._error.refuse(self._owner, name, self._value(name), requirement, **others)
