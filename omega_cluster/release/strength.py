"""A released network's strength table: measurements a bench made (e.g.
``bench/bench_champion.py``), given to the release command as a JSON file, rendered into the
model card as a markdown table.

The file is one JSON object::

    {"rows": [{"opponent": "commander", "players": 2, "games": 400,
               "statistic": "win rate", "value": 0.62, "low": 0.57, "high": 0.67,
               "command": "python -m bench.bench_champion ...", "seed": 7}],
     "note": "optional free text shown under the table"}

``low``/``high`` are the interval's ends (``null`` when none was measured); ``seed`` is an int or
a text such as ``"os-entropy"``. A file of another shape is refused in one line naming the file,
the row and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster.release.record import ReleaseError

__all__ = ["StrengthRow", "StrengthTable", "read_strength", "strength_markdown"]


@dataclass(frozen=True)
class StrengthRow:
    """One measurement of the released network against one opponent."""

    opponent: str  # player spec of the other seats, e.g. "commander"
    players: int  # table size
    games: int  # games behind the figure
    statistic: str  # what value measures, e.g. "win rate", "mean score", "Elo"
    value: float
    low: float | None  # the interval's lower end (None: not measured)
    high: float | None  # the interval's upper end
    command: str  # the command that measured it
    seed: int | str | None  # the bench's seed (a text such as "os-entropy" when not an int)


@dataclass(frozen=True)
class StrengthTable:
    """The rows of a strength file, and where they came from."""

    path: Path
    rows: tuple[StrengthRow, ...]
    note: str = ""


_FIELDS: dict[str, tuple[type, ...]] = {
    "opponent": (str,),
    "players": (int,),
    "games": (int,),
    "statistic": (str,),
    "value": (int, float),
    "low": (int, float, type(None)),
    "high": (int, float, type(None)),
    "command": (str,),
    "seed": (int, str, type(None)),
}


def read_strength(path: str | Path) -> StrengthTable:
    """The strength file at ``path`` (module docstring for its shape)."""
    file = Path(path)
    try:
        data = json.loads(file.read_text())
    except FileNotFoundError:
        raise ReleaseError(f"strength={path}: no such file") from None
    except (OSError, ValueError) as err:  # ValueError: bad JSON, bytes not UTF-8
        raise ReleaseError(f"strength={path}: not a JSON file ({err})") from None
    if not isinstance(data, Mapping) or not isinstance(data.get("rows"), list):
        raise ReleaseError(f'strength={path}: expected a JSON object {{"rows": [...]}}')
    note = data.get("note", "")
    if not isinstance(note, str):
        raise ReleaseError(f"strength={path}: note must be a text, got {note!r}")
    rows = tuple(_row(path, i, raw) for i, raw in enumerate(data["rows"]))
    return StrengthTable(file, rows, note)


def _row(path: str | Path, index: int, raw: Any) -> StrengthRow:
    where = f"strength={path}: row {index}"
    if not isinstance(raw, Mapping):
        raise ReleaseError(f"{where} is not an object")
    missing = [k for k in _FIELDS if k not in raw]
    unknown = [k for k in raw if k not in _FIELDS]
    if missing or unknown:
        what = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
        raise ReleaseError(f"{where}: {what}; fields: {', '.join(_FIELDS)}")
    for key, kinds in _FIELDS.items():
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, kinds):
            allowed = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
            raise ReleaseError(f"{where}: {key} must be {allowed}, got {value!r}")
    for key in ("players", "games"):
        if raw[key] < 1:
            raise ReleaseError(f"{where}: {key} must be >= 1, got {raw[key]!r}")
    for key in ("value", "low", "high"):
        if raw[key] is not None and not math.isfinite(raw[key]):
            raise ReleaseError(f"{where}: {key} must be a finite number, got {raw[key]!r}")
    return StrengthRow(**{k: raw[k] for k in _FIELDS})


def strength_markdown(rows: Sequence[StrengthRow]) -> str:
    """The rows as a markdown table (one line per row, the commands in code spans)."""
    lines = [
        "| opponent | players | games | statistic | value | interval | seed | command |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        interval = "—" if r.low is None or r.high is None else f"[{r.low:.4g}, {r.high:.4g}]"
        seed = "—" if r.seed is None else str(r.seed)
        command = f"`{r.command}`" if r.command else "—"
        lines.append(
            f"| {_cell(r.opponent)} | {r.players} | {r.games} | {_cell(r.statistic)} | "
            f"{r.value:.4g} | {interval} | {_cell(seed)} | {_cell(command)} |"
        )
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
