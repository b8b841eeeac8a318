"""The model registry: every version of a run with its status, parent, URI and rating.

One JSON file (``<run dir>/registry.json``), rewritten atomically (temporary name + rename +
fsync) after every change, so a restarted driver or registry actor recovers every version and
the champion pointer exactly as they were. A checkpoint inside the run directory is stored
relative to it (``models/v3``) and read back against wherever the directory is now, so a copied
or moved run reads its own checkpoints, never the original's; a registry written with absolute
paths (before this rule) is converted on load when the same relative path exists under the new
root. :attr:`ModelVersion.uri` is always the absolute path (or a ``pyarrow.fs`` URI as given). Versions are ints that grow with time: ``0`` is the
first champion (the randomly initialised network), each candidate gets the next one.

Status moves ``candidate → champion`` (promoted; the previous champion becomes ``retired``) or
``candidate → rejected``. The champion is never replaced by anything but a promotion: the
"never regress" rule of docs/design.md lives in the gate, and the registry refuses any other path.

Pure Python, in the model layer so that training (which adds and promotes versions) and
evaluation (which plays a run's champion) both read it;
:class:`omega_cluster.cluster.actors.ModelRegistryActor` serves it as a named Ray actor.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omega_cluster.errors import UserError

__all__ = ["STATUSES", "ModelRegistry", "ModelVersion", "RegistryError"]

STATUSES = ("candidate", "champion", "retired", "rejected")


class RegistryError(UserError, RuntimeError):
    """An impossible registry change (unknown version, promoting twice, a foreign run)."""


@dataclass(frozen=True)
class ModelVersion:
    """One version of the run's network."""

    version: int
    status: str  # candidate | champion | retired | rejected
    parent: int | None  # the champion it was warm-started from
    uri: str  # checkpoint directory (local path or pyarrow.fs URI)
    created: float  # unix time
    elo: float | None = None  # rating on the Elo chain (set at promotion)
    elo_low: float | None = None
    elo_high: float | None = None
    decided: float | None = None  # unix time of the gate decision
    reason: str = ""  # the gate's reason
    metrics: Mapping[str, float] = field(default_factory=dict)  # learner losses, gate score, ...

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["metrics"] = dict(self.metrics)
        return data


