"""The runs the game viewer shows: a run directory, or every run directory inside ``runs=``.

A directory is a run when it holds a ``pipeline.json``, a ``config.yaml`` or a shard store
(``shards/manifest/``). The server is given one run (then that is the only one) or a folder of
runs (each child that is a run, listed again on every request, so a run started later shows up).
A run is named by its directory's name; nothing outside the given directory is ever served: a
name is looked up among the listed runs, never joined to a path, and a plot is a ``.png`` file
directly under the run's ``plots/``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.play.advisor import Champion, load_champion
from omega_cluster.play.replay import RunGames

__all__ = ["RunCatalogue", "UnknownRun", "is_run"]


class UnknownRun(UserError, LookupError):
    """A run name the server does not hold."""


def is_run(path: Path) -> bool:
    return path.is_dir() and any(
        (path / p).exists() for p in ("pipeline.json", "config.yaml", "shards/manifest")
    )


class RunCatalogue:
    """The runs under one directory (module docstring), their games, champions and plots."""

    def __init__(self, root: str | Path | None) -> None:
        self.root = None if root is None else Path(root)
        if self.root is not None and not self.root.is_dir():
            raise UserError(f"runs={self.root}: no such directory")
        self._games: dict[Path, RunGames] = {}
        self._champions: dict[Path, tuple[Champion | None, str | None]] = {}
        self._lock = threading.Lock()

    def runs(self) -> dict[str, Path]:
        if self.root is None:
            return {}
        if is_run(self.root):
            return {self.root.name: self.root}
        return {p.name: p for p in sorted(self.root.iterdir()) if is_run(p)}

    def path(self, name: str) -> Path:
        runs = self.runs()
        if name not in runs:
            where = "no runs= given" if self.root is None else f"runs under {self.root}"
            known = ", ".join(runs) or "none"
            raise UnknownRun(f"no run named {name!r} ({where}: {known})")
        return runs[name]

    def games(self, name: str) -> RunGames:
        path = self.path(name)
        with self._lock:
            if path not in self._games:
                self._games[path] = RunGames(path)
            return self._games[path]

    def champion(self, name: str, game: Any) -> tuple[Champion | None, str | None]:
        """The run's champion network for the advisor (loaded once), or None and why not."""
        path = self.path(name)
        with self._lock:
            if path not in self._champions and not (path / "registry.json").is_file():
                self._champions[path] = (None, "no champion network: the run has no models yet")
            if path not in self._champions:
                try:
                    found: tuple[Champion | None, str | None] = (
                        load_champion(game, f"champion:{path}"),
                        None,
                    )
                except UserError as err:
                    found = (None, f"no champion network: {' '.join(str(err).split())}")
                self._champions[path] = found
            return self._champions[path]

    def describe(self, name: str, path: Path) -> dict[str, Any]:
        """What the run list shows: the game, its plots and whether it has ratings."""
        state = _json(path / "pipeline.json")
        return {
            "name": name,
            "game": state.get("game"),
            "games": state.get("games"),
            "promotions": state.get("promotions"),
            "plots": self.plots(name),
            "ratings": bool(state.get("ratings")) or (path / "elo_log.jsonl").is_file(),
        }

    def plots(self, name: str) -> list[str]:
        plots = self.path(name) / "plots"
        return sorted(p.name for p in plots.glob("*.png")) if plots.is_dir() else []

    def plot(self, name: str, file: str) -> Path:
        if file not in self.plots(name):
            raise UnknownRun(
                f"run {name} has no plot {file!r} (plots: {', '.join(self.plots(name)) or 'none'})"
            )
        return self.path(name) / "plots" / file

    def ratings(self, name: str) -> dict[str, Any]:
        """The anchored ratings (``pipeline.json``) and the gate's Elo log (``elo_log.jsonl``)."""
        path = self.path(name)
        state = _json(path / "pipeline.json")
        log = []
        elo = path / "elo_log.jsonl"
        if elo.is_file():
            for line in elo.read_text().splitlines():
                try:
                    log.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut by a killed writer: the rest still reads
        gates = [row for row in log if row.get("rating") != "anchored"]
        return {"run": name, "ratings": state.get("ratings", []), "gates": gates}


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
