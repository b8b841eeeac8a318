"""N-tuple value tables: one float row per pattern entry, the value of a position the sum of rows.

:class:`TupleTables` holds ``weights`` (float32[patterns.size, outputs]) for a game's
:class:`~omega_cluster.games.patterns.PatternSet`. A seat's value of a position is the sum of the
rows its windows look up (``value(patterns.extract(state, seat))``), in win-probability units.
With ``outputs = 1`` the row is the seat's own win share; with ``outputs > 1`` output ``k`` is the
share of the seat ``k`` places after it (each seat values the table from its own chair).

Tables are saved as a directory, never pickled: ``tables.safetensors`` (the weights) and
``layout.json`` (the pattern set's layout, ``outputs``, the format version and free ``meta``:
game, parameters, games trained, run id). :meth:`TupleTables.load` refuses, in one line, a
missing directory or file, a corrupt file, tables of another game, or a layout another pattern
set (name, version, families) made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file, save_file

from omega_cluster.errors import UserError
from omega_cluster.games.patterns import PatternSet

__all__ = ["FORMAT", "FORMAT_VERSION", "LAYOUT_FILE", "TABLES_FILE", "TablesError", "TupleTables"]

FORMAT = "omega_cluster.ntuple"
FORMAT_VERSION = 1
TABLES_FILE = "tables.safetensors"
LAYOUT_FILE = "layout.json"


class TablesError(UserError, ValueError):
    """Saved tables that cannot be used here (missing, corrupt, another game or layout)."""


class TupleTables:
    """The weights of one pattern set: ``float32[patterns.size, outputs]`` (module doc)."""

    def __init__(
        self, patterns: PatternSet, outputs: int = 1, *, meta: dict[str, Any] | None = None
    ) -> None:
        if not isinstance(outputs, int) or outputs < 1:
            raise ValueError(f"outputs must be an int >= 1, got {outputs!r}")
        self.patterns = patterns
        self.outputs = outputs
        self.weights = np.zeros((patterns.size, outputs), dtype=np.float32)
        self.meta: dict[str, Any] = dict(meta or {})

    def value(self, indices: np.ndarray) -> np.ndarray:
        """float[outputs]: the sum of the rows ``indices`` look up (a repeated index counts
        each time)."""
        return self.weights[indices].sum(axis=0, dtype=np.float64)

    def fill(self) -> float:
        """The fraction of entries any update has moved off zero (how much the games reached)."""
        if self.weights.size == 0:
            return 0.0
        return float(np.count_nonzero(np.any(self.weights != 0.0, axis=1)) / self.weights.shape[0])

    def copy(self) -> TupleTables:
        """An independent copy (an actor plays on one while the learner updates the original)."""
        out = TupleTables(self.patterns, self.outputs, meta=self.meta)
        out.weights = self.weights.copy()
        return out

    def layout(self) -> dict[str, Any]:
        """What ``layout.json`` holds."""
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "patterns": self.patterns.describe(),
            "outputs": self.outputs,
            "meta": self.meta,
        }

    def save(self, path: str | Path) -> None:
        """Write the directory ``path`` (created): weights first, the layout last, each through
        a temporary name, so a reader never sees a half-written pair."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / (TABLES_FILE + ".tmp")
        save_file({"weights": np.ascontiguousarray(self.weights)}, str(tmp))
        tmp.replace(root / TABLES_FILE)
        tmp_layout = root / (LAYOUT_FILE + ".tmp")
        tmp_layout.write_text(json.dumps(self.layout(), indent=1, sort_keys=True))
        tmp_layout.replace(root / LAYOUT_FILE)

    @classmethod
    def load(
        cls, path: str | Path, patterns: PatternSet, *, game: str | None = None
    ) -> TupleTables:
        """The tables saved in ``path`` for ``patterns`` (and, when given, the game ``game``);
        a :class:`TablesError` in one line when they cannot serve (module doc)."""
        root = Path(path)
        layout = read_layout(root)
        meta = layout.get("meta") or {}
        if game is not None and meta.get("game") not in (None, game):
            raise TablesError(
                f"tables {root} were trained for game {meta.get('game')!r}, not {game!r}"
            )
        want = patterns.describe()
        have = layout.get("patterns")
        if have != want:
            raise TablesError(f"tables {root}: {_layout_difference(have, want)}")
        outputs = layout.get("outputs")
        try:
            arrays = load_file(str(root / TABLES_FILE))
        except FileNotFoundError:
            raise TablesError(f"tables {root}: {TABLES_FILE} is missing") from None
        except Exception as err:  # safetensors raises its own kinds on a corrupt file
            raise TablesError(f"tables {root}: {TABLES_FILE} is unreadable ({err})") from None
        weights = arrays.get("weights")
        if (
            not isinstance(outputs, int)
            or weights is None
            or weights.dtype != np.float32
            or weights.shape != (patterns.size, outputs)
        ):
            shape = None if weights is None else tuple(weights.shape)
            raise TablesError(
                f"tables {root}: weights of shape {shape} do not fit the layout "
                f"({patterns.size} entries x {outputs} outputs)"
            )
        out = cls(patterns, outputs, meta=meta)
        out.weights = np.array(weights, dtype=np.float32)
        return out


def read_layout(root: Path) -> dict[str, Any]:
    """``root/layout.json``, checked to be tables of this format and version."""
    if not root.is_dir():
        raise TablesError(f"tables directory {root} does not exist")
    file = root / LAYOUT_FILE
    try:
        layout = json.loads(file.read_text())
    except FileNotFoundError:
        raise TablesError(
            f"tables {root}: {LAYOUT_FILE} is missing (not a tables directory)"
        ) from None
    except (OSError, ValueError) as err:
        raise TablesError(f"tables {root}: {LAYOUT_FILE} is unreadable ({err})") from None
    if not isinstance(layout, dict) or layout.get("format") != FORMAT:
        raise TablesError(f"tables {root}: {LAYOUT_FILE} is not an n-tuple tables layout")
    if layout.get("format_version") != FORMAT_VERSION:
        raise TablesError(
            f"tables {root}: format version {layout.get('format_version')!r}, this code reads "
            f"version {FORMAT_VERSION}"
        )
    return layout


def _layout_difference(have: Any, want: dict[str, Any]) -> str:
    """What differs between a saved pattern layout and the pattern set's, in a few words."""
    if not isinstance(have, dict):
        return "the layout holds no pattern description"
    if have.get("name") != want["name"]:
        return f"made by pattern set {have.get('name')!r}, not {want['name']!r}"
    if have.get("version") != want["version"]:
        return (
            f"pattern set {want['name']!r} version {have.get('version')!r}, this code is version "
            f"{want['version']} (retrain the tables)"
        )
    return (
        f"pattern set {want['name']!r} version {want['version']} has other families than the "
        "saved ones (retrain the tables)"
    )
