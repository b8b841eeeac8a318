"""An optimizer's state dict as named tensors plus JSON, so a checkpoint never pickles it.

``torch.save`` of an optimizer state dict is a pickle. :func:`flatten_optimizer` replaces each
tensor by a ``{"__tensor__": name}`` reference (the tensors go to a safetensors file), keeps
scalars, tags tuples (``{"__tuple__": [...]}``, e.g. Adam's ``betas``) and non-string mapping
keys (``{"__map__": [[k, v], ...]}``, e.g. parameter ids), so :func:`unflatten_optimizer` rebuilds
the exact dict ``optimizer.load_state_dict`` takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

__all__ = ["OptimizerStateError", "flatten_optimizer", "unflatten_optimizer"]


class OptimizerStateError(ValueError):
    """An optimizer state that cannot be saved, or a saved one that refers to a missing tensor."""


def flatten_optimizer(state: Mapping[str, Any]) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Optimizer state dict -> (named tensors, JSON): tensors are replaced by ``{"tensor":
    name}`` references, everything else is JSON (tuples tagged)."""
    tensors: dict[str, torch.Tensor] = {}

    def walk(value: Any, name: str) -> Any:
        if isinstance(value, torch.Tensor):
            tensors[name] = value.detach().cpu().contiguous()
            return {"__tensor__": name}
        if isinstance(value, Mapping):
            return {
                "__map__": [
                    [walk(k, f"{name}.k"), walk(v, f"{name}.{k}")] for k, v in value.items()
                ]
            }
        if isinstance(value, (list, tuple)):
            items = [walk(v, f"{name}.{i}") for i, v in enumerate(value)]
            return {"__tuple__": items} if isinstance(value, tuple) else items
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise OptimizerStateError(
            f"optimizer state entry {name} of type {type(value)} cannot be saved"
        )

    return tensors, walk(dict(state), "opt")


def unflatten_optimizer(tensors: Mapping[str, torch.Tensor], data: Any) -> Any:
    """The state dict :func:`flatten_optimizer` took apart, for ``optimizer.load_state_dict``."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            if "__tensor__" in value:
                return tensors[value["__tensor__"]]
            if "__map__" in value:
                return {walk(k): walk(v) for k, v in value["__map__"]}
            if "__tuple__" in value:
                return tuple(walk(v) for v in value["__tuple__"])
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    try:
        return walk(data)
    except KeyError as err:
        raise OptimizerStateError(f"optimizer state refers to a missing tensor {err}") from err
