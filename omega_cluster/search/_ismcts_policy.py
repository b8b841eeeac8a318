"""ISMCTS root bookkeeping: Dirichlet root noise, the final policy, the chosen action, the result.

Internal to :mod:`omega_cluster.search.ismcts`; runs once per search, so clarity over speed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from omega_cluster.search._ismcts_tree import Node

__all__ = ["RootStatistics", "choose_action", "dirichlet_noise", "final_policy", "root_statistics"]


class RootStatistics:
    """The root's figures over its legal actions (ascending)."""

    __slots__ = ("action_values", "root_value", "visits")

    def __init__(
        self, visits: list[int], action_values: list[float], root_value: tuple[float, ...]
    ) -> None:
        self.visits = visits  # int[len(legal)]
        self.action_values = action_values  # float[len(legal)], nan when unvisited
        self.root_value = root_value  # float[N]: mean return of every player over the simulations


def root_statistics(root: Node, num_players: int) -> RootStatistics:
    """The figures of ``root``, whose candidates are the legal actions in legal order."""
    visits = list(root.visits)
    values = [m if n else math.nan for m, n in zip(root.means, visits, strict=True)]
    count = root.total_n
    root_value = tuple(t / count for t in root.total) if count else (0.0,) * num_players
    return RootStatistics(visits, values, root_value)


def final_policy(visits: Sequence[int]) -> list[float]:
    """The search's policy: the normalised root visits."""
    total = sum(visits)
    return [n / total for n in visits]


def choose_action(
    policy: Sequence[float], visits: Sequence[int], temperature: float, rng: random.Random
) -> int:
    """Index of the action to play: the policy's argmax (random among ties) at temperature 0,
    else a draw with probability ∝ visits^(1/T) (AlphaZero's visit temperature)."""
    if temperature == 0.0:
        best = max(policy)
        ties = [j for j, x in enumerate(policy) if x == best]
        return ties[int(rng.random() * len(ties))] if len(ties) > 1 else ties[0]
    top = max(visits)
    weights = [(n / top) ** (1.0 / temperature) if n else 0.0 for n in visits]
    r = rng.random() * sum(weights)
    for j, w in enumerate(weights):
        if r < w:
            return j
        r -= w
    return max(j for j, w in enumerate(weights) if w > 0.0)


def dirichlet_noise(
    prior: Sequence[float], alpha: float, fraction: float, rng: random.Random
) -> list[float]:
    """``(1 - fraction)·prior + fraction·Dir(alpha)`` (AlphaZero root noise, Silver et al. 2017),
    drawn with ``rng.gammavariate`` so the search's own stream stays the only source."""
    draws = [rng.gammavariate(alpha, 1.0) for _ in prior]
    total = sum(draws)
    if total <= 0.0:  # every draw underflowed (tiny alpha): put the noise on one candidate
        draws = [0.0] * len(prior)
        draws[int(rng.random() * len(prior))] = 1.0
        total = 1.0
    return [(1.0 - fraction) * p + fraction * d / total for p, d in zip(prior, draws, strict=True)]
