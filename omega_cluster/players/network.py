"""The ``network:<checkpoint dir>[:greedy[:temperature]]`` player of the registry.

Spec arguments arrive parsed (``true`` → ``True``, ``0.5`` → ``0.5``, anything else stays text),
so each is checked here before the checkpoint is read: ``greedy`` must be ``true``/``false``,
``temperature`` a number above 0, ``device`` one torch knows and has. A bad one is a
:class:`~omega_cluster.players.registry.PlayerSpecError` naming it; a missing, corrupt or foreign
checkpoint is the :class:`~omega_cluster.model.checkpoint.CheckpointError` of
:func:`~omega_cluster.model.inference.network_player_from_checkpoint`.
"""

from __future__ import annotations

import torch

from omega_cluster.games.api import Game
from omega_cluster.model.inference import NetworkPlayer, network_player_from_checkpoint
from omega_cluster.players.registry import PlayerSpecError

__all__ = ["network_player"]


def network_player(
    game: Game,
    checkpoint: str,
    greedy: bool = True,
    temperature: float = 1.0,
    device: str = "cpu",
) -> NetworkPlayer:
    """The policy network of ``checkpoint`` playing ``game`` without search (module docstring)."""
    if not isinstance(greedy, bool):
        raise PlayerSpecError(f"network: greedy must be true or false, got {greedy!r}")
    if type(temperature) not in (int, float) or not temperature > 0:
        raise PlayerSpecError(f"network: temperature must be a number > 0, got {temperature!r}")
    try:
        kind = torch.device(str(device)).type
    except RuntimeError:
        raise PlayerSpecError(f"network: unknown device {device!r} (e.g. cpu, cuda)") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise PlayerSpecError(f"network: device {device!r}, but torch sees no CUDA device here")
    # a path that looks like a number (network:7) parses as one
    return network_player_from_checkpoint(
        game, str(checkpoint), greedy=greedy, temperature=float(temperature), device=str(device)
    )
