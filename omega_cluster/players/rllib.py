"""A policy trained by RLlib, played in this project's arena: the spec ``rllib:<dir>[:greedy]``.

``omega-cluster baseline rllib_ppo`` exports the learner's policy (the actor's layers of RLlib's
PPO module, no value head) to ``<out>/policy``: ``policy.safetensors`` and ``policy.json`` (the
game, its parameters, the layers in order with their activations). This player runs that small
network in numpy on the seat's observation from the game's encoder — the observation the RLlib
environment gave it — masks the illegal actions and samples the softmax with the arena's rng
(``greedy``: the most likely legal action). No Ray or RLlib is needed to play it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, State
from omega_cluster.model.encoders import encoder_for

__all__ = ["POLICY_FORMAT", "POLICY_META", "POLICY_WEIGHTS", "RLlibPolicyPlayer"]

POLICY_FORMAT = "omega_cluster.rllib_policy"
POLICY_META = "policy.json"
POLICY_WEIGHTS = "policy.safetensors"

_ACTIVATIONS = {
    "linear": lambda x: x,
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
}


class RLlibPolicyError(UserError, ValueError):
    """A policy directory that is missing, of another game, or not readable."""


def _read(directory: Path, game: Game) -> tuple[list[tuple[np.ndarray, np.ndarray, Any]], str]:
    """The layers (weight, bias, activation) of the exported policy; refuses another game."""
    from safetensors.numpy import load_file

    if not (directory / POLICY_META).is_file() and (directory / "policy" / POLICY_META).is_file():
        directory = directory / "policy"  # the baseline's out directory
    meta_path = directory / POLICY_META
    if not meta_path.is_file() or not (directory / POLICY_WEIGHTS).is_file():
        raise RLlibPolicyError(
            f"rllib:{directory}: no {POLICY_META} + {POLICY_WEIGHTS} there (write them with "
            "`omega-cluster baseline rllib_ppo ... out=<dir>`)"
        )
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != POLICY_FORMAT or meta.get("version") != 1:
        raise RLlibPolicyError(f"rllib:{directory}: {meta_path.name} is not a policy of version 1")
    params = json.loads(json.dumps(dict(game.params), default=str))
    if meta["game"] != game.spec.name or meta["params"] != params:
        raise RLlibPolicyError(
            f"rllib:{directory}: the policy plays {meta['game']} {meta['params']}, not "
            f"{game.spec.name} {params}"
        )
    tensors = load_file(str(directory / POLICY_WEIGHTS))
    layers = []
    for layer in meta["layers"]:
        activation = _ACTIVATIONS.get(layer["activation"])
        if activation is None:
            raise RLlibPolicyError(
                f"rllib:{directory}: unknown activation {layer['activation']!r} "
                f"(known: {', '.join(_ACTIVATIONS)})"
            )
        name = layer["name"]
        layers.append((tensors[f"{name}.weight"], tensors[f"{name}.bias"], activation))
    return layers, str(directory)


class RLlibPolicyPlayer:
    """The exported RLlib policy at one seat (module docstring)."""

    name = "rllib"

    def __init__(self, game: Game, policy: str, greedy: bool = False) -> None:
        self.game = game
        self.encoder = encoder_for(game)
        self.layers, self.directory = _read(Path(policy), game)
        inputs = self.layers[0][0].shape[1]
        outputs = self.layers[-1][0].shape[0]
        if inputs != self.encoder.observation_size or outputs != game.spec.num_actions:
            raise RLlibPolicyError(
                f"rllib:{policy}: the policy maps {inputs} inputs to {outputs} actions; "
                f"{game.spec.name} observes {self.encoder.observation_size} and has "
                f"{game.spec.num_actions} actions"
            )
        self.greedy = bool(greedy)

    def logits(self, state: State, player: int) -> np.ndarray:
        """The policy's logits over the fixed action space (before masking)."""
        x = np.asarray(self.encoder.encode_observation(state, player), dtype=np.float32)
        for weight, bias, activation in self.layers:
            x = activation(weight @ x + bias)
        return x

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = list(state.legal_actions(player))
        scores = self.logits(state, player)[legal]
        if self.greedy:
            return legal[int(np.argmax(scores))]
        weights = np.exp(scores - scores.max())
        return rng.choices(legal, weights=weights.tolist())[0]

    def __repr__(self) -> str:
        return f"RLlibPolicyPlayer({self.directory!r}, greedy={self.greedy})"
