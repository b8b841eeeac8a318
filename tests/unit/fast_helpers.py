"""Helpers shared by the fast-path tests (``test_search_fast.py``,
``test_mexican_train_fast_search.py``), imported as a plain module (``tests/unit`` is on
``sys.path`` under pytest's default import mode).

:class:`ExactNet` is a deterministic "network" on a game's encoder whose every row is computed
exactly (``math.fsum``), so the Python evaluator and the compiled batches agree to the last bit
whatever the batch; :func:`same_result` asserts two searches found the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from omega_cluster.games.api import Game
from omega_cluster.search.evaluators import Leaf, LeafEvaluation
from omega_cluster.search.fast.game import FastLeaf, LeafPlan
from omega_cluster.search.result import SearchResult


class ExactNet:
    """Priors from the action features, values from the observation; the Python evaluator
    reads the encoder (:meth:`evaluate`), :meth:`forward` the compiled rows; ``calls`` holds the
    batch size of every forward pass. As an evaluator it is the network leaf (``fast_leaf``)."""

    def __init__(self, game: Game, encoder: Any, *, scale: float = 1.0) -> None:
        self.game, self.encoder = game, encoder
        r = np.random.default_rng(3)
        self.u = r.normal(size=encoder.observation_size) * scale
        self.w = r.normal(size=encoder.action_feature_size)
        self.calls: list[int] = []

    def one(self, obs: np.ndarray, feats: np.ndarray) -> tuple[list[float], list[float]]:
        z = math.fsum(obs.astype(np.float64) * self.u)
        logits = [math.fsum(f.astype(np.float64) * self.w) + 0.3 * z for f in feats]
        top = max(logits)
        e = [math.exp(x - top) for x in logits]
        total = math.fsum(e)
        values = [math.tanh(z + 0.7 * r) for r in range(self.game.num_players)]
        return [x / total for x in e], values  # values seat-relative (the acting seat first)

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        out, n = [], self.game.num_players
        for leaf in leaves:
            if leaf.state.is_terminal():
                out.append(LeafEvaluation(tuple(float(x) for x in leaf.state.returns())))
                continue
            prior, rel = self.one(
                self.encoder.encode_observation(leaf.state, leaf.player),
                self.encoder.encode_actions(leaf.state, leaf.player, leaf.legal),
            )
            values = [0.0] * n
            for r in range(n):
                values[(leaf.player + r) % n] = rel[r]
            out.append(LeafEvaluation(tuple(values), tuple(prior)))
        return out

    def forward(self, obs: np.ndarray, feats: np.ndarray, mask: np.ndarray) -> tuple[Any, Any]:
        self.calls.append(obs.shape[0])
        priors = np.zeros(mask.shape)
        values = np.zeros((obs.shape[0], self.game.num_players))
        for b in range(obs.shape[0]):
            k = int(mask[b].sum())
            priors[b, :k], values[b] = self.one(obs[b], feats[b, :k])
        return priors, values

    def fast_leaf(self) -> tuple[LeafPlan, str]:
        return LeafPlan(FastLeaf("network"), self.forward, self.encoder), ""


def same_result(a: SearchResult, b: SearchResult) -> None:
    """The two searches chose alike, counted alike and valued alike (to 1e-12)."""
    assert (a.legal, a.visits, a.action, a.policy) == (b.legal, b.visits, b.action, b.policy)
    assert a.root_value == pytest.approx(b.root_value, abs=1e-12)
    assert a.action_values == pytest.approx(b.action_values, abs=1e-12, nan_ok=True)
    da, db = a.diagnostics, b.diagnostics
    assert (da.depth_histogram, da.leaf_evaluations, da.tree_nodes, da.simulations) == (
        db.depth_histogram, db.leaf_evaluations, db.tree_nodes, db.simulations,
    )  # fmt: skip
