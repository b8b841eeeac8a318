"""Moves from a prior: a rule-based teacher's labels as a one-hot prior, and a draw from a prior
at a temperature (self-play's mode ``"network"``, :mod:`.selfplay`)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from omega_cluster.games.player import Player
from omega_cluster.search.evaluators import Leaf, LeafEvaluation

__all__ = ["TeacherEvaluator", "sample_index"]


class TeacherEvaluator:
    """A player's move as a one-hot prior, for mode ``"network"`` with ``record_prior``: its
    games become labelled records (a warm start from a rule-based teacher such as Commander).

    Values are the neutral ``neutral_value`` for every seat (a teacher has none; with
    ``record_prior`` self-play does not record them). The player draws from the leaf's rng."""

    def __init__(self, player: Player, num_players: int, *, neutral_value: float = 0.0) -> None:
        self.player = player
        self._values = (float(neutral_value),) * num_players

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        out = []
        for leaf in leaves:
            action = self.player.act(leaf.state, leaf.player, leaf.rng)
            prior = [0.0] * len(leaf.legal)
            prior[leaf.legal.index(action)] = 1.0
            out.append(LeafEvaluation(self._values, tuple(prior)))
        return out

    def __repr__(self) -> str:
        return f"TeacherEvaluator({getattr(self.player, 'name', self.player)!r})"


def sample_index(prior: np.ndarray, temperature: float, rng: random.Random) -> int:
    """Index drawn from ``prior^(1/T)`` (T = 0: the argmax, first among ties)."""
    if temperature == 0.0:
        return int(np.argmax(prior))
    weights = prior ** (1.0 / temperature) if temperature != 1.0 else prior
    total = float(weights.sum())
    if not total > 0:
        return int(np.argmax(prior))
    r = rng.random() * total
    for i, w in enumerate(weights):
        r -= float(w)
        if r < 0.0:
            return i
    return int(np.flatnonzero(weights > 0)[-1])
