"""The policy/value network: shapes, masking, action conditioning, a learning step, trunks,
config validation and device selection."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from model_helpers import leduc, small_net

from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    ModelConfig,
    ModelConfigError,
    PolicyValueNet,
    encode_batch,
    encoder_for,
    pad_batch,
    random_positions,
    select_device,
)


def _batch(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    obs = torch.randn(5, 20, generator=g)
    feats = torch.randn(5, 7, 4, generator=g)
    mask = torch.ones(5, 7, dtype=torch.bool)
    mask[1, 3:] = False
    mask[4, 1:] = False
    return obs, feats, mask


@pytest.mark.parametrize("trunk", ["mlp", "transformer"])
def test_forward_shapes_masking_and_value_range(trunk: str) -> None:
    config = ModelConfig(
        trunk=trunk, hidden_size=32, num_heads=4, token_size=8, num_value_seats=3,
        value_range=(-2.0, 2.0),
    )  # fmt: skip
    net = PolicyValueNet(config, 20, 4)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0, 0.2)
    obs, feats, mask = _batch()
    out = net(obs, feats, mask)
    assert out.logits.shape == (5, 7) and out.values.shape == (5, 3) and out.aux == {}
    assert torch.isinf(out.logits[~mask]).all() and (out.logits[~mask] < 0).all()
    assert torch.isfinite(out.logits[mask]).all()
    probs = torch.softmax(out.logits, -1)
    assert torch.allclose(probs.sum(-1), torch.ones(5)) and probs[4, 0] == 1.0
    assert (out.values >= -2).all() and (out.values <= 2).all()
    assert out.values.std() > 0.01  # not constant


def test_fresh_network_is_neutral() -> None:
    net = PolicyValueNet(ModelConfig(num_value_seats=2, value_range=(0.0, 1.0)), 20, 4)
    out = net(*_batch())
    probs = torch.softmax(out.logits, -1)
    assert torch.allclose(probs[0], torch.full((7,), 1 / 7))  # uniform prior
    assert torch.allclose(out.values, torch.full((5, 2), 0.5))  # middle of the range


def test_action_conditioned_equivariance_and_padding() -> None:
    """Permuting the legal actions permutes the logits; extra padding changes nothing."""
    net = PolicyValueNet(ModelConfig(hidden_size=32, num_value_seats=2), 20, 4)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0, 0.5)
    obs, feats, mask = _batch()
    base = net(obs, feats, mask).logits
    perm = torch.tensor([3, 0, 6, 5, 1, 2, 4])
    permuted = net(obs, feats[:, perm], torch.ones(5, 7, dtype=torch.bool)).logits
    full = net(obs, feats, torch.ones(5, 7, dtype=torch.bool)).logits
    assert torch.allclose(permuted, full[:, perm], atol=1e-5)
    padded = net(
        obs,
        torch.cat((feats, torch.zeros(5, 3, 4)), 1),
        torch.cat((mask, torch.zeros(5, 3, dtype=torch.bool)), 1),
    ).logits
    assert torch.allclose(padded[:, :7][mask], base[mask], atol=1e-5)


@pytest.mark.parametrize("trunk", ["mlp", "transformer"])
def test_one_gradient_step_decreases_the_loss(trunk: str) -> None:
    game, encoder = leduc()
    net = small_net(game, encoder, randomize=False, trunk=trunk, token_size=8)
    net.train()
    obs, feats, mask = encode_batch(encoder, random_positions(game, 16, seed=4))
    target_policy = torch.softmax(torch.randn(mask.shape).masked_fill(~mask, -1e9), -1)
    target_values = torch.rand(16, 2) * 4 - 2

    def loss() -> torch.Tensor:
        out = net(obs, feats, mask)
        logp = torch.log_softmax(out.logits, -1).masked_fill(~mask, 0.0)
        return -(target_policy * logp).sum(-1).mean() + ((out.values - target_values) ** 2).mean()

    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    before = loss()
    before.backward()
    optimizer.step()
    with torch.no_grad():
        after = loss()
    assert after.item() < before.item() - 1e-3


def test_aux_heads_from_the_encoder() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    config = ModelConfig.for_encoder(encoder, game, aux=True, hidden_size=32)
    assert config.num_value_seats == 8 and config.value_range == (0.0, 1.0)
    assert [h.name for h in config.aux_heads] == ["round_pips", "goes_out"]
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    out = net(*encode_batch(encoder, random_positions(game, 3)))
    assert out.aux["round_pips"].shape == (3, 8) and out.aux["goes_out"].shape == (3, 9)


def test_config_validation_and_json_round_trip() -> None:
    config = ModelConfig.for_encoder(leduc()[1], leduc()[0], aux=False, trunk="transformer")
    assert ModelConfig.from_json(config.to_json()) == config
    for bad, match in [
        ({"trunk": "cnn"}, "trunk='cnn' is not allowed"),
        ({"hidden_size": 0}, "hidden_size=0 must be an int >= 1"),
        ({"trunk": "transformer", "hidden_size": 30, "num_heads": 4}, "multiple of num_heads=4"),
        ({"value_range": (1.0, 0.0)}, "value_range"),
        ({"dropout": 1.5}, r"dropout=1.5 must be a finite number in \[0, 1\)"),
        ({"trunk": "transformer", "num_layers": 0}, "num_layers=0 must be an int >= 1"),
    ]:
        with pytest.raises(ModelConfigError, match=match):
            ModelConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(ModelConfigError, match="unknown model config field"):
        ModelConfig.from_json({"hiden_size": 3})


def test_pad_batch_and_select_device() -> None:
    obs, feats, mask = pad_batch(
        [np.ones(3, np.float32), np.zeros(3, np.float32)],
        [np.ones((2, 4), np.float32), np.ones((1, 4), np.float32)],
    )
    assert obs.shape == (2, 3) and feats.shape == (2, 2, 4)
    assert mask.tolist() == [[True, True], [True, False]] and feats[1, 1].sum() == 0
    assert select_device("cpu") == torch.device("cpu")
    assert select_device("auto").type in ("cpu", "cuda", "mps")
    with pytest.raises(ValueError, match="not allowed; allowed: auto, cpu"):
        select_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            select_device("cuda")
