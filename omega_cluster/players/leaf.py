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

from dataclasses import dataclass

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.model.inference import CriticEvaluator, NetworkEvaluator
from omega_cluster.model.network import PolicyValueNet
from omega_cluster.players.search import build_leaf_evaluator
from omega_cluster.search.evaluators import BlendEvaluator, Evaluator

__all__ = ["CRITIC_LEAF", "NETWORK_LEAF", "LeafSpec", "uses_network"]

NETWORK_LEAF = "network"
CRITIC_LEAF = "critic"


def uses_network(leaf: str) -> bool:
    """Whether a leaf reads the network: ``network``, ``critic`` or ``network+<rollout leaf>``."""
    return leaf in (NETWORK_LEAF, CRITIC_LEAF) or leaf.startswith(NETWORK_LEAF + "+")


@dataclass(frozen=True)
class LeafSpec:
    """A search leaf by name (module docstring), with its rollout count and value mix."""

    name: str = NETWORK_LEAF
    rollouts: int = 1  # rollouts per leaf (rollout leaves)
    network_value_weight: float = 0.5  # network+<rollout>: the network's share of the value

    @property
    def uses_network(self) -> bool:
        return uses_network(self.name)

    def build(
        self, game: Game, model: PolicyValueNet | None = None, encoder: Encoder | None = None
    ) -> Evaluator:
        """The leaf evaluator for ``game`` (``model`` and ``encoder`` for a network leaf)."""
        if not self.uses_network:
            return build_leaf_evaluator(game, self.name, rollouts=self.rollouts)
        if model is None or encoder is None:
            raise ValueError(f"search.leaf={self.name!r} needs the network")
        if self.name == CRITIC_LEAF:
            if encoder.info().hidden is None:
                raise UserError(
                    f"search.leaf=critic reads the hidden state of each sampled world, and "
                    f"{game.spec.name} gives none (its encoder declares no hidden state)"
                )
            return CriticEvaluator(model, encoder, device="cpu")
        network = NetworkEvaluator(model, encoder, device="cpu")
        if self.name == NETWORK_LEAF:
            return network
        rollout = build_leaf_evaluator(game, self.name.split("+", 1)[1], rollouts=self.rollouts)
        w = self.network_value_weight
        return BlendEvaluator(network, rollout, weight_a=w, weight_b=1.0 - w)
