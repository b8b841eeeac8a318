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
  export and a new session.

Why both: ONNX Runtime runs the small networks here faster than torch on the CPU, most at small
batches (a pure-network player, a gate game), since torch's per-call overhead is what it saves;
``torch.jit`` and ``torch.compile`` gain less or lose (``python -m bench.bench_runtime``
measures all of them). :func:`best_forward` makes that choice for a model: ONNX
Runtime for a CPU model when it is installed (the ``onnx`` extra), torch otherwise (a GPU, or no
onnxruntime).

The critic leaf's forward (:func:`best_critic_forward`: :class:`TorchCriticForward`,
:class:`OrtCriticForward`, the same choice) takes a fourth input, the hidden codes ``float32[B,
H]`` of each row's world, and returns the critic's values in place of the value head's: the
network's ``forward(..., hidden_state=...)``, exported as a module of the four inputs.
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

__all__ = [
    "CriticForward",
    "Forward",
    "OrtCriticForward",
    "OrtForward",
    "RuntimeUnavailable",
    "TorchCriticForward",
    "TorchForward",
    "best_critic_forward",
    "best_forward",
]


class RuntimeUnavailable(UserError, ImportError):
    """The runtime asked for is not installed."""


class Forward(Protocol):
    """An encoded batch in, (logits, values) out, all numpy (module docstring)."""

    def __call__(
        self, observations: np.ndarray, action_features: np.ndarray, legal_mask: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]: ...

    def load_state_dict(self, state_dict: Mapping[str, torch.Tensor]) -> None: ...


class CriticForward(Protocol):
    """The critic leaf's: :class:`Forward` with the rows' hidden codes ``float32[B, H]`` as a
    fourth input, the critic's values in place of the value head's."""

    def __call__(
        self,
        observations: np.ndarray,
        action_features: np.ndarray,
        legal_mask: np.ndarray,
        hidden: np.ndarray,
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
            path = self._write(Path(tmp) / "model.onnx")
            try:  # the session reads the whole file now: the directory may go
                return ort.InferenceSession(str(path), options,
                                            providers=["CPUExecutionProvider"])  # fmt: skip
            except Exception as err:  # onnxruntime's own error types (e.g. a too-new opset)
                raise ExportError(f"ONNX Runtime cannot load the exported network: {err}") from err

    def _write(self, path: Path) -> Path:
        return export_onnx(self.model, path)

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


def _check_critic(model: PolicyValueNet) -> None:
    if not getattr(model.config, "critic", False) or getattr(model.config, "hidden", None) is None:
        raise UserError(
            "search.leaf=critic reads the network's perfect-information critic, and this model "
            "has none (model.critic=false, or its game gives no hidden state)"
        )


class TorchCriticForward(TorchForward):
    """The critic leaf's forward run by torch: the policy logits and the critic's values."""

    def __init__(self, model: PolicyValueNet) -> None:
        _check_critic(model)
        super().__init__(model)

    def __call__(  # type: ignore[override]  # the critic's forward takes the hidden codes
        self,
        observations: np.ndarray,
        action_features: np.ndarray,
        legal_mask: np.ndarray,
        hidden: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        device = self.device
        with torch.inference_mode():
            out = self.model(
                torch.from_numpy(np.asarray(observations, np.float32)).to(device),
                torch.from_numpy(np.asarray(action_features, np.float32)).to(device),
                torch.from_numpy(np.asarray(legal_mask, np.bool_)).to(device),
                hidden_state=torch.from_numpy(np.asarray(hidden, np.float32)).to(device),
            )
            critic = out.critic
            assert critic is not None  # _check_critic: the model has one
            return out.logits.float().cpu().numpy(), critic.float().cpu().numpy()

    def __repr__(self) -> str:
        return f"TorchCriticForward(device={self.device})"


class _CriticModule(torch.nn.Module):
    """(observations, action_features, legal_mask, hidden_state) -> (logits, critic), for ONNX."""

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        self.model = model

    def forward(self, observations: torch.Tensor, action_features: torch.Tensor,
                legal_mask: torch.Tensor, hidden_state: torch.Tensor) -> tuple[torch.Tensor, ...]:  # fmt: skip
        out = self.model(observations, action_features, legal_mask, hidden_state=hidden_state)
        return out.logits, out.critic


class OrtCriticForward(OrtForward):
    """The critic leaf's forward exported to ONNX (:class:`_CriticModule`) and run by ONNX
    Runtime on the CPU."""

    def __init__(self, model: PolicyValueNet) -> None:
        _check_critic(model)
        super().__init__(model)

    def _write(self, path: Path) -> Path:
        model = self.model
        hidden: Any = getattr(model.config, "hidden", None)  # _check_critic: it has one
        example = (
            torch.zeros(2, model.observation_size),
            torch.zeros(2, 3, model.action_feature_size),
            torch.ones(2, 3, dtype=torch.bool),
            torch.zeros(2, hidden.size),
        )
        names = ["observations", "action_features", "legal_mask", "hidden_state"]
        axes = {"observations": {0: "batch"}, "action_features": {0: "batch", 1: "actions"},
                "legal_mask": {0: "batch", 1: "actions"}, "hidden_state": {0: "batch"},
                "logits": {0: "batch", 1: "actions"}, "critic": {0: "batch"}}  # fmt: skip
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
                torch.onnx.export(_CriticModule(model).eval(), example, str(path), dynamo=False,
                                  input_names=names, output_names=["logits", "critic"],
                                  dynamic_axes=axes, opset_version=17)  # fmt: skip
        except Exception as err:
            raise ExportError(
                f"ONNX export of the critic failed: {type(err).__name__}: {err}"
            ) from err
        return path

    def __call__(  # type: ignore[override]  # the critic's forward takes the hidden codes
        self,
        observations: np.ndarray,
        action_features: np.ndarray,
        legal_mask: np.ndarray,
        hidden: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        feeds = {
            "observations": np.asarray(observations, np.float32),
            "action_features": np.asarray(action_features, np.float32),
            "legal_mask": np.asarray(legal_mask, np.bool_),
            "hidden_state": np.asarray(hidden, np.float32),
        }
        logits, critic = self._session.run(["logits", "critic"], feeds)
        return logits, critic

    def __repr__(self) -> str:
        return f"OrtCriticForward(threads={self.threads})"


def best_critic_forward(model: PolicyValueNet) -> CriticForward:
    """:func:`best_forward` for the critic leaf: ONNX Runtime for a CPU model when installed,
    torch otherwise (or when the critic does not export). Refused, in one line, for a model
    without a critic."""
    _check_critic(model)
    on_cpu = next(model.parameters()).device.type == "cpu"
    if on_cpu and onnxruntime_available():
        try:
            return OrtCriticForward(model)
        except ExportError as err:
            warnings.warn(f"{err}; the critic runs in torch", RuntimeWarning, stacklevel=2)
    return TorchCriticForward(model)