class ModelRegistry:
    """The registry of one run (module docstring). ``game`` guards against a foreign run dir."""

    FILE = "registry.json"

    def __init__(self, run_dir: str | Path, *, game: str) -> None:
        self.root = Path(run_dir).absolute()
        self.path = self.root / self.FILE
        self.game = game
        self._versions: dict[int, ModelVersion] = {}
        if self.path.exists():
            self._load()

    # -- reading ----------------------------------------------------------------------------
    @property
    def versions(self) -> list[ModelVersion]:
        return [self._versions[v] for v in sorted(self._versions)]

    def get(self, version: int) -> ModelVersion:
        try:
            return self._versions[version]
        except KeyError:
            known = ", ".join(map(str, sorted(self._versions))) or "none"
            raise RegistryError(f"unknown model version {version}; known: {known}") from None

    @property
    def champion(self) -> ModelVersion | None:
        found = [v for v in self._versions.values() if v.status == "champion"]
        return found[0] if found else None

    @property
    def next_version(self) -> int:
        return max(self._versions, default=-1) + 1

    def snapshot(self) -> list[dict[str, Any]]:
        return [v.to_json() for v in self.versions]

    # -- changes ----------------------------------------------------------------------------
    def add_initial(self, uri: str, *, elo: float) -> ModelVersion:
        """Register version 0 as the first champion (only in an empty registry)."""
        if self._versions:
            raise RegistryError(f"{self.path} already holds versions; the first is 0")
        uri = self._absolute(uri)
        row = ModelVersion(0, "champion", None, uri, time.time(), elo, elo, elo)
        self._versions[0] = row
        self._save()
        return row

    def add_candidate(
        self, version: int, *, parent: int, uri: str, metrics: Mapping[str, float] | None = None
    ) -> ModelVersion:
        uri = self._absolute(uri)
        if version in self._versions:
            existing = self._versions[version]
            if existing.uri == uri and existing.parent == parent:
                return existing  # a retried call after a restart: idempotent
            raise RegistryError(f"version {version} is already registered ({existing.status})")
        self.get(parent)  # the parent must exist
        row = ModelVersion(version, "candidate", parent, uri, time.time(),
                           metrics=dict(metrics or {}))  # fmt: skip
        self._versions[version] = row
        self._save()
        return row

    def promote(
        self,
        version: int,
        *,
        elo: float,
        elo_low: float,
        elo_high: float,
        reason: str = "",
        metrics: Mapping[str, float] | None = None,
    ) -> ModelVersion:
        """``version`` becomes the champion; the old champion retires."""
        row = self.get(version)
        if row.status != "candidate":
            raise RegistryError(f"only a candidate can be promoted; v{version} is {row.status}")
        old = self.champion
        if old is not None:
            self._versions[old.version] = dataclasses.replace(old, status="retired")
        merged = {**row.metrics, **(metrics or {})}
        self._versions[version] = dataclasses.replace(
            row, status="champion", elo=elo, elo_low=elo_low, elo_high=elo_high,
            decided=time.time(), reason=reason, metrics=merged,
        )  # fmt: skip
        self._save()
        return self._versions[version]

    def reject(
        self, version: int, *, reason: str = "", metrics: Mapping[str, float] | None = None
    ) -> ModelVersion:
        row = self.get(version)
        if row.status != "candidate":
            raise RegistryError(f"only a candidate can be rejected; v{version} is {row.status}")
        self._versions[version] = dataclasses.replace(
            row, status="rejected", decided=time.time(), reason=reason,
            metrics={**row.metrics, **(metrics or {})},
        )  # fmt: skip
        self._save()
        return self._versions[version]

    def set_champion_elo(self, elo: float, low: float, high: float) -> None:
        champion = self.champion
        if champion is None:
            raise RegistryError("no champion yet")
        self._versions[champion.version] = dataclasses.replace(
            champion, elo=elo, elo_low=low, elo_high=high
        )
        self._save()

    # -- persistence ------------------------------------------------------------------------
    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        rows = [{**row, "uri": self._stored(row["uri"])} for row in self.snapshot()]
        data = {"game": self.game, "versions": rows}
        tmp = self.path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError) as err:  # ValueError: bad JSON, bytes not UTF-8
            raise RegistryError(f"cannot read the model registry {self.path}: {err}") from err
        if not isinstance(data, dict) or not isinstance(data.get("versions", []), list):
            raise RegistryError(f"{self.path} is not a model registry (no list of versions)")
        if data.get("game") != self.game:
            raise RegistryError(
                f"{self.path} belongs to a run of game {data.get('game')!r}, not {self.game!r}: "
                "use another run directory"
            )
        for raw in data.get("versions", []):
            raw = (
                {**raw, "uri": self._resolved(str(raw.get("uri", "")))}
                if isinstance(raw, dict)
                else raw
            )
            try:
                row = ModelVersion(**raw)
            except TypeError as err:  # a row with missing or unknown fields
                raise RegistryError(f"{self.path}: a version row does not fit: {err}") from err
            if row.status not in STATUSES:
                raise RegistryError(f"{self.path}: v{row.version} has unknown status {row.status}")
            self._versions[row.version] = row

    # -- paths relative to the run ----------------------------------------------------------
    def _stored(self, uri: str) -> str:
        """``uri`` as written to the file: relative to the run directory when inside it."""
        if "://" in uri or not Path(uri).is_absolute():
            return uri
        path = Path(uri)
        for root in (self.root, self.root.resolve()):
            for candidate in (path, path.resolve()):
                if candidate.is_relative_to(root):
                    return candidate.relative_to(root).as_posix()
        return uri  # a checkpoint outside the run (kept as given)

    def _absolute(self, uri: str) -> str:
        """A relative path is relative to the run directory; anything else is kept."""
        if "://" in uri or Path(uri).is_absolute():
            return uri
        return str(self.root / uri)

    def _resolved(self, stored: str) -> str:
        """A stored URI against the run directory as it is now (module docstring)."""
        path = Path(stored)
        if "://" in stored or not path.is_absolute():
            return self._absolute(stored)
        if path.is_relative_to(self.root):
            return stored
        # an absolute path of an older registry: the run may have been copied or moved since
        for i in range(1, len(path.parts)):
            moved = self.root.joinpath(*path.parts[i:])
            if moved.exists():
                return str(moved)
        return stored
