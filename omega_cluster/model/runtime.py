"""The network's forward pass on numpy batches, run by torch or by ONNX Runtime.

A :class:`Forward` takes an encoded batch — observations ``float32[B, D]``, padded action features
``float32[B, L, F]`` and the legal mask ``bool[B, L]`` — and returns the policy logits
``float32[B, L]`` (``-inf`` where the mask is false) and seat-relative values ``float32[B, S]``.
Its :meth:`Forward.load_state_dict` takes a new champion's weights.

* :class:`TorchForward` — the :class:`~omega_cluster.model.network.PolicyValueNet` itself, under
  ``torch.inference_mode`` (any device; the batch goes there and back).
* :class:`OrtForward` — the same network exported to ONNX
  (:func:`~omega_cluster.model.export.export_onnx`) and run by an ONNX Runtime session on the CPU,
  one intra-op thread per torch thread of the process (pinned:
  :func:`~omega_cluster.model.threads.pin_threads`), sequential execution. New weights mean a new
  export and a new session (about 50-70 ms for the default run's model).

Why both (``python -m bench.bench_runtime``, one thread): ONNX Runtime runs the default run's
model 6-8× faster than torch at batch 1 (a pure-network player, a gate game), 1.5-1.7× at 64-128
and 1.1-1.6× at 256-512 (torch's per-call overhead is what it saves); ``torch.jit`` and
``torch.compile`` gain less or lose. :func:`best_forward` makes that choice for a model: ONNX
Runtime for a CPU model when it is installed (the ``onnx`` extra), torch otherwise (a GPU, or no
onnxruntime).
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from omega_cluster._optional import onnxruntime_available
from omega_cluster.errors import UserError
from omega_cluster.model.export import ExportError, export_onnx
from omega_cluster.model.network import PolicyValueNet

__all__ = ["Forward", "OrtForward", "RuntimeUnavailable", "TorchForward", "best_forward"]


class RuntimeUnavailable(UserError, ImportError):
    """The runtime asked for is not installed."""


class Forward(Protocol):
    """An encoded batch in, (logits, values) out, all numpy (module docstring)."""

    def __call__(
        self, observations: np.ndarray, action_features: np.ndarray, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None: ...


class TorchForward:
    """The network run by torch (module docstring)."""

    def __init__(self, model: PolicyValueNet) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device

    def __call__(
        self, observations: np.ndarray, action_features: np.ndarray, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        device = self.device
        with torch.inference_mode():
            out = self.model(
                torch.from_numpy(np.asarray(observations, np.float32)).to(device),
                torch.from_numpy(np.asarray(action_features, np.float32)).to(device),
                torch.from_numpy(np.asarray(legal_mask, np.bool_)).to(device),
            )
            return out.logits.float().cpu().numpy(), out.values.float().cpu().numpy()

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        self.model.load_state_dict(state_dict)
        self.model.eval()

    def __repr__(self) -> str:
        return f"TorchForward(device={self.device})"


class OrtForward:
    """The network exported to ONNX and run by ONNX Runtime on the CPU (module docstring)."""

    def __init__(self, model: PolicyValueNet) -> None:
        if not onnxruntime_available():
            raise RuntimeUnavailable(
                "OrtForward needs onnxruntime, which is not installed (pip install "
                "'omega_cluster[onnx]'); TorchForward runs the same network without it"
            )
        self.model = model.eval()
        self.threads = torch.get_num_threads()
        self._session = self._export()

    def _export(self) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        with tempfile.TemporaryDirectory(prefix="omega-ort-") as tmp:
            path = export_onnx(self.model, Path(tmp) / "model.onnx")
            try:  # the session reads the whole file now: the directory may go
                return ort.InferenceSession(str(path), options,
                                            providers=["CPUExecutionProvider"])  # fmt: skip
            except Exception as err:  # onnxruntime's own error types (e.g. a too-new opset)
                raise ExportError(f"ONNX Runtime cannot load the exported network: {err}") from err

    def __call__(
        self, observations: np.ndarray, action_features: np.ndarray, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        feeds = {
            "observations": np.asarray(observations, np.float32),
            "action_features": np.asarray(action_features, np.float32),
            "legal_mask": np.asarray(legal_mask, np.bool_),
        }
        logits, values = self._session.run(["logits", "values"], feeds)
        return logits, values

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None:
        """New weights: loaded into the network, which is exported again into a new session."""
        self.model.load_state_dict(state_dict)
        self.model.eval()
        self._session = self._export()

    def __repr__(self) -> str:
        return f"OrtForward(threads={self.threads})"


def best_forward(model: PolicyValueNet) -> Forward:
    """The faster runtime for ``model`` (module docstring): ONNX Runtime for a CPU model when
    onnxruntime is installed, torch otherwise — and torch, with a warning that says why, when
    the network does not export (the same outputs, only slower)."""
    on_cpu = next(model.parameters()).device.type == "cpu"
    if on_cpu and onnxruntime_available():
        try:
            return OrtForward(model)
        except ExportError as err:
            warnings.warn(f"{err}; the forward pass runs in torch", RuntimeWarning, stacklevel=2)
    return TorchForward(model)
