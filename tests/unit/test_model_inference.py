"""NetworkEvaluator (batching, cache, absolute seat order, priors) and NetworkPlayer."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch
from model_helpers import leduc, small_net

from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    NetworkEvaluator,
    NetworkPlayer,
    encode_batch,
    encoder_for,
    random_positions,
    save_checkpoint,
)
from omega_cluster.players.registry import make_player
from omega_cluster.search.evaluators import Leaf, check_evaluations


def _leaves(game, positions, seed: int = 0) -> list[Leaf]:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    return [Leaf(s, p, tuple(s.legal_actions(p)), rng) for s, p in positions]


def test_values_come_back_in_absolute_seat_order() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    encoder = encoder_for(game)
    net = small_net(game, encoder, value_range=None)
    with torch.no_grad():  # values = bias: relative seat k is worth 10 + k
        last = net.value_head[-1]
        last.weight.zero_()
        last.bias.copy_(torch.arange(8, dtype=torch.float32) + 10)
    evaluator = NetworkEvaluator(net, encoder)
    positions = random_positions(game, 12, seed=5)
    leaves = _leaves(game, positions)
    answers = evaluator.evaluate(leaves)
    check_evaluations(leaves, answers, 3)
    for leaf, answer in zip(leaves, answers, strict=True):
        assert answer.values == pytest.approx([10 + (q - leaf.player) % 3 for q in range(3)])
    assert {leaf.player for leaf in leaves} == {0, 1, 2}


def test_priors_match_a_direct_forward_and_batching_changes_nothing() -> None:
    game, encoder = leduc()
    net = small_net(game, encoder)
    positions = random_positions(game, 40, seed=1)
    leaves = _leaves(game, positions)
    batched = NetworkEvaluator(net, encoder, cache_size=0, max_batch=16)
    answers = batched.evaluate(leaves)
    stats = batched.stats  # Leduc repeats information sets: each distinct one is encoded once
    assert stats.positions + stats.duplicates == 40 and stats.duplicates > 0
    assert stats.forward_calls == -(-stats.positions // 16)  # in batches of at most 16
    single = NetworkEvaluator(net, encoder, cache_size=0)
    one_by_one = [single.evaluate([leaf])[0] for leaf in leaves]
    obs, feats, mask = encode_batch(encoder, positions)
    with torch.no_grad():
        out = net(obs, feats, mask)
    probs = torch.softmax(out.logits.double(), -1).numpy()
    for i, (a, b) in enumerate(zip(answers, one_by_one, strict=True)):
        assert a.prior is not None and b.prior is not None
        assert np.allclose(a.prior, b.prior, atol=1e-6) and np.allclose(
            a.values, b.values, atol=1e-5
        )
        assert np.allclose(a.prior, probs[i, : len(leaves[i].legal)], atol=1e-6)
        assert sum(a.prior) == pytest.approx(1.0)
    assert len({a.prior for a in answers}) > 3  # the network is not constant


def test_cache_hits_by_information_set_and_duplicates() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    evaluator = NetworkEvaluator(small_net(game, encoder), encoder, cache_size=1000)
    positions = random_positions(game, 10, seed=3)
    first = evaluator.evaluate(_leaves(game, positions))
    assert evaluator.stats.positions == 10 and evaluator.stats.cache_hits == 0
    # determinizations of the same information sets: all cache hits, same answers
    rng = random.Random(4)
    worlds = [(s.sample_world(p, rng), p) for s, p in positions]
    again = evaluator.evaluate(_leaves(game, worlds))
    assert again == first
    assert evaluator.stats.cache_hits == 10 and evaluator.stats.positions == 10
    # duplicates inside one batch are encoded once
    evaluator.clear_cache()
    evaluator.evaluate(_leaves(game, positions[:3] * 3))
    assert evaluator.stats.duplicates == 6 and evaluator.stats.positions == 13
    assert evaluator.stats.hit_rate == pytest.approx(16 / 29)
    # LRU bound
    small = NetworkEvaluator(evaluator.model, encoder, cache_size=4)
    small.evaluate(_leaves(game, positions))
    assert len(small._cache) == 4
    # new weights clear the cache
    evaluator.evaluate(_leaves(game, positions[:2]))
    evaluator.load_state_dict(small_net(game, encoder, seed=9).state_dict())
    assert len(evaluator._cache) == 0


def test_terminal_leaves_get_the_returns() -> None:
    game, encoder = leduc()
    state = game.new_initial_state()
    for action in (0, 3, 2, 0):  # deal, deal, raise, fold
        state.apply_action(action)
    assert state.is_terminal()
    evaluator = NetworkEvaluator(small_net(game, encoder), encoder)
    (answer,) = evaluator.evaluate([Leaf(state, -1, (), random.Random(0))])
    assert answer.values == state.returns() and answer.prior is None
    assert evaluator.stats.forward_calls == 0


def test_evaluator_drives_ismcts() -> None:
    from omega_cluster.players.search import ISMCTSPlayer

    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    evaluator = NetworkEvaluator(small_net(game, encoder), encoder)
    player = ISMCTSPlayer(game, leaf=evaluator, simulations=24)
    state = game.new_initial_state(1)
    rng = random.Random(0)
    for _ in range(6):
        if state.is_terminal():
            break
        p = state.current_players[0]
        action = player.act(state, p, rng)
        assert action in state.legal_actions(p)
        state.apply_action(action)
    assert evaluator.stats.positions > 0


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("mexican_train", {"players": 3, "rounds": 1}),
        ("goofspiel", {"num_cards": 4}),
        ("kuhn_poker", {}),
    ],
)
def test_network_player_is_legal_and_reproducible(name: str, params: dict[str, object]) -> None:
    game = make_game(name, **params)
    encoder = encoder_for(game)
    net = small_net(game, encoder)
    for greedy in (True, False):
        player = NetworkPlayer(game, net, encoder, greedy=greedy, temperature=0.7)
        picks = []
        for state, p in random_positions(game, 25, seed=8):
            action = player.act(state, p, random.Random(len(state.history)))
            assert action in state.legal_actions(p)
            assert player.act(state, p, random.Random(len(state.history))) == action
            picks.append(action)
        legal, probs = player.policy(*random_positions(game, 1, seed=8)[0])
        assert len(legal) == len(probs) and probs.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="temperature"):
        NetworkPlayer(game, net, encoder, temperature=0.0)


def test_network_player_spec_from_a_checkpoint(tmp_path: Path) -> None:
    game, encoder = leduc()
    net = small_net(game, encoder)
    save_checkpoint(tmp_path / "v1", net, game=game, encoder=encoder, version=1)
    player = make_player(f"network:{tmp_path / 'v1'}:false:0.5", game)
    assert isinstance(player, NetworkPlayer) and not player.greedy and player.temperature == 0.5
    state, p = random_positions(game, 1, seed=2)[0]
    assert player.act(state, p, random.Random(0)) in state.legal_actions(p)
