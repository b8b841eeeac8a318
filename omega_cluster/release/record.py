"""What a training run recorded about one of its versions: :func:`read_run` gathers it from the
run directory into a :class:`RunRecord` (the resolved ``config.yaml``, ``registry.json``,
``pipeline.json`` with its Elo log and anchored ratings, the code version the run's MLflow store
tagged), and :func:`reproduce_overrides` turns the resolved config back into the ``omega-cluster
train`` overrides that compose it again (checked by composing them).

Read-only: nothing in the run directory is written, and an MLflow store is read only when it is
the run's own sqlite file (a tracking server is named, not contacted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster import wiring
from omega_cluster.config import ConfigError, Settings, flat_params, load_settings
from omega_cluster.errors import UserError, one_line
from omega_cluster.model.registry import ModelRegistry, ModelVersion, RegistryError
from omega_cluster.pipeline.run_state import PipelineState, RunPaths
from omega_cluster.tracking import TrackingError, default_tracking_uri, read_run_tags

__all__ = ["ReleaseError", "RunRecord", "read_run", "reproduce_overrides"]

# keys a reproduction leaves out: where the run was written, and which run it continued
_NOT_REPRODUCED = ("run.dir", "run.resume")
# mappings an override replaces whole (config.load's _REPLACED_FIELDS); game.params is per entry
_WHOLE_MAPPINGS = ("game.fleet", "gate.anchors")


class ReleaseError(UserError, ValueError):
    """A run, version, strength file or output folder the release command cannot use."""


@dataclass(frozen=True)
class RunRecord:
    """One version of a run, with what the run recorded about how it was made."""

    run_dir: Path
    settings: Settings  # the run's resolved config.yaml
    model: ModelVersion  # the released version (the champion unless a version was asked for)
    state: PipelineState  # pipeline.json: counters, Elo log, anchored ratings
    started: float | None  # unix time of v0 (the run's first checkpoint)
    last_decision: float | None  # unix time of the run's last gate decision
    code_version: Mapping[str, str]  # git.sha / git.branch / git.dirty; empty: not recorded
    code_note: str  # why code_version is empty ("" when it is not)
    overrides: tuple[str, ...]  # omega-cluster train overrides that compose settings again
    reproducible: bool  # whether composing overrides gives settings back exactly
    unreproduced: tuple[str, ...]  # the keys composing overrides gets wrong (when not)

    @property
    def wall_seconds(self) -> float | None:
        """From the first checkpoint to the last gate decision (None: no decision yet)."""
        if self.started is None or self.last_decision is None:
            return None
        return max(self.last_decision - self.started, 0.0)

    def ratings(self) -> list[dict[str, Any]]:
        """The anchored ratings the run measured for the released version (its last set)."""
        rows = [r for r in self.state.ratings if r.get("version") == self.model.version]
        last = max((int(r.get("decision", 0)) for r in rows), default=0)
        return [r for r in rows if int(r.get("decision", 0)) == last]

    def elo_row(self) -> dict[str, Any] | None:
        """The released version's row of the run's Elo chain (None: not in the log)."""
        rows = [r for r in self.state.elo_log if r.get("version") == self.model.version]
        return rows[-1] if rows else None


def read_run(run_dir: str | Path, version: int | None = None) -> RunRecord:
    """The record of the run in ``run_dir`` for its champion (or ``version``); a directory that
    is not a run, a run without a champion and an unknown version are one-line errors."""
    root = Path(run_dir)
    if not root.is_dir():
        raise ReleaseError(f"run={run_dir}: no such directory (give a training run's directory)")
    if not (root / "config.yaml").is_file():
        raise ReleaseError(f"run={run_dir}: not a run directory (no config.yaml)")
    try:
        settings = wiring.load_run_settings(root)
    except ConfigError as err:
        raise ReleaseError(f"run={run_dir}: {one_line(err)}") from None
    game = wiring.build_game(settings).spec.name
    try:
        registry = ModelRegistry(root, game=game)
        model = registry.champion if version is None else registry.get(version)
    except RegistryError as err:
        raise ReleaseError(f"run={run_dir}: {one_line(err)}") from None
    if model is None:
        why = "" if registry.path.exists() else f" (no {registry.path.name})"
        raise ReleaseError(f"run={run_dir} has no champion yet{why}")
    paths = RunPaths(root)
    try:
        state = PipelineState.load(paths.state, game=game)
    except ConfigError as err:
        raise ReleaseError(f"run={run_dir}: {one_line(err)}") from None
    decided = [v.decided for v in registry.versions if v.decided is not None]
    code, note = _code_version(root, state)
    overrides, unreproduced = reproduce_overrides(settings)
    return RunRecord(
        run_dir=root,
        settings=settings,
        model=model,
        state=state,
        started=registry.versions[0].created if registry.versions else None,
        last_decision=max(decided) if decided else None,
        code_version=code,
        code_note=note,
        overrides=overrides,
        reproducible=not unreproduced,
        unreproduced=unreproduced,
    )


def _code_version(root: Path, state: PipelineState) -> tuple[dict[str, str], str]:
    """The git tags of the run's MLflow run, from its own sqlite store (module docstring)."""
    if not state.mlflow_run_id or not state.tracking_uri:
        return {}, "not recorded (the run was not tracked in MLflow)"
    uri = state.tracking_uri
    if state.root is not None and uri == default_tracking_uri(state.root):
        uri = default_tracking_uri(root)  # the run's own store, wherever the run is now
    if uri != default_tracking_uri(root) or not (root / "mlflow.db").is_file():
        return {}, f"in MLflow run {state.mlflow_run_id} at {uri} (not read by the release)"
    try:
        tags = read_run_tags(uri, state.mlflow_run_id, prefix="git.")
    except TrackingError as err:
        return {}, f"unreadable: {one_line(err)}"
    if not tags.get("git.sha") or tags["git.sha"] == "unknown":
        return {}, "not recorded (the run's code was not in a git repository)"
    return tags, ""


