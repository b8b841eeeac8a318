"""Settings as flat dotted keys: :func:`flat_params` (their text, for MLflow params and the run
log) and :func:`leaves` (any nested mapping, with a function applied to each leaf value), one walk
that ``load`` and ``resume`` share."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

from omega_cluster.config.schema import Settings

__all__ = ["flat_params", "leaves"]


def leaves(data: Any, leaf: Callable[[Any], Any] = lambda value: value) -> dict[str, Any]:
    """Dotted leaf keys -> ``leaf(value)`` (a mapping's entries are leaves; an empty one is)."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        else:
            out[prefix] = leaf(value)

    walk("", data)
    return out


def flat_params(settings: Settings) -> dict[str, str]:
    """Dotted keys → values as text, for MLflow params: ``{"search.simulations": "200",
    "game.params.players": "2", "gate.anchors.commander": "1400.0", "run.dir": "null"}``.

    Every schema field has a key (a mapping's entries each have their own; an empty mapping
    is ``"{}"``); values are written as in a Hydra override (null, true/false, JSON lists).
    """
    return leaves(dataclasses.asdict(settings), _param_text)


def _param_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, separators=(",", ":"), default=str)
    return str(value)
