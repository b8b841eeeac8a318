"""Which compiled leaf an evaluator is, for the fast search path (:mod:`omega_cluster.search.fast`).

The compiled search cannot call a Python evaluator per leaf; it runs the leaves it has compiled
(a game's rollouts) inside the tree and asks the network for a whole batch at once. So an
evaluator takes the fast path only when it is one of the leaves the run's ``search.leaf`` names
(:class:`~omega_cluster.players.leaf.LeafSpec`): the network leaf (a
:class:`~omega_cluster.model.inference.NetworkEvaluator`), a single-rollout leaf of a uniform
random or rule-based player, or their blend (:class:`~omega_cluster.search.evaluators.BlendEvaluator`
with weights ``w`` and ``1 - w``). Anything else — a user's evaluator, several rollouts per leaf,
other blends — is answered with the reason, and the search runs the Python loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from omega_cluster.games.player import RandomPlayer
from omega_cluster.model.inference import NetworkEvaluator
from omega_cluster.search.evaluators import BlendEvaluator, Evaluator, RolloutEvaluator

__all__ = ["Forward", "LeafPlan", "leaf_plan"]

Forward = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``forward(obs, feats, mask) -> (priors, seat-relative values)`` on padded buffers."""


@dataclass(frozen=True)
class LeafPlan:
    """The compiled leaf an evaluator amounts to."""

    name: str  # "network", "<player>_rollout" or "network+<player>_rollout"
    network_value_weight: float  # the network's share of the value (1 for the network leaf)
    forward: Forward | None  # the network's forward pass (None for a rollout leaf)
    policy: object = None  # the rollout's player (its compiled playout reads its weights)


def _rollout_name(evaluator: Evaluator) -> tuple[str | None, str]:
    if type(evaluator) is not RolloutEvaluator:
        return None, f"the leaf {evaluator!r} is not a rollout, network or blend leaf"
    if evaluator.rollouts != 1:
        return None, f"{evaluator.rollouts} rollouts per leaf (the compiled leaf plays one)"
    policy = evaluator.policy
    if type(policy) is RandomPlayer:
        return "random_rollout", ""
    name = getattr(policy, "name", None)
    if not isinstance(name, str) or getattr(policy, "playout_returns", None) is None:
        return None, f"no compiled playout for the rollout player {policy!r}"
    return f"{name.lower()}_rollout", ""


def _policy(evaluator: Evaluator) -> object:
    return evaluator.policy if type(evaluator) is RolloutEvaluator else None


def leaf_plan(evaluator: Evaluator) -> tuple[LeafPlan | None, str]:
    """The compiled leaf ``evaluator`` is, or ``None`` and the reason it is none."""
    if type(evaluator) is NetworkEvaluator:
        return LeafPlan("network", 1.0, evaluator.forward_padded), ""
    if type(evaluator) is BlendEvaluator:
        net, rollout = evaluator.a, evaluator.b
        w = evaluator.weight_a
        if type(net) is not NetworkEvaluator or abs(w + evaluator.weight_b - 1.0) > 1e-12:
            return (
                None,
                f"a blend other than network + rollout with weights w, 1 - w ({evaluator!r})",
            )
        name, why = _rollout_name(rollout)
        if name is None:
            return None, why
        return LeafPlan(f"network+{name}", w, net.forward_padded, _policy(rollout)), ""
    name, why = _rollout_name(evaluator)
    if name is None:
        return None, why
    return LeafPlan(name, 0.0, None, _policy(evaluator)), ""
