"""Write a release folder, whole or not at all (:mod:`omega_cluster.model._atomic`): the
checkpoint as ``network:`` loads it (``model.safetensors`` + ``metadata.json``, copied as the run
wrote them: no optimizer state, nothing pickled), the ONNX bundle of
:func:`omega_cluster.model.export_bundle` (``model.onnx``, ``encoder.json``, its README as
``ONNX.md``; ONNX Runtime checked against torch), ``MODEL_CARD.md`` and ``release.json``.

An existing folder is replaced only when it holds the same weights (a release made again, e.g.
with a strength file) or when ``force`` says so; the run directory and its checkpoints are never
a release's folder.
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster.model import CheckpointError, EncoderError, ExportError, export_bundle
from omega_cluster.model._atomic import atomic_directory
from omega_cluster.model.checkpoint import load_checkpoint, read_metadata
from omega_cluster.release.card import CardInputs, model_card
from omega_cluster.release.record import ReleaseError, RunRecord
from omega_cluster.release.strength import StrengthTable

__all__ = ["RELEASE_FILE", "ReleaseResult", "write_release"]

RELEASE_FILE = "release.json"
_CHECKPOINT_FILES = ("model.safetensors", "metadata.json")


@dataclass(frozen=True)
class ReleaseResult:
    """What :func:`write_release` wrote."""

    directory: Path
    version: int  # the run's model version released
    weights_sha256: str
    onnx_difference: float | None  # ONNX Runtime vs torch, max abs difference (None: unchecked)
    replaced: bool  # an existing release folder was replaced


def write_release(
    record: RunRecord,
    out: str | Path,
    *,
    strength: StrengthTable | None = None,
    force: bool = False,
    command: str = "",
    verify_positions: int = 64,
) -> ReleaseResult:
    """Release ``record``'s version into ``out`` (module docstring)."""
    source = Path(record.model.uri)
    try:
        loaded = load_checkpoint(
            source, expected_game=record.settings.game.name, load_optimizer=False
        )
    except CheckpointError as err:
        raise ReleaseError(f"run={record.run_dir}: v{record.model.version}: {err}") from None
    meta = loaded.metadata
    target = Path(out)
    replaced = _check_target(target, record, source, meta.weights_sha256, force=force)
    created = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    try:
        with atomic_directory(target) as tmp:
            for name in _CHECKPOINT_FILES:
                shutil.copy2(source / name, tmp / name)
            bundle = export_bundle(tmp, tmp / ".bundle", verify_positions=verify_positions)
            (bundle.directory / "README.md").rename(tmp / "ONNX.md")
            for name in ("model.onnx", "encoder.json"):
                (bundle.directory / name).rename(tmp / name)
            bundle.directory.rmdir()
            parameters = sum(p.numel() for p in loaded.model.parameters())
            inputs = CardInputs(meta, parameters, str(out), command, bundle.max_difference,
                                strength, created)  # fmt: skip
            (tmp / "MODEL_CARD.md").write_text(model_card(record, inputs))
            identity = _identity(record, meta.weights_sha256, inputs)
            (tmp / RELEASE_FILE).write_text(json.dumps(identity, indent=2) + "\n")
    except (CheckpointError, EncoderError, ExportError) as err:
        raise ReleaseError(f"out={out}: {err}") from None
    except OSError as err:
        raise ReleaseError(f"out={out}: cannot write the release: {err.strerror or err}") from None
    return ReleaseResult(target, record.model.version, meta.weights_sha256,
                         bundle.max_difference, replaced)  # fmt: skip


def _check_target(
    target: Path, record: RunRecord, source: Path, weights: str, *, force: bool
) -> bool:
    """Whether ``target`` exists and may be replaced; a one-line refusal otherwise."""
    where = target.resolve()
    run = record.run_dir.resolve()
    if where == run or run.is_relative_to(where) or where.is_relative_to(run):
        raise ReleaseError(f"out={target} is the run directory or holds it (or lies in it)")
    if where == source.resolve():
        raise ReleaseError(f"out={target} is the run's checkpoint itself")
    if not target.exists():
        return False
    if not target.is_dir():
        raise ReleaseError(f"out={target} is a file; give a folder for the release")
    if not any(target.iterdir()):
        return True
    if force:
        return True
    try:
        existing = read_metadata(target).weights_sha256
    except CheckpointError:
        raise ReleaseError(
            f"out={target} is a folder that is not a release; give force=true to replace it, "
            "or another out="
        ) from None
    if existing != weights:
        raise ReleaseError(
            f"out={target} holds a different release (weights sha256 {existing[:12]}, this one "
            f"{weights[:12]}); give force=true to replace it, or another out="
        )
    return True


def _identity(record: RunRecord, weights: str, inputs: CardInputs) -> dict[str, Any]:
    """``release.json``: which network this is and how the release was made."""
    return {
        "format": 1,
        "game": inputs.metadata.game,
        "run": str(record.run_dir.resolve()),
        "version": record.model.version,
        "status": record.model.status,
        "weights_sha256": weights,
        "created": inputs.created,
        "command": inputs.command,
        "reproduce": ["omega-cluster", "train", *record.overrides],
        "code_version": dict(record.code_version),
        "strength": None if inputs.strength is None else str(inputs.strength.path),
        "onnx_vs_torch_max_abs_difference": inputs.onnx_difference,
    }
