"""ONNX export of the policy/value network and the portable agent bundle.

:func:`export_onnx` writes the network as an ONNX graph with dynamic batch and legal-set axes:

* inputs ``observations float32[batch, D]``, ``action_features float32[batch, actions, F]``,
  ``legal_mask bool[batch, actions]``;
* outputs ``logits float32[batch, actions]`` (``-inf`` where the mask is false), ``values
  float32[batch, S]`` (seat-relative, in the game's return units) and one ``aux_<name>`` output
  per auxiliary head.

:func:`export_bundle` turns a checkpoint directory into a self-contained agent bundle
(``omega-cluster export checkpoint=<dir> out=<dir>``): ``model.onnx``, ``encoder.json`` (the
encoder's name, version, sizes and the segment-by-segment layout of both inputs, the game and its
parameters, the model config and the checkpoint's identity) and a ``README.md`` describing the
inputs and outputs. By default it also checks, on positions from random playouts of the game,
that ONNX Runtime and torch agree (:func:`verify_onnx`).
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from omega_cluster.errors import UserError
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.encoding import Encoder, EncoderInfo
from omega_cluster.games.registry import make_game
from omega_cluster.model._atomic import atomic_directory
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.model.encoders import encoder_from_info
from omega_cluster.model.network import PolicyValueNet, pad_batch

__all__ = [
    "INPUT_NAMES",
    "BundleResult",
    "ExportError",
    "encode_batch",
    "export_bundle",
    "export_onnx",
    "random_positions",
    "verify_onnx",
]

INPUT_NAMES = ("observations", "action_features", "legal_mask")


class ExportError(UserError, RuntimeError):
    """The export failed, or ONNX Runtime disagrees with torch."""


class _OnnxModule(nn.Module):
    """The network with tuple outputs (ONNX graphs have positional outputs)."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model
        self.aux_names = [spec.name for spec in model.config.aux_heads]

    def forward(
        self, observations: torch.Tensor, action_features: torch.Tensor, legal_mask: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        out = self.model(observations, action_features, legal_mask)
        return (out.logits, out.values, *(out.aux[name] for name in self.aux_names))


def output_names(model: PolicyValueNet) -> list[str]:
    return ["logits", "values", *(f"aux_{spec.name}" for spec in model.config.aux_heads)]


def export_onnx(
    model: PolicyValueNet, path: str | Path, *, opset: int = 17, dynamo: bool = False
) -> Path:
    """Write ``model`` as ONNX to ``path`` (dynamic batch and action axes); returns the path.

    ``dynamo=False`` uses torch's TorchScript-based exporter (fast, no extra dependency);
    ``dynamo=True`` the ``torch.export``-based one (needs onnxscript).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = _OnnxModule(model).eval()
    example = (
        torch.zeros(2, model.observation_size),
        torch.zeros(2, 3, model.action_feature_size),
        torch.ones(2, 3, dtype=torch.bool),
    )
    outputs = output_names(model)
    device = next(model.parameters()).device
    model.cpu()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
            if dynamo:
                batch, actions = (
                    torch.export.Dim("batch", min=1),
                    torch.export.Dim("actions", min=1),
                )
                torch.onnx.export(
                    module,
                    example,
                    str(path),
                    dynamo=True,
                    input_names=list(INPUT_NAMES),
                    output_names=outputs,
                    dynamic_shapes=({0: batch}, {0: batch, 1: actions}, {0: batch, 1: actions}),
                    opset_version=max(opset, 18),
                )
            else:
                axes: dict[str, dict[int, str]] = {
                    "observations": {0: "batch"},
                    "action_features": {0: "batch", 1: "actions"},
                    "legal_mask": {0: "batch", 1: "actions"},
                    "logits": {0: "batch", 1: "actions"},
                }
                axes.update({name: {0: "batch"} for name in outputs[1:]})
                torch.onnx.export(
                    module,
                    example,
                    str(path),
                    dynamo=False,
                    input_names=list(INPUT_NAMES),
                    output_names=outputs,
                    dynamic_axes=axes,
                    opset_version=opset,
                )
    except Exception as err:
        raise ExportError(f"ONNX export to {path} failed: {type(err).__name__}: {err}") from err
    finally:
        model.to(device)
    return path


def verify_onnx(
    model: PolicyValueNet,
    onnx_path: str | Path,
    observations: torch.Tensor,
    action_features: torch.Tensor,
    legal_mask: torch.Tensor,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-5,
) -> float:
    """Run the batch through torch and ONNX Runtime; return the largest absolute difference of
    any output (``-inf`` logits must match exactly); raise :class:`ExportError` where an entry
    differs by more than ``atol + rtol·|torch's|`` (``numpy.allclose``: float32 kernels that sum
    in another order differ by a few ulps of the value, more for a large logit)."""
    import onnxruntime as ort  # lazy: an optional dependency (the onnx extra)

    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    feeds = {
        "observations": observations.numpy(),
        "action_features": action_features.numpy(),
        "legal_mask": legal_mask.numpy(),
    }
    got = session.run(None, feeds)
    device = next(model.parameters()).device
    with torch.inference_mode():
        out = model.eval()(
            observations.to(device), action_features.to(device), legal_mask.to(device)
        )
    want = [out.logits, out.values, *(out.aux[s.name] for s in model.config.aux_heads)]
    worst = 0.0
    for name, a, b in zip(output_names(model), got, want, strict=True):
        b_np = b.cpu().numpy()
        if a.shape != b_np.shape:
            raise ExportError(f"ONNX output {name} has shape {a.shape}, torch {b_np.shape}")
        finite = np.isfinite(b_np)
        if not np.array_equal(finite, np.isfinite(a)):
            raise ExportError(f"ONNX output {name}: masked (-inf) entries differ from torch")
        gap = np.abs(a[finite] - b_np[finite])
        diff = float(gap.max()) if finite.any() else 0.0
        worst = max(worst, diff)
        if (gap > atol + rtol * np.abs(b_np[finite])).any():
            raise ExportError(f"ONNX output {name} differs from torch by {diff:.3g} > {atol:g}")
    return worst


def random_positions(
    game: Game, count: int, *, seed: int = 0, max_games: int = 1000
) -> list[tuple[State, int]]:
    """``count`` decision positions ``(state, player)`` from uniformly random playouts (every
    acting player of a simultaneous node counts), for tests, benchmarks and export checks."""
    rng = random.Random(seed)
    positions: list[tuple[State, int]] = []
    for g in range(max_games):
        state = game.new_initial_state(seed + g)
        while not state.is_terminal() and len(positions) < count:
            acting = state.current_players
            if acting[0] == CHANCE:
                state.apply_action(sample_chance(state.chance_outcomes(), rng.random()))
                continue
            joint = []
            for p in acting:
                legal = state.legal_actions(p)
                positions.append((state.clone(), p))
                joint.append(legal[int(rng.random() * len(legal))])
            if len(acting) == 1:
                state.apply_action(joint[0])
            else:
                state.apply_joint_action(tuple(joint))
        if len(positions) >= count:
            return positions[:count]
    return positions


def encode_batch(
    encoder: Encoder, positions: Sequence[tuple[State, int]]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A padded batch (:func:`~omega_cluster.model.network.pad_batch`) of encoded positions."""
    obs = [encoder.encode_observation(s, p) for s, p in positions]
    feats = [encoder.encode_actions(s, p, s.legal_actions(p)) for s, p in positions]
    return pad_batch(obs, feats)


