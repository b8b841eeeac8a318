"""The forward pass on numpy batches: torch and ONNX Runtime agree, and both take new weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encode_batch, encoder_for
from omega_cluster.model import runtime as runtime_module
from omega_cluster.model.export import ExportError, random_positions
from omega_cluster.model.runtime import (
    OrtForward,
    RuntimeUnavailable,
    TorchForward,
    best_forward,
)


def _net(seed: int) -> PolicyValueNet:
    """The default ModelConfig for Mexican Train 2p, every weight moved off its initial value
    (the zero-initialised output layers would make every value 0)."""
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    torch.manual_seed(seed)
    config = ModelConfig.for_encoder(encoder, game)
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.02)
    return net.eval()


def _random_batch(
    net: PolicyValueNet, batch: int, actions: int, seed: int
) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    # in the encoders' range (indicators and fractions in [0, 1]): outputs of order 1
    obs = rng.random((batch, net.observation_size), np.float32)
    feats = rng.random((batch, actions, net.action_feature_size), np.float32)
    mask = rng.random((batch, actions)) < 0.6
    mask[:, 0] = True  # every row has a legal action
    return obs, feats, mask


def _priors(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _assert_close(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> None:
    """Priors and values within 1e-5; logits (of order 10) within 1e-5 of their size."""
    for x, y in zip(a, b, strict=True):
        assert x.shape == y.shape and x.dtype == y.dtype == np.float32
    (logits, values), (want_logits, want_values) = a, b
    finite = np.isfinite(want_logits)
    assert np.array_equal(finite, np.isfinite(logits))  # -inf at the same (masked) places
    scale = np.maximum(1.0, np.abs(want_logits[finite]))
    assert (np.abs(logits[finite] - want_logits[finite]) <= 1e-5 * scale).all()
    assert np.abs(_priors(logits) - _priors(want_logits)).max() <= 1e-5
    assert np.abs(values - want_values).max() <= 1e-5


@pytest.mark.parametrize(("batch", "actions"), [(1, 1), (7, 5), (64, 12), (300, 3)])
def test_torch_and_onnx_runtime_give_the_same_outputs(batch: int, actions: int) -> None:
    net = _net(0)
    inputs = _random_batch(net, batch, actions, seed=batch)
    torch_out = TorchForward(net)(*inputs)
    ort_out = OrtForward(net)(*inputs)
    _assert_close(ort_out, torch_out)
    logits, values = torch_out
    assert logits.shape == (batch, actions) and values.shape == (batch, net.config.num_value_seats)
    assert np.isneginf(logits[~inputs[2]]).all() and np.isfinite(logits[inputs[2]]).all()


def test_they_agree_on_encoded_positions_too() -> None:
    net = _net(1)
    game = make_game("mexican_train", players=2, rounds=1)
    obs, feats, mask = (
        t.numpy() for t in encode_batch(encoder_for(game), random_positions(game, 40, seed=3))
    )
    _assert_close(OrtForward(net)(obs, feats, mask), TorchForward(net)(obs, feats, mask))


def test_a_new_champions_weights_reach_both_runtimes() -> None:
    """OrtForward re-exports on new weights: it then answers as the new network does."""
    old, new = _net(2), _net(3)
    inputs = _random_batch(old, 16, 6, seed=4)
    ort, plain = OrtForward(_net(2)), TorchForward(_net(2))
    before = ort(*inputs)
    state = new.state_dict()
    ort.load_state_dict(state)
    plain.load_state_dict(state)
    want = TorchForward(new)(*inputs)
    _assert_close(ort(*inputs), want)
    _assert_close(plain(*inputs), want)
    assert np.abs(before[1] - want[1]).max() > 1e-3  # the weights did change the answer


def test_onnx_runtime_runs_the_process_torch_threads() -> None:
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        options = OrtForward(_net(0))._session.get_session_options()
        assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)
    finally:
        torch.set_num_threads(before)


def test_best_forward_is_onnx_runtime_on_cpu_and_torch_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(best_forward(_net(0)), OrtForward)
    monkeypatch.setattr(runtime_module, "onnxruntime_available", lambda: False)
    assert isinstance(best_forward(_net(0)), TorchForward)
    with pytest.raises(RuntimeUnavailable, match=r"OrtForward needs onnxruntime, which is not"):
        OrtForward(_net(0))


def test_a_network_that_does_not_export_runs_in_torch_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def fail(model: PolicyValueNet, path: object) -> None:
        raise ExportError(f"ONNX export to {path} failed: RuntimeError: no exporter")

    monkeypatch.setattr(runtime_module, "export_onnx", fail)
    with pytest.warns(
        RuntimeWarning, match=r"failed: RuntimeError: no exporter; the forward pass runs in torch"
    ):
        forward = best_forward(_net(0))
    assert isinstance(forward, TorchForward)
