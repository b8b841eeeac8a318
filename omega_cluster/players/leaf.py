"""The search leaf a training run names (``search.leaf``), as a frozen spec both training and
evaluation build from.

* ``network`` — the network's prior and value (the network leaf);
* ``critic`` — the network's prior and its perfect-information critic's value on the leaf's
  world, which the search drew in full (:class:`~omega_cluster.model.inference.CriticEvaluator`;
  the model needs a critic, ``model.critic=true``, and the game a hidden state);
* a rollout leaf (``random``, ``commander_rollout``, …) — rollouts only, no network;
* ``network+<rollout leaf>`` — the network's prior with a value mixed from both,
  ``network_value_weight`` on the network (AlphaGo's λ-mix, Silver et al. 2016; 0 = rollout
  values only).

Self-play (:mod:`omega_cluster.train.workers`) and the gate's model players
(:mod:`omega_cluster.eval.gatekeeper`) each hold a :class:`LeafSpec` and call
:meth:`LeafSpec.build` with their network, so the two read the leaf the same way.
"""

from __future__ import annotations

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.model.inference import CriticEvaluator, NetworkEvaluator
from omega_cluster.model.network import PolicyValueNet
from omega_cluster.players.leaf_spec import BLEND, CRITIC, ROLLOUT, LeafSpec
from omega_cluster.players.search import build_leaf_evaluator
from omega_cluster.search.evaluators import BlendEvaluator, Evaluator

__all__ = ["LeafSpec", "build_leaf"]


def build_leaf(
    spec: LeafSpec, game: Game, model: PolicyValueNet | None = None, encoder: Encoder | None = None
) -> Evaluator:
    """The leaf evaluator of ``spec`` for ``game`` (``model`` and ``encoder`` for a network
    leaf); :meth:`LeafSpec.build` calls it."""
    if not spec.uses_network:
        return build_leaf_evaluator(game, spec, rollouts=spec.rollouts)
    if model is None or encoder is None:
        raise ValueError(f"search.leaf={spec.text!r} needs the network")
    if spec.kind == CRITIC:
        if encoder.info().hidden is None:
            raise UserError(
                f"search.leaf=critic reads the hidden state of each sampled world, and "
                f"{game.spec.name} gives none (its encoder declares no hidden state)"
            )
        return CriticEvaluator(model, encoder, device="cpu")
    network = NetworkEvaluator(model, encoder, device="cpu")
    if spec.kind != BLEND:
        return network
    rollout = build_leaf_evaluator(game, LeafSpec(ROLLOUT, spec.rollout, spec.rollouts))
    w = spec.network_value_weight
    return BlendEvaluator(network, rollout, weight_a=w, weight_b=1.0 - w)