@dataclass(frozen=True)
class BundleResult:
    """What :func:`export_bundle` wrote."""

    directory: Path
    onnx_path: Path
    max_difference: float | None  # torch vs ONNX Runtime on real positions (None: not checked)


def export_bundle(
    checkpoint: str | Path,
    out: str | Path,
    *,
    opset: int = 17,
    verify_positions: int = 64,
    overwrite: bool = False,
) -> BundleResult:
    """Write the agent bundle of a checkpoint to ``out``, whole or not at all (:mod:`._atomic`).
    ``verify_positions > 0`` checks ONNX Runtime against torch on that many positions of random
    playouts of the checkpoint's game."""
    loaded = load_checkpoint(checkpoint, load_optimizer=False)
    meta = loaded.metadata
    target = Path(out)
    if target.exists() and not overwrite:
        raise ExportError(f"{target} already exists; pass overwrite=True or use a new directory")
    try:
        with atomic_directory(target) as tmp:
            onnx_path = export_onnx(loaded.model, tmp / "model.onnx", opset=opset)
            worst = None
            if verify_positions > 0:
                params = {k: v for k, v in meta.game_params.items() if k != "name"}
                game = make_game(meta.game, **params)
                encoder = encoder_from_info(game, meta.encoder)
                batch = encode_batch(encoder, random_positions(game, verify_positions, seed=1))
                worst = verify_onnx(loaded.model, onnx_path, *batch)
            description = _bundle_description(meta, loaded.model, worst)
            (tmp / "encoder.json").write_text(json.dumps(description, indent=2) + "\n")
            (tmp / "README.md").write_text(_readme(meta.encoder, loaded.model, description))
    except OSError as err:  # a folder that cannot be made or written (nothing is left behind)
        why = _why_unwritable(target, err)
        raise ExportError(f"cannot write the bundle to {target}: {why}") from err
    return BundleResult(target, target / "model.onnx", worst)


