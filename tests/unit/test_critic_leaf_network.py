"""The critic leaf with a real network (needs the heads' ModelConfig.critic and the records'
State.hidden_state): LeafSpec("critic") builds a CriticEvaluator on ONNX Runtime, which agrees
with torch, and the compiled search builds the Python search's tree with it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fast_helpers import same_result
from test_critic_leaf import _positions

from omega_cluster.games import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.model.runtime import OrtCriticForward, TorchCriticForward
from omega_cluster.players.leaf import LeafSpec
from omega_cluster.search.fast import SplitMixRandom
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig


@pytest.mark.parametrize(
    ("name", "players"), [("mexican_train", 2), ("mexican_train", 4), ("kuhn_poker", 3)]
)
def test_a_real_critic_leaf_searches_alike_on_both_paths(name: str, players: int) -> None:
    game = make_game(name, players=players, **({"rounds": 1} if name == "mexican_train" else {}))
    enc = encoder_for(game)
    torch.manual_seed(0)
    config = ModelConfig.for_encoder(enc, game, critic=True, hidden_size=64, num_layers=1)
    net = PolicyValueNet(config, enc.observation_size, enc.action_feature_size)
    with torch.no_grad():  # off the zero-initialised output layers
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    leaf = LeafSpec("critic").build(game, net, enc)
    assert isinstance(leaf.runtime, OrtCriticForward)
    states = _positions(game, 4, seed=1)
    acting = [s.current_players[0] for s in states]
    rows = [
        enc.encode_actions(s, p, s.legal_actions()) for s, p in zip(states, acting, strict=True)
    ]
    feats = np.zeros((len(states), max(map(len, rows)), enc.action_feature_size), np.float32)
    mask = np.zeros(feats.shape[:2], np.bool_)
    for i, f in enumerate(rows):
        feats[i, : len(f)], mask[i, : len(f)] = f, True
    obs = np.stack([enc.encode_observation(s, p) for s, p in zip(states, acting, strict=True)])
    hidden = np.stack([s.hidden_state(p) for s, p in zip(states, acting, strict=True)]).astype(
        np.float32
    )
    got, want = (
        leaf.runtime(obs, feats, mask, hidden),
        TorchCriticForward(net)(obs, feats, mask, hidden),
    )
    assert np.allclose(got[1], want[1], atol=1e-5)
    assert np.allclose(got[0][mask], want[0][mask], atol=1e-4)
    search = ISMCTSConfig(simulations=32, selection="puct")
    fast, python = ISMCTS(game, leaf, search), ISMCTS(game, leaf, search, fast=False)
    assert fast.fast is not None, fast.fast_reason
    for state in _positions(game, 2, seed=5):
        player = state.current_players[0]
        leaf.clear_cache()
        a = fast.search(state, player, SplitMixRandom(3))
        leaf.clear_cache()
        same_result(a, python.search(state, player, SplitMixRandom(3)))
