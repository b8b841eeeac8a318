"""Optional dependencies, asked for once: the compiled paths need numba (the ``fast`` extra), the
ONNX Runtime forward pass needs onnxruntime (the ``onnx`` extra)."""

from __future__ import annotations

import functools
import importlib.util

__all__ = ["numba_available", "onnxruntime_available"]


@functools.cache
def numba_available() -> bool:
    """numba is installed (it is optional: every compiled path has a pure-Python twin)."""
    return importlib.util.find_spec("numba") is not None


@functools.cache
def onnxruntime_available() -> bool:
    """onnxruntime is installed (optional: :class:`omega_cluster.model.runtime.TorchForward`
    runs the same network without it)."""
    return importlib.util.find_spec("onnxruntime") is not None
