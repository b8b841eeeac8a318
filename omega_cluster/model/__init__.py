"""The learning model: encoders, the action-conditioned policy/value network, batched inference
for search, checkpoints and ONNX export.

* :mod:`.encoders` — ``encoder_for(game)`` (the game plugin's encoder, else the generic one):
  ``(state, player)`` → observation ``float32[D]`` and per-legal-action features
  ``float32[L, F]``, only what the player may know, versioned;
* :mod:`.network` — :class:`ModelConfig`, :class:`PolicyValueNet` (``(obs [B, D], features
  [B, L, F], mask [B, L], hidden_state [B, H] | None) -> NetOutput(logits [B, L], values [B, S]
  seat-relative, aux, belief, critic)``: the belief head and the perfect-information critic of
  the records' training-only hidden state),
  :func:`pad_batch`, :func:`select_device`;
* :mod:`.inference` — :class:`NetworkEvaluator` (the search's Evaluator: batched, cached by
  information set, values in absolute seat order) and :class:`NetworkPlayer` (no search);
* :mod:`.runtime` — the forward pass on numpy batches: :class:`TorchForward`, :class:`OrtForward`
  (ONNX Runtime, faster on CPU at every batch size measured) and :func:`best_forward`;
* :mod:`.threads` — :func:`pin_threads`: torch's intra-op threads of a process that plays with
  a network (1 unless configured: small forward passes oversubscribe the cores otherwise);
* :mod:`.checkpoint` — :func:`save_checkpoint` / :func:`load_checkpoint` (safetensors + JSON,
  optimizer state without pickle, atomic writes, clear errors);
* :mod:`.export` — :func:`export_onnx`, :func:`export_bundle` (the ``omega-cluster export`` agent
  bundle) and :func:`verify_onnx`;
* :mod:`.registry` — :class:`ModelRegistry`: every version of a run's network with its status,
  parent, checkpoint URI and rating (pure Python, no torch), read by training (new candidates,
  promotions) and by evaluation (a run's champion at an arena table) alike.

Imports flow ``games → search → model``: the learner and self-play (:mod:`omega_cluster.train`)
build on this package; nothing here imports them.
"""

from omega_cluster.model.checkpoint import (
    CheckpointError,
    CheckpointMetadata,
    LoadedCheckpoint,
    load_checkpoint,
    load_optimizer_state,
    load_weights,
    read_metadata,
    save_checkpoint,
)
from omega_cluster.model.encoders import (
    AuxHeadSpec,
    Encoder,
    EncoderError,
    EncoderInfo,
    encode_position,
    encoder_for,
    encoder_from_info,
)
from omega_cluster.model.export import (
    ExportError,
    encode_batch,
    export_bundle,
    export_onnx,
    random_positions,
    verify_onnx,
)
from omega_cluster.model.inference import (
    InferenceStats,
    NetworkEvaluator,
    NetworkPlayer,
    network_player_from_checkpoint,
)
from omega_cluster.model.network import (
    ModelConfig,
    ModelConfigError,
    NetOutput,
    PolicyValueNet,
    pad_batch,
    select_device,
)
from omega_cluster.model.runtime import Forward, OrtForward, TorchForward, best_forward
from omega_cluster.model.threads import pin_threads

__all__ = [
    "AuxHeadSpec",
    "CheckpointError",
    "CheckpointMetadata",
    "Encoder",
    "EncoderError",
    "EncoderInfo",
    "ExportError",
    "Forward",
    "InferenceStats",
    "LoadedCheckpoint",
    "ModelConfig",
    "ModelConfigError",
    "NetOutput",
    "NetworkEvaluator",
    "NetworkPlayer",
    "OrtForward",
    "PolicyValueNet",
    "TorchForward",
    "best_forward",
    "encode_batch",
    "encode_position",
    "encoder_for",
    "encoder_from_info",
    "export_bundle",
    "export_onnx",
    "load_checkpoint",
    "load_optimizer_state",
    "load_weights",
    "network_player_from_checkpoint",
    "pad_batch",
    "pin_threads",
    "random_positions",
    "read_metadata",
    "save_checkpoint",
    "select_device",
    "verify_onnx",
]
