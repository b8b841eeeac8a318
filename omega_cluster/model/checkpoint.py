"""Checkpoints: weights in safetensors, metadata in JSON, optimizer state in its own files.

A checkpoint is a directory::

    model.safetensors      the network's state dict (safetensors: no pickle, loads anywhere)
    metadata.json          CheckpointMetadata: game + parameters, encoder (name, version, sizes,
                           layout), model config, step, version, parent version, creation time,
                           metrics, the learner's JSON-able training state, weights checksum
    optimizer.safetensors  optimizer state tensors (Adam moments, step counts), flattened
    optimizer.json         the optimizer's scalars and param groups (hyper-parameters)

Nothing is pickled: ``torch.save`` of an optimizer state dict is a pickle, so the optimizer state
is flattened into named tensors plus JSON (:mod:`.optimizer_state`), and
:func:`load_optimizer_state` rebuilds the exact dict ``optimizer.load_state_dict`` takes.

Writes are atomic: everything goes to a hidden temporary directory next to the target, which is
renamed into place once complete (a reader never sees half a checkpoint; ``overwrite=True``
swaps an existing one). :func:`load_checkpoint` refuses, with an error naming the problem, a
directory that is not a checkpoint, a checkpoint for another game or encoder (name or version),
a weights file whose checksum does not match, and weights that do not fit the model config (the
tensor, and both shapes).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder, EncoderInfo
from omega_cluster.model._atomic import atomic_directory
from omega_cluster.model.network import ModelConfig, ModelConfigError, PolicyValueNet
from omega_cluster.model.optimizer_state import (
    OptimizerStateError,
    flatten_optimizer,
    unflatten_optimizer,
)

__all__ = [
    "CHECKPOINT_FORMAT",
    "CheckpointError",
    "CheckpointMetadata",
    "LoadedCheckpoint",
    "load_checkpoint",
    "load_optimizer_state",
    "load_weights",
    "read_metadata",
    "save_checkpoint",
]

CHECKPOINT_FORMAT = 1
WEIGHTS_FILE = "model.safetensors"
METADATA_FILE = "metadata.json"
OPTIMIZER_TENSORS_FILE = "optimizer.safetensors"
OPTIMIZER_JSON_FILE = "optimizer.json"


class CheckpointError(UserError, ValueError):
    """A checkpoint that is missing, corrupt, or does not fit what the caller expects."""


@dataclass(frozen=True)
class CheckpointMetadata:
    """What ``metadata.json`` holds."""

    game: str  # game.spec.name
    game_params: dict[str, Any]  # the game's resolved parameters
    encoder: EncoderInfo  # name, version, sizes, layout of the inputs
    model_config: ModelConfig
    observation_size: int
    action_feature_size: int
    step: int = 0  # learner steps so far
    version: int = 0  # model version (the registry's id of this network)
    parent_version: int | None = None  # the version it was warm-started from
    created: str = ""  # ISO 8601 UTC time of writing
    metrics: dict[str, float] = field(default_factory=dict)  # losses, win rates, ...
    training_state: dict[str, Any] = field(
        default_factory=dict
    )  # learner state (JSON; lists come back as tuples)
    weights_sha256: str = ""  # checksum of model.safetensors
    format: int = CHECKPOINT_FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "game": self.game,
            "game_params": _to_json(self.game_params),
            "encoder": self.encoder.to_json(),
            "model_config": self.model_config.to_json(),
            "observation_size": self.observation_size,
            "action_feature_size": self.action_feature_size,
            "step": self.step,
            "version": self.version,
            "parent_version": self.parent_version,
            "created": self.created,
            "metrics": dict(self.metrics),
            "training_state": _to_json(self.training_state),
            "weights_sha256": self.weights_sha256,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckpointMetadata:
        return cls(
            game=str(data["game"]),
            game_params=_from_json(data.get("game_params", {})),
            encoder=EncoderInfo.from_json(data["encoder"]),
            model_config=ModelConfig.from_json(data["model_config"]),
            observation_size=int(data["observation_size"]),
            action_feature_size=int(data["action_feature_size"]),
            step=int(data.get("step", 0)),
            version=int(data.get("version", 0)),
            parent_version=data.get("parent_version"),
            created=str(data.get("created", "")),
            metrics=dict(data.get("metrics", {})),
            training_state=_from_json(data.get("training_state", {})),
            weights_sha256=str(data.get("weights_sha256", "")),
            format=int(data.get("format", CHECKPOINT_FORMAT)),
        )


@dataclass(frozen=True)
class LoadedCheckpoint:
    """A loaded checkpoint: its metadata, the model (weights loaded) and the optimizer state."""

    path: Path
    metadata: CheckpointMetadata
    model: PolicyValueNet
    optimizer_state: dict[str, Any] | None  # for optimizer.load_state_dict; None if not saved


# -- saving ------------------------------------------------------------------------------------


def save_checkpoint(
    directory: str | Path,
    model: PolicyValueNet,
    *,
    game: Game,
    encoder: Encoder,
    optimizer: torch.optim.Optimizer | None = None,
    step: int = 0,
    version: int = 0,
    parent_version: int | None = None,
    metrics: Mapping[str, float] | None = None,
    training_state: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> CheckpointMetadata:
    """Write a checkpoint directory atomically; returns the metadata written."""
    target = Path(directory)
    if target.exists() and not overwrite:
        raise CheckpointError(
            f"{target} already exists; pass overwrite=True or use a new directory"
        )
    with atomic_directory(target) as tmp:
        weights = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(weights, str(tmp / WEIGHTS_FILE), metadata={"format": "pt"})
        if optimizer is not None:
            _save_optimizer(tmp, optimizer, target)
        meta = CheckpointMetadata(
            game=game.spec.name,
            game_params=dict(game.params),
            encoder=encoder.info(),
            model_config=model.config,
            observation_size=model.observation_size,
            action_feature_size=model.action_feature_size,
            step=step,
            version=version,
            parent_version=parent_version,
            created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            metrics={k: float(v) for k, v in (metrics or {}).items()},
            training_state=dict(training_state or {}),
            weights_sha256=_sha256(tmp / WEIGHTS_FILE),
        )
        _write_json(tmp / METADATA_FILE, meta.to_json())
        meta = CheckpointMetadata.from_json(meta.to_json())  # exactly what a load returns
    return meta


def _save_optimizer(tmp: Path, optimizer: torch.optim.Optimizer, target: Path) -> None:
    try:
        tensors, scalars = flatten_optimizer(optimizer.state_dict())
    except OptimizerStateError as err:
        raise CheckpointError(f"{target}: {err}") from err
    save_file(tensors, str(tmp / OPTIMIZER_TENSORS_FILE), metadata={"format": "pt"})
    _write_json(tmp / OPTIMIZER_JSON_FILE, scalars)


# -- loading -----------------------------------------------------------------------------------


def read_metadata(directory: str | Path) -> CheckpointMetadata:
    """The metadata of a checkpoint directory (raises :class:`CheckpointError` if unreadable)."""
    path = Path(directory)
    if not path.is_dir():
        raise CheckpointError(f"checkpoint {path} does not exist or is not a directory")
    meta_path = path / METADATA_FILE
    if not meta_path.is_file():
        hint = ""
        if (path / "registry.json").is_file():  # a run directory (model.registry's file)
            hint = f"; it is a training run: its checkpoints are {path}/models/v<k>"
        raise CheckpointError(f"{path} is not a checkpoint: {METADATA_FILE} is missing{hint}")
    try:
        data = json.loads(meta_path.read_text())
        meta = CheckpointMetadata.from_json(data)
    except KeyError as err:
        raise CheckpointError(
            f"{meta_path} is not valid checkpoint metadata: no key {err} (truncated or not "
            "written by omega_cluster)"
        ) from err
    except (OSError, TypeError, ValueError) as err:  # ValueError: bad JSON, bytes not UTF-8
        raise CheckpointError(f"{meta_path} is not valid checkpoint metadata: {err}") from err
    if meta.format != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"{path}: checkpoint format {meta.format}, this code reads format {CHECKPOINT_FORMAT}"
        )
    return meta


def load_checkpoint(
    directory: str | Path,
    *,
    expected_game: str | Game | None = None,
    expected_encoder: str | Encoder | EncoderInfo | None = None,
    expected_encoder_version: int | None = None,
    device: str | torch.device = "cpu",
    load_optimizer: bool = True,
) -> LoadedCheckpoint:
    """Load a checkpoint, checking it is for the expected game and encoder.

    ``expected_encoder`` is an encoder name, an encoder (its name, version and sizes are
    checked) or an :class:`EncoderInfo`.
    """
    path = Path(directory)
    meta = read_metadata(path)
    if expected_game is not None:
        want = expected_game if isinstance(expected_game, str) else expected_game.spec.name
        if meta.game != want:
            raise CheckpointError(f"checkpoint {path} is for game {meta.game!r}, not {want!r}")
    _check_encoder(path, meta.encoder, expected_encoder, expected_encoder_version)
    try:
        model = PolicyValueNet(meta.model_config, meta.observation_size, meta.action_feature_size)
    except ModelConfigError as err:
        raise CheckpointError(f"checkpoint {path}: bad model config: {err}") from err
    load_weights(model, path, expected_sha256=meta.weights_sha256 or None)
    model.to(device)
    optimizer_state = load_optimizer_state(path, device=device) if load_optimizer else None
    return LoadedCheckpoint(path, meta, model, optimizer_state)


def load_weights(
    model: PolicyValueNet, directory: str | Path, *, expected_sha256: str | None = None
) -> None:
    """Load ``directory``'s weights into ``model`` (e.g. warm-starting a candidate), naming any
    tensor that is missing, unexpected, or of another shape."""
    path = Path(directory) / WEIGHTS_FILE
    if not path.is_file():
        raise CheckpointError(f"{path.parent} is not a checkpoint: {WEIGHTS_FILE} is missing")
    if expected_sha256 is not None and _sha256(path) != expected_sha256:
        raise CheckpointError(
            f"{path}: checksum mismatch (the weights file is corrupt or replaced)"
        )
    try:
        weights = load_file(str(path))
    except (SafetensorError, OSError) as err:
        raise CheckpointError(f"{path}: unreadable safetensors file: {err}") from err
    expected = model.state_dict()
    missing = sorted(set(expected) - set(weights))
    unexpected = sorted(set(weights) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: weights do not fit the model config: missing tensors {missing[:8]}, "
            f"unexpected tensors {unexpected[:8]}"
        )
    for name, tensor in weights.items():
        if tuple(tensor.shape) != tuple(expected[name].shape):
            raise CheckpointError(
                f"{path}: weights do not fit the model config: tensor {name!r} has shape "
                f"{tuple(tensor.shape)} in the file, the model expects {tuple(expected[name].shape)}"
            )
    model.load_state_dict(weights)


def load_optimizer_state(
    directory: str | Path, *, device: str | torch.device = "cpu"
) -> dict[str, Any] | None:
    """The optimizer state dict saved with a checkpoint (``None`` if none was saved)."""
    path = Path(directory)
    scalars_path, tensors_path = path / OPTIMIZER_JSON_FILE, path / OPTIMIZER_TENSORS_FILE
    if not scalars_path.is_file():
        return None
    try:
        scalars = json.loads(scalars_path.read_text())
        tensors = load_file(str(tensors_path), device=str(device))
    except (json.JSONDecodeError, SafetensorError, OSError) as err:
        raise CheckpointError(f"{path}: unreadable optimizer state: {err}") from err
    try:
        return unflatten_optimizer(tensors, scalars)
    except OptimizerStateError as err:
        raise CheckpointError(f"{path}: {err}") from err


# -- helpers -----------------------------------------------------------------------------------


def _check_encoder(
    path: Path,
    have: EncoderInfo,
    expected: str | Encoder | EncoderInfo | None,
    expected_version: int | None,
) -> None:
    if expected is not None:
        if isinstance(expected, str):
            want_name, want = expected, None
        else:
            want = expected if isinstance(expected, EncoderInfo) else expected.info()
            want_name = want.name
        if have.name != want_name:
            raise CheckpointError(
                f"checkpoint {path} was trained with encoder {have.name!r}, not {want_name!r}"
            )
        if want is not None:
            for name in ("version", "observation_size", "action_feature_size", "max_players"):
                if getattr(have, name) != getattr(want, name):
                    raise CheckpointError(
                        f"checkpoint {path}: encoder {have.name} {name} is "
                        f"{getattr(have, name)}, the expected encoder has {getattr(want, name)}"
                    )
    if expected_version is not None and have.version != expected_version:
        raise CheckpointError(
            f"checkpoint {path} was trained with encoder {have.name} version {have.version}, "
            f"expected version {expected_version}"
        )


def _to_json(value: Any) -> Any:
    """Tuples become lists (JSON has no tuples); mappings and scalars pass through."""
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def _from_json(value: Any) -> Any:
    """Lists back to tuples (game parameters are tuples, e.g. Mexican Train's hand sizes)."""
    if isinstance(value, dict):
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_from_json(v) for v in value)
    return value


def _write_json(path: Path, data: Any) -> None:
    with open(path, "w") as f:
        json.dump(data, f, indent=2, sort_keys=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
