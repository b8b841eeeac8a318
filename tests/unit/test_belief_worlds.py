"""Belief-guided determinizations of Mexican Train (``BeliefDeal`` through ``sample_world``): no
world contradicts a public fact whatever the belief says, a uniform belief deals as the uniform
deal does, a belief moves the tiles it favours, and the search players' ``belief=`` option asks
the belief once per decision."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from omega_cluster.games import make_game
from omega_cluster.games.api import ConstraintError, Game, State
from omega_cluster.games.mexican_train import DealConstraints, MexicanTrainState
from omega_cluster.games.mexican_train.belief_worlds import (
    BeliefDeal,
    belief_constraints,
    hidden_codes,
)
from omega_cluster.games.mexican_train.inference import deal_constraints
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.players import make_player
from omega_cluster.players.belief import NetworkBelief, probabilities
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.players.search import ISMCTSPlayer
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search.evaluators import Leaf, LeafEvaluation


def _positions(game: Game, count: int, seed: int) -> list[MexicanTrainState]:
    """Positions of Commander games (with some random moves), one decision each, at random plies."""
    commander = Commander(game)
    rng = random.Random(seed)
    out: list[MexicanTrainState] = []
    while len(out) < count:
        state = game.new_initial_state(rng.randrange(1 << 30))
        stop = rng.randrange(4, 80)
        for _ in range(stop):
            if state.is_terminal():
                break
            p = state.current_players[0]
            legal = state.legal_actions()
            state.apply_action(
                commander.act(state, p, rng) if rng.random() < 0.8 else rng.choice(legal)
            )
        if not state.is_terminal():
            out.append(state)  # type: ignore[arg-type]
    return out


def _adversarial(
    state: MexicanTrainState, player: int, kind: int, rng: np.random.Generator
) -> np.ndarray:
    """A belief array: random, all mass on impossible holders, on code 0, or all zeros."""
    n, tiles = state.game.num_players, state.game.tiles.num_tiles
    classes = 9
    if kind == 0:
        return rng.random((tiles, classes)) ** 4
    w = np.zeros((tiles, classes))
    if (
        kind == 1
    ):  # each tile's mass on a seat that provably lacks it, else on a seat the table lacks
        facts = deal_constraints(state, player)
        for t in range(tiles):
            banned = [q for q in range(n) if q != player and facts and facts.forbidden[q] >> t & 1]
            w[t, 1 + (banned[0] - player) % n if banned else min(classes - 1, n + 1)] = 1.0
    elif kind == 2:
        w[:, 0] = 1.0
    return w


def _check_world(state: MexicanTrainState, world: MexicanTrainState, player: int) -> None:
    """Every public fact of ``state`` holds in ``world``."""
    n = state.game.num_players
    assert world.information_set_key(player) == state.information_set_key(player)
    assert world.observation(player) == state.observation(player)
    assert [h.bit_count() for h in world.hands] == [h.bit_count() for h in state.hands]
    assert len(world.boneyard) == len(state.boneyard)

    def unseen(s: MexicanTrainState) -> int:
        others = sum(s.hands[q] for q in range(n) if q != player)
        return others | sum(1 << t for t in s.boneyard)

    assert unseen(world) == unseen(state)
    facts = deal_constraints(state, player)
    assert facts is not None
    for q in range(n):
        assert not world.hands[q] & facts.forbidden[q]
        for mask, at_most in facts.limits[q] if facts.limits else ():
            assert (world.hands[q] & mask).bit_count() <= at_most


@pytest.mark.parametrize("players", [2, 3, 4])
def test_belief_worlds_never_contradict_a_public_fact(players: int) -> None:
    """Random and adversarial beliefs over ~100 positions per table: the world's information set,
    hand sizes, boneyard size, unseen tiles, bans and limits are the state's."""
    game = make_game("mexican_train", players=players, rounds=1)
    rng = np.random.default_rng(players)
    limited = 0
    for i, state in enumerate(_positions(game, 100, seed=players)):
        player = state.current_players[0]
        kind = i % 4
        weights = _adversarial(state, player, kind, rng)
        deal = belief_constraints(lambda s, p, w=weights: w)(state, player)
        limited += bool(deal.facts and deal.facts.limits)
        for k in range(3):
            world = state.sample_world(player, random.Random(i * 7 + k), deal)
            _check_world(state, world, player)
    assert limited > 3  # the limits were exercised, not only the bans


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    players=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    holders=st.lists(st.integers(0, 8), min_size=91, max_size=91),
)
def test_beliefs_that_name_one_holder_per_tile_keep_the_public_facts(
    players: int, seed: int, holders: list[int]
) -> None:
    """Hypothesis picks the position and, per tile, the one code the belief puts all its mass
    on (often a holder the tile cannot have, a seat the table lacks, or code 0)."""
    game = make_game("mexican_train", players=players, rounds=1)
    state = _positions(game, 1, seed)[0]
    player = state.current_players[0]
    weights = np.zeros((91, 9))
    weights[np.arange(91), holders] = 1.0
    deal = belief_constraints(lambda s, p: weights)(state, player)
    _check_world(state, state.sample_world(player, random.Random(seed), deal), player)


