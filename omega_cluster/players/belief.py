"""The network's belief over the hidden items, as a search's belief source (``belief=network``).

:class:`NetworkBelief` is the thin adapter between a network with a belief head and the
belief-guided determinizations of a game (its plugin's ``belief_worlds``): called with
``(state, player)`` once per search, it encodes ``player``'s public observation, runs the network
once and returns the belief head's probabilities ``float64[items, codes]`` — the softmax of its
logits over the location codes that exist at this table (1 the undealt pool, ``1 + k`` the seat
``k`` after ``player``, ``k < N``), zero on code 0 and on the codes of seats the table lacks.
The belief head reads the public trunk only, so the belief leaks nothing the player cannot see.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from omega_cluster.games.api import State
from omega_cluster.players.registry import PlayerSpecError

__all__ = ["NetworkBelief", "network_of"]


def network_of(evaluator: Any) -> tuple[Any, Any] | None:
    """The ``(model, encoder)`` of the network an evaluator holds: a network leaf itself, or the
    first part of a blend (``network+<rollout>``); None when it holds none."""
    for _ in range(8):  # a blend of blends at most this deep
        model, encoder = getattr(evaluator, "model", None), getattr(evaluator, "encoder", None)
        if model is not None and encoder is not None:
            return model, encoder
        evaluator = getattr(evaluator, "a", None)
        if evaluator is None:
            return None
    return None


class NetworkBelief:
    """``(state, player) -> float64[items, codes]``: the network's belief head (module doc)."""

    def __init__(self, model: Any, encoder: Any) -> None:
        if not getattr(getattr(model, "config", None), "belief_head", False):
            raise PlayerSpecError(
                "belief=network needs a network with a belief head (model.belief_head=true); "
                "the search's network has none"
            )
        self.model, self.encoder = model, encoder

    def __call__(self, state: State, player: int) -> np.ndarray:
        encoder = self.encoder
        legal = state.legal_actions(player)
        obs = torch.from_numpy(np.asarray(encoder.encode_observation(state, player))[None])
        feats = np.asarray(encoder.encode_actions(state, player, legal), np.float32)
        mask = torch.ones((1, max(1, len(feats))), dtype=torch.bool)
        if not len(feats):
            feats = np.zeros((1, encoder.action_feature_size), np.float32)
        device = next(self.model.parameters()).device
        with torch.inference_mode():
            out = self.model(
                obs.to(device), torch.from_numpy(feats[None]).to(device), mask.to(device)
            )
        logits = getattr(out, "belief", None)
        if logits is None:
            raise PlayerSpecError("belief=network: the network's forward gave no belief output")
        return probabilities(logits[0].detach().double().cpu().numpy(), state.game.num_players)

    def __repr__(self) -> str:
        return f"NetworkBelief({type(self.model).__name__}, {getattr(self.encoder, 'name', '?')})"


def probabilities(logits: np.ndarray, num_players: int) -> np.ndarray:
    """A softmax of ``logits[items, codes]`` over the codes ``1 .. num_players`` (the undealt
    pool and the other seats at this table); zero elsewhere."""
    live = logits[:, 1 : num_players + 1]
    e = np.exp(live - live.max(axis=1, keepdims=True))
    out = np.zeros_like(logits, dtype=np.float64)
    out[:, 1 : num_players + 1] = e / e.sum(axis=1, keepdims=True)
    return out