def _why_unwritable(target: Path, err: OSError) -> str:
    """The cause of ``err`` in words: a parent of ``target`` that is a file, or the OS's reason."""
    file = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
    return f"{file} is a file" if file else err.strerror or str(err)


def _bundle_description(meta: Any, model: PolicyValueNet, worst: float | None) -> dict[str, Any]:
    info: EncoderInfo = meta.encoder
    return {
        "format": 1,
        "game": meta.game,
        "game_params": {
            k: list(v) if isinstance(v, tuple) else v for k, v in meta.game_params.items()
        },
        "encoder": info.to_json(),
        "model_config": model.config.to_json(),
        "inputs": {
            "observations": ["float32", ["batch", info.observation_size]],
            "action_features": ["float32", ["batch", "actions", info.action_feature_size]],
            "legal_mask": ["bool", ["batch", "actions"]],
        },
        "outputs": {
            "logits": ["float32", ["batch", "actions"]],
            "values": ["float32", ["batch", model.config.num_value_seats]],
            **{f"aux_{s.name}": ["float32", ["batch", s.size]] for s in model.config.aux_heads},
        },
        "value_range": list(model.config.value_range) if model.config.value_range else None,
        "checkpoint": {
            "version": meta.version,
            "parent_version": meta.parent_version,
            "step": meta.step,
            "created": meta.created,
            "weights_sha256": meta.weights_sha256,
            "metrics": meta.metrics,
        },
        "onnx_vs_torch_max_abs_difference": worst,
    }


def _readme(info: EncoderInfo, model: PolicyValueNet, description: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {s.name} | {s.start} | {s.size} | {s.doc} |" for s in info.observation_layout
    )
    action_rows = "\n".join(
        f"| {s.name} | {s.start} | {s.size} | {s.doc} |" for s in info.action_layout
    )
    aux = "".join(
        f"- `aux_{s.name}` float32[batch, {s.size}]: {s.kind} — {s.doc}\n"
        for s in model.config.aux_heads
    )
    vr = model.config.value_range
    scale = f"in [{vr[0]:g}, {vr[1]:g}] (sigmoid-squashed)" if vr else "raw (unbounded)"
    ckpt = description["checkpoint"]
    return f"""# {description["game"]} agent (policy/value network, ONNX)

Model version {ckpt["version"]} (step {ckpt["step"]}, created {ckpt["created"]}), encoder
`{info.name}` version {info.version}. Game parameters: `{description["game_params"]}`.
`encoder.json` holds everything below in machine-readable form.

## Inputs (`model.onnx`)
- `observations` float32[batch, {info.observation_size}]: the position as the acting player sees
  it (only what that player may know), seat-relative: relative seat k is absolute seat
  (player + k) mod number of players. Layout:

| segment | offset | size | meaning |
|---|---|---|---|
{rows}

- `action_features` float32[batch, actions, {info.action_feature_size}]: one row per legal action
  (pad rows with zeros). Layout:

| segment | offset | size | meaning |
|---|---|---|---|
{action_rows}

- `legal_mask` bool[batch, actions]: true for the real (legal) rows, false for padding.

## Outputs
- `logits` float32[batch, actions]: policy logits, -inf on padding; softmax gives the prior.
- `values` float32[batch, {model.config.num_value_seats}]: expected return of each relative seat
  (0 = the acting player), {scale}, in the game's return units. Seats beyond the table size are
  padding.
{aux}
To play: encode the position for the acting player, run the model, pick the legal action with
the highest logit (or sample from the softmax). The encoder must match `{info.name}` version
{info.version} exactly; the Python reference is `omega_cluster.model.encoders`.
"""