def _frequencies(
    state: MexicanTrainState, player: int, constraints: Any, worlds: int, seed: int
) -> np.ndarray:
    """Share of ``worlds`` sampled worlds in which each tile lies at each location code."""
    counts = np.zeros((state.game.tiles.num_tiles, 9))
    rng = random.Random(seed)
    for _ in range(worlds):
        codes = hidden_codes(state.sample_world(player, rng, constraints), player)
        counts[np.arange(len(codes)), codes] += 1
    return counts / worlds


def _constrained_position(players: int) -> tuple[MexicanTrainState, int, DealConstraints]:
    """A position whose deductions ban tiles from some seat."""
    game = make_game("mexican_train", players=players, rounds=1)
    for state in _positions(game, 200, seed=11):
        player = state.current_players[0]
        facts = deal_constraints(state, player)
        if facts is not None and sum(f.bit_count() for f in facts.forbidden) > 8:
            return state, player, facts
    raise AssertionError("no position with deductions")


@pytest.mark.parametrize("players", [2, 4])
def test_a_uniform_belief_deals_as_the_uniform_deal(players: int) -> None:
    """Uniform over the allowed holders, or proportional to the places left: each tile's holder
    frequencies over 1,500 worlds match the hard-constraints deal's (fixed seeds, wide margin)."""
    state, player, facts = _constrained_position(players)
    n, tiles = players, state.game.tiles.num_tiles
    today = _frequencies(state, player, facts, 1500, seed=1)
    allowed = np.zeros((tiles, 9))
    allowed[:, 1] = 1.0
    for q in range(n):
        if q != player:
            allowed[:, 1 + (q - player) % n] = [
                0.0 if facts.forbidden[q] >> t & 1 else 1.0 for t in range(tiles)
            ]
    places = np.zeros((tiles, 9))
    places[:, 1] = len(state.boneyard)
    for q in range(n):
        if q != player:
            places[:, 1 + (q - player) % n] = state.hands[q].bit_count()
    for weights in (allowed / allowed.sum(axis=1, keepdims=True), places):
        belief = _frequencies(state, player, BeliefDeal(weights, player, facts), 1500, seed=2)
        assert np.abs(belief - today).max() < 0.07
    assert today[:, 2:].max() > 0.1  # the hands are really dealt to


def test_a_belief_moves_the_tiles_it_favours() -> None:
    """Odds of 50 on a few allowed tiles for the next seat's hand put them there far more often."""
    state, player, facts = _constrained_position(2)
    opp = 1 - player
    codes = hidden_codes(state, player)
    candidates = [
        t for t in range(len(codes)) if codes[t] >= 1 and not facts.forbidden[opp] >> t & 1
    ][:3]
    weights = np.full((len(codes), 9), 0.5)
    weights[candidates, 1], weights[candidates, 2] = 0.02, 0.98
    uniform = _frequencies(state, player, facts, 600, seed=3)
    guided = _frequencies(state, player, BeliefDeal(weights, player, facts), 600, seed=3)
    for t in candidates:
        assert guided[t, 2] > uniform[t, 2] + 0.2


