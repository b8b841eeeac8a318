"""Helpers shared by the fast-path tests (``test_search_fast.py``,
``test_mexican_train_fast_search.py``), imported as a plain module (``tests/unit`` is on
``sys.path`` under pytest's default import mode).

:class:`ExactNet` is a deterministic "network" on a game's encoder whose every row is computed
exactly (``math.fsum``), so the Python evaluator and the compiled batches agree to the last bit
whatever the batch; :func:`same_result` asserts two searches found the same thing;
:func:`check_rollout_search`, :func:`check_network_leaf` and :func:`check_batched_alone` hold a
game's compiled search to its Python search (the built-in games' and a user's alike).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from omega_cluster.games.api import Game, State
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search.evaluators import (
    BlendEvaluator,
    FunctionEvaluator,
    Leaf,
    LeafEvaluation,
    RolloutEvaluator,
)
from omega_cluster.search.fast import SplitMixRandom
from omega_cluster.search.fast.driver import FastResults, run_batched
from omega_cluster.search.fast.game import FastLeaf, LeafPlan, fast_path
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig
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


# -- the compiled search against the Python search, for any game with kernels --------------------
# (test_search_fast.py: the built-in games; test_user_game_kernels.py: a user's game)
FAST_ROLLOUT = RolloutEvaluator(RandomPlayer())
PYTHON_ROLLOUT = RolloutEvaluator(RandomPlayer(), use_fast_playout=False)
ROLLOUT_CASES = [("uct", 1), ("uct", 300), ("puct", 200)]  # check_rollout_search's (selection,
# simulations)
NETWORK_LEAF_CASES = [("puct", 0.0, "network"), ("puct", 0.25, "network"), ("uct", 0.0, "network"),
                      ("puct", 0.0, "network+random_rollout")]  # fmt: skip
# check_network_leaf's (selection, dirichlet, leaf)


def batched(game: Game, net: ExactNet, states: Sequence[State], seeds: Sequence[int],
            config: ISMCTSConfig, leaf: FastLeaf) -> FastResults:  # fmt: skip
    """``run_batched`` on ``states`` (their acting players) with ``net``'s forward and the game's
    compiled encoder standing in for ``net.encoder``."""
    fast, why = fast_path(game, config, leaf, encoder=net.encoder)
    assert fast is not None, why
    roots = np.stack([fast.pack(s) for s in states])
    players = np.array([s.current_players[0] for s in states])
    budgets = np.full(len(states), config.simulations)
    return run_batched(fast, roots, players, budgets, np.array(seeds, np.uint64), config, leaf,
                       net.forward)  # fmt: skip


def check_rollout_search(game: Game, states: Sequence[State], selection: str,
                         simulations: int) -> None:  # fmt: skip
    """The compiled random-rollout search equals the Python one from one stream at ``states``
    (three seeds each), and hands the stream back where it stopped."""
    config = ISMCTSConfig(simulations=simulations, selection=selection, c_uct=2.0)
    fast, python = ISMCTS(game, FAST_ROLLOUT, config), ISMCTS(game, PYTHON_ROLLOUT, config)
    assert fast.fast is not None and python.fast is None
    for state in states:
        player = state.current_players[0]
        for seed in range(3):
            a, b = SplitMixRandom(seed), SplitMixRandom(seed)
            same_result(fast.search(state, player, a), python.search(state, player, b))
            assert a.state == b.state  # the fast path hands the stream back where it stopped


def check_network_leaf(game: Game, net: ExactNet, states: Sequence[State], selection: str,
                       dirichlet: float, leaf: str) -> None:  # fmt: skip
    """The compiled network leaf (``leaf``: ``network`` or ``network+random_rollout``, weight
    0.75) equals the Python search with ``net`` as its evaluator (two seeds a state)."""
    config = ISMCTSConfig(simulations=120, selection=selection, dirichlet_fraction=dirichlet)
    fast_leaf = FastLeaf(leaf, network_value_weight=0.75)
    evaluator: Any = FunctionEvaluator(net.evaluate)
    if fast_leaf.rollout is not None:
        evaluator = BlendEvaluator(evaluator, PYTHON_ROLLOUT, weight_a=0.75, weight_b=0.25)
    python = ISMCTS(game, evaluator, config)
    for state in states:
        player = state.current_players[0]
        for seed in range(2):
            expected = python.search(state, player, SplitMixRandom(seed))
            got = batched(game, net, [state], [seed], config, fast_leaf)
            assert tuple(got.visits[0, : got.n_legal[0]]) == expected.visits
            assert tuple(got.legal[0, : got.n_legal[0]]) == expected.legal
            assert tuple(got.root_value[0]) == pytest.approx(expected.root_value, abs=1e-12)
            means = got.means[0, : got.n_legal[0]]
            assert tuple(means) == pytest.approx(expected.action_values, abs=1e-12, nan_ok=True)
            assert got.leaves[0] == expected.diagnostics.leaf_evaluations == got.rows
            assert got.tree_nodes[0] == expected.diagnostics.tree_nodes


def check_batched_alone(game: Game, net: ExactNet, states: Sequence[State]) -> None:
    """K network-leaf searches batched (``states`` twice) equal each run alone; one forward
    pass per batch, every root in the first."""
    config = ISMCTSConfig(simulations=60, selection="puct", dirichlet_fraction=0.25)
    leaf = FastLeaf("network")
    states = list(states) * 2
    seeds = list(range(len(states)))
    together = batched(game, net, states, seeds, config, leaf)
    assert together.forward_calls == len(net.calls)  # one call per batch
    assert net.calls[0] == len(states)  # every search's root in the first batch
    assert max(net.calls) <= len(states) and sum(net.calls) == together.rows
    assert together.rows == together.leaves.sum()
    for k, (state, seed) in enumerate(zip(states, seeds, strict=True)):
        alone = batched(game, net, [state], [seed], config, leaf)
        for field in ("visits", "means", "root_value", "prior", "leaves", "histogram"):
            a, b = getattr(together, field)[k], getattr(alone, field)[0]
            assert np.array_equal(a, b, equal_nan=True), field
        assert together.rng_states[k] == alone.rng_states[0]