def reproduce_overrides(settings: Settings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``omega-cluster train`` overrides that compose ``settings`` from today's ``conf/``
    (all but ``run.dir`` and ``run.resume``), and the keys composing them gets wrong (empty: it
    gets every key right)."""
    base = _flat(load_settings([]))
    want = _flat(settings)
    overrides: list[str] = []
    if want["game.name"] != base["game.name"]:
        overrides.append(f"game.name={_hydra_text(want['game.name'])}")
        base = _flat(load_settings(overrides))  # another game: the preset's params are reset
    for key in _WHOLE_MAPPINGS:
        entries = _entries(want, key)
        if entries != _entries(base, key):
            overrides.append(f"{key}={_mapping_text(key, entries)}")
    for key, value in want.items():
        if key in _NOT_REPRODUCED or key == "game.name" or _under(key, _WHOLE_MAPPINGS):
            continue
        if base.get(key) != value:
            overrides.append(f"{key}={_hydra_text(value)}")
    for key in base:
        if key.startswith("game.params.") and key not in want:
            overrides.append(f"~{key}")
    try:
        again = _flat(load_settings(overrides))
    except ConfigError:
        return tuple(overrides), ("(the overrides do not compose)",)
    keys = sorted(set(want) | set(again))
    wrong = [k for k in keys if k not in _NOT_REPRODUCED and want.get(k) != again.get(k)]
    return tuple(overrides), tuple(wrong)


def _flat(settings: Settings) -> dict[str, str]:
    return flat_params(settings)


def _under(key: str, prefixes: tuple[str, ...]) -> bool:
    return any(key == p or key.startswith(f"{p}.") for p in prefixes)


def _entries(flat: Mapping[str, str], key: str) -> dict[str, str]:
    return {k: v for k, v in flat.items() if _under(k, (key,))}


def _mapping_text(key: str, entries: Mapping[str, str]) -> str:
    """A mapping's flat entries in Hydra's override grammar: ``{random:1000.0,heuristic:1400.0}``
    (``{}`` when empty)."""
    items = [(k[len(key) + 1 :], v) for k, v in entries.items() if k != key]
    return "{" + ",".join(f"{name}:{_hydra_text(value)}" for name, value in items) + "}"


def _hydra_text(text: str) -> str:
    """``text`` as a Hydra override value: quoted when Hydra would read it otherwise."""
    if text == "" or any(ch in text for ch in " '\"\\=,{}()$*?~#!&|;<>"):
        if text.startswith("[") and text.endswith("]"):
            return text  # a JSON list (flat_params' form) is a Hydra list as written
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return text