def test_bad_beliefs_get_one_clear_error() -> None:
    state, player, _ = _constrained_position(2)
    with pytest.raises(ConstraintError, match=r"array \[91 tiles, >= 3 location codes\]"):
        belief_constraints(lambda s, p: np.ones((10, 9)))(state, player)
    with pytest.raises(ConstraintError, match="finite and >= 0"):
        belief_constraints(lambda s, p: -np.ones((91, 9)))(state, player)
    deal = belief_constraints(lambda s, p: np.ones((91, 9)))(state, player)
    with pytest.raises(ConstraintError, match="cannot deal player"):
        state.sample_world(1 - player, random.Random(0), deal)


class _Belief:
    """A stand-in belief source: counts its calls and says 'the boneyard' for every tile."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, state: State, player: int) -> np.ndarray:
        self.calls += 1
        w = np.zeros((state.game.tiles.num_tiles, 9))  # type: ignore[attr-defined]
        w[:, 1] = 1.0
        return w


def test_search_players_ask_the_belief_once_per_decision() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    belief = _Belief()
    player = ISMCTSPlayer(game, leaf="random", simulations=30, belief=belief)
    state = _positions(game, 1, seed=5)[0]
    rng = random.Random(0)
    while player.searches < 3 and not state.is_terminal():
        p = state.current_players[0]
        state.apply_action(player.act(state, p, rng))
    assert player.searches >= 1 and belief.calls == player.searches


class _Net(torch.nn.Module):
    """A stand-in network with a belief head: logits favouring code 2 for every tile."""

    def __init__(self, head: bool = True) -> None:
        super().__init__()
        self.config = SimpleNamespace(belief_head=head)
        self.bias = torch.nn.Parameter(torch.tensor([0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0]))
        self.seen: list[tuple[int, ...]] = []

    def forward(self, obs: torch.Tensor, feats: torch.Tensor, mask: torch.Tensor) -> Any:
        self.seen.append(tuple(obs.shape))
        return SimpleNamespace(belief=self.bias.expand(obs.shape[0], 91, 9))


class _NetLeaf:
    """An evaluator holding a network (``model``, ``encoder``) that plays random rollouts."""

    def __init__(self, game: Game, model: torch.nn.Module) -> None:
        from omega_cluster.games.mexican_train.encoder import MexicanTrainEncoder

        self.model, self.encoder = model, MexicanTrainEncoder(game)
        self._rollout = RolloutEvaluator(make_player("random", game))

    def evaluate(self, leaves: list[Leaf]) -> list[LeafEvaluation]:
        return self._rollout.evaluate(leaves)


def test_belief_network_reads_the_networks_belief_head() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    net = _Net()
    state = _positions(game, 1, seed=6)[0]
    probs = NetworkBelief(net, _NetLeaf(game, net).encoder)(state, state.current_players[0])
    assert probs.shape == (91, 9) and np.allclose(probs.sum(axis=1), 1.0)
    assert probs[:, 0].max() == 0.0 and probs[:, 3:].max() == 0.0  # codes 1..2 exist at 2p
    assert np.allclose(probs[:, 2], 1 / (1 + np.exp(-2.0)))
    assert np.allclose(probabilities(np.zeros((2, 9)), 4)[:, 1:5], 0.25)
    player = ISMCTSPlayer(game, leaf=_NetLeaf(game, net), simulations=20, belief="network")
    player.act(state, state.current_players[0], random.Random(0))
    assert len(net.seen) == 1 and net.seen[0][0] == 1


def test_belief_option_errors_name_the_cause() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    with pytest.raises(PlayerSpecError, match="needs a network leaf"):
        make_player("ismcts:random:20:belief=network", game)
    with pytest.raises(PlayerSpecError, match=r"belief head \(model.belief_head=true\)"):
        ISMCTSPlayer(game, leaf=_NetLeaf(game, _Net(head=False)), belief="network")
    with pytest.raises(PlayerSpecError, match="give belief or world_constraints, not both"):
        ISMCTSPlayer(game, belief=_Belief(), world_constraints=lambda s, p: None)
    with pytest.raises(PlayerSpecError, match="belief must be network, none or a callable"):
        make_player("ismcts:random:20:belief=oracle", game)
    with pytest.raises(PlayerSpecError, match="draws no worlds from a belief"):
        make_player("ismcts:random:20:belief=network", make_game("leduc_poker"))
    with pytest.raises(PlayerSpecError, match="ISMCTS options"):
        make_player("smmcts:random:20:belief=network", make_game("goofspiel"))
