"""The heads that learn through the records' hidden state: the belief head (public trunk only)
and the perfect-information critic (trunk + hidden state), their losses and the critic target."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from omega_cluster.data import TrainingBatch
from omega_cluster.games.encoding import HiddenSpec
from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    ModelConfig,
    ModelConfigError,
    PolicyValueNet,
    encoder_for,
    load_checkpoint,
    save_checkpoint,
)
from omega_cluster.model.export import export_onnx, verify_onnx
from omega_cluster.train import Learner, LearnerConfig, LearnerError
from omega_cluster.train._heads import belief_rows, explained_variance
from omega_cluster.train.losses import alphazero_loss, to_tensors

LOCATIONS = HiddenSpec("locations", 6, 4, "6 cards: 0 known, 1 deck, 2-3 the other hands")
SMALL = {"hidden_size": 32, "num_layers": 1, "action_embedding_size": 8,
         "policy_hidden_size": 16, "value_hidden_size": 32}  # fmt: skip


def _net(obs: int = 10, feats: int = 5, seed: int = 0, **changes: object) -> PolicyValueNet:
    torch.manual_seed(seed)
    kwargs: dict[str, object] = {**SMALL, "num_value_seats": 3, "value_range": (0.0, 1.0),
                                 "hidden": LOCATIONS, "belief_head": True, "critic": True}  # fmt: skip
    kwargs.update(changes)
    return PolicyValueNet(ModelConfig(**kwargs), obs, feats)  # type: ignore[arg-type]


def _inputs(b: int = 4, obs: int = 10, seed: int = 0) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    mask = torch.ones(b, 3, dtype=torch.bool)
    mask[0, 2] = False
    codes = torch.randint(0, 4, (b, LOCATIONS.size), generator=g).float()
    return torch.randn(b, obs, generator=g), torch.randn(b, 3, 5, generator=g), mask, codes


def _randomize(net: PolicyValueNet) -> PolicyValueNet:
    with torch.no_grad():
        for p in net.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.3)
    return net.eval()


def test_shapes_and_what_each_head_reads() -> None:
    net = _randomize(_net())
    obs, feats, mask, codes = _inputs()
    out = net(obs, feats, mask, codes)
    assert out.belief is not None and out.belief.shape == (4, 6, 4)
    assert out.critic is not None and out.critic.shape == (4, 3)
    assert ((out.critic > 0) & (out.critic < 1)).all()  # the value head's sigmoid range
    plain = net(obs, feats, mask)
    assert plain.critic is None and plain.belief is not None
    other = net(obs, feats, mask, (codes + 1) % 4)
    for a, b in ((out.logits, other.logits), (out.values, other.values)):
        assert torch.equal(a, b)  # the public heads never read the hidden state
    assert torch.equal(out.belief, other.belief) and torch.equal(out.belief, plain.belief)
    assert not torch.allclose(out.critic, other.critic)  # the critic does
    bare = _net(belief_head=False, critic=False)
    assert bare(obs, feats, mask, codes).belief is None
    assert bare(obs, feats, mask, codes).critic is None
    vector = _randomize(_net(hidden=HiddenSpec("vector", 3), belief_head=False))
    raw = vector(obs, feats, mask, torch.randn(4, 3)).critic
    assert raw is not None and raw.shape == (4, 3)


def test_config_refuses_heads_without_the_hidden_state_they_need() -> None:
    with pytest.raises(
        ModelConfigError, match="belief_head=true .*'locations'; this one's is none"
    ):
        ModelConfig(belief_head=True)
    with pytest.raises(ModelConfigError, match="belief_head=true .*this one's is 'vector'"):
        ModelConfig(hidden=HiddenSpec("vector", 3), belief_head=True)
    with pytest.raises(ModelConfigError, match="critic=true reads the hidden state"):
        ModelConfig(critic=True)
    config = _net().config
    assert ModelConfig.from_json(config.to_json()) == config
    old = {k: v for k, v in ModelConfig().to_json().items()
           if k not in ("hidden", "belief_head", "critic")}  # fmt: skip
    assert ModelConfig.from_json(old) == ModelConfig()  # a checkpoint of before the heads


def test_forward_with_hidden_state_exports_to_onnx_and_the_plain_export_is_unchanged(
    tmp_path: Path,
) -> None:
    import onnxruntime as ort

    net = _randomize(_net())
    obs, feats, mask, codes = _inputs()

    class WithHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, o: torch.Tensor, h: torch.Tensor, f: torch.Tensor, m: torch.Tensor):
            out = self.net(o, f, m, h)
            return out.logits, out.critic

    path = tmp_path / "critic.onnx"
    axes = {
        "obs": {0: "b"},
        "hidden": {0: "b"},
        "feats": {0: "b", 1: "l"},
        "mask": {0: "b", 1: "l"},
    }
    torch.onnx.export(WithHidden().eval(), (obs, codes, feats, mask), str(path), dynamo=False,
                      input_names=list(axes), output_names=["logits", "critic"],
                      dynamic_axes=axes, opset_version=17)  # fmt: skip
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    obs2, feats2, mask2, codes2 = _inputs(b=7, seed=1)  # another batch size: no baked shapes
    feeds = {"obs": obs2.numpy(), "hidden": codes2.numpy(), "feats": feats2.numpy(),
             "mask": mask2.numpy()}  # fmt: skip
    _, critic = session.run(None, feeds)
    with torch.no_grad():
        want = net(obs2, feats2, mask2, codes2).critic
    assert want is not None
    np.testing.assert_allclose(critic, want.numpy(), atol=1e-5)
    plain = export_onnx(net, tmp_path / "plain.onnx")
    assert verify_onnx(net, plain, obs, feats, mask) < 1e-5
    names = [o.name for o in ort.InferenceSession(str(plain)).get_outputs()]
    assert names == ["logits", "values"]


def test_checkpoint_round_trip_keeps_the_heads(tmp_path: Path) -> None:
    game = make_game("kuhn_poker")
    encoder = encoder_for(game)
    torch.manual_seed(0)
    config = ModelConfig.for_encoder(encoder, game, **SMALL, hidden=HiddenSpec("locations", 3, 3),  # type: ignore[arg-type]
                                     belief_head=True, critic=True)  # fmt: skip
    net = _randomize(PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size))
    save_checkpoint(tmp_path / "ck", net, game=game, encoder=encoder)
    loaded = load_checkpoint(tmp_path / "ck", expected_game=game, expected_encoder=encoder).model
    assert loaded.config == config
    obs = torch.randn(3, encoder.observation_size)
    feats = torch.randn(3, 2, encoder.action_feature_size)
    mask = torch.ones(3, 2, dtype=torch.bool)
    hidden = torch.tensor([[0.0, 1.0, 2.0], [2.0, 0.0, 1.0], [1.0, 2.0, 0.0]])
    a, b = net(obs, feats, mask, hidden), loaded.eval()(obs, feats, mask, hidden)
    assert a.belief is not None and b.belief is not None and torch.equal(a.belief, b.belief)
    assert a.critic is not None and b.critic is not None and torch.equal(a.critic, b.critic)


# --- losses ----------------------------------------------------------------------------------


def test_belief_cross_entropy_counts_hidden_items_over_the_codes_of_the_table() -> None:
    logits = torch.zeros(2, 3, 4)
    logits[0, 0] = torch.tensor([5.0, 1.0, 0.0, 9.0])  # code 0 and code 3 are not 2p codes
    hidden = torch.tensor([[1.0, 0.0, 2.0], [3.0, 0.0, 0.0]])
    loss, items = belief_rows(logits, hidden, torch.tensor([2, 3]))
    assert items.tolist() == [2.0, 1.0]  # code 0 is not hidden from the player
    first = -torch.log_softmax(torch.tensor([1.0, 0.0]), 0)[0]  # item 0 over codes 1..2 only
    assert torch.isclose(loss[0], (first + math.log(2)) / 2)
    assert torch.isclose(loss[1], torch.tensor(math.log(3)))  # uniform over codes 1..3
    ev = explained_variance(torch.tensor([[1.0], [2.0]]), torch.tensor([[1.0], [3.0]]),
                            torch.ones(2, 1, dtype=torch.bool))  # fmt: skip
    assert torch.isclose(ev, torch.tensor(1.0 - 0.25 / 1.0))


@dataclasses.dataclass(frozen=True, eq=False)
class _HiddenBatch(TrainingBatch):
    """A TrainingBatch with the records' hidden-state columns (the data layer's own batch
    carries them once the records write them)."""

    hidden_state: np.ndarray | None = None
    has_hidden_state: np.ndarray | None = None


def _batch(obs: np.ndarray, hidden: np.ndarray, present: np.ndarray, returns: np.ndarray,
           num_players: np.ndarray) -> _HiddenBatch:  # fmt: skip
    b, n = returns.shape
    one = np.ones((b, 1), np.float32)
    return _HiddenBatch(
        observations=obs.astype(np.float32), legal_actions=np.zeros((b, 1), np.int32),
        legal_mask=np.ones((b, 1), bool), action_features=np.ones((b, 1, 1), np.float32),
        policy_targets=one, policy_weights=np.ones(b, np.float32), actions=np.zeros(b, np.int32),
        action_indices=np.zeros(b, np.int32), players=np.zeros(b, np.int32),
        num_players=num_players.astype(np.int32),
        seat_mask=np.arange(n)[None, :] < num_players[:, None], returns=returns.astype(np.float32),
        round_outcomes=np.zeros_like(returns, np.float32), has_round_outcome=np.zeros(b, bool),
        root_values=np.zeros_like(returns, np.float32), has_root_value=np.zeros(b, bool),
        weights=np.ones(b, np.float32), encoder_versions=np.zeros(b, np.int32),
        champion_versions=np.zeros(b, np.int64), hidden_state=hidden.astype(np.float32),
        has_hidden_state=present,
    )  # fmt: skip


def _hidden_task(rng: np.random.Generator, b: int, public: bool) -> _HiddenBatch:
    """2-3 player rows, 6 items each hidden in the deck (1) or another hand (2..N), or known
    (0). The outcome is the share of items in the next seat's hand (code 2): the hidden state
    decides it. With ``public`` the observation shows each item's code (one-hot), else noise."""
    n = rng.integers(2, 4, b)
    codes = rng.integers(0, 4, (b, 6))
    codes = np.where(codes > n[:, None], 1, codes)
    share = (codes == 2).mean(1)
    returns = np.stack([share, 1 - share, np.where(n > 2, 0.5, 0.0)], 1) * (
        np.arange(3)[None, :] < n[:, None]
    )
    obs = np.eye(4)[codes].reshape(b, 24) if public else rng.normal(size=(b, 24))
    present = np.ones(b, bool)
    present[:4] = False  # rows without a hidden state: no belief or critic loss
    return _batch(obs, codes, present, returns, n)


def _train(net: PolicyValueNet, public: bool, steps: int, **to: object) -> dict[str, float]:
    rng = np.random.default_rng(0)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(steps):
        tb = to_tensors(_hidden_task(rng, 64, public), seats=3, **to)  # type: ignore[arg-type]
        out = net(tb.observations, tb.action_features, tb.legal_mask, tb.hidden_state)
        terms = alphazero_loss(out, tb, value_scale=0.5, aux_coef=1.0)
        opt.zero_grad()
        terms.total.backward()
        opt.step()
    tb = to_tensors(_hidden_task(np.random.default_rng(99), 256, public), seats=3)
    with torch.no_grad():
        out = net(tb.observations, tb.action_features, tb.legal_mask, tb.hidden_state)
        return alphazero_loss(out, tb, value_scale=0.5).as_floats()


def test_the_critic_learns_what_only_the_hidden_state_tells() -> None:
    net = _net(obs=24, feats=1, belief_head=False)
    figures = _train(net, public=False, steps=100)
    assert figures["critic_loss"] < 0.25 * figures["value_loss"]
    assert figures["critic_ev"] > 0.6 and figures["value_ev"] < 0.3


def test_the_belief_beats_uniform_where_the_observation_tells_the_locations() -> None:
    net = _net(obs=24, feats=1, critic=False)
    rng = np.random.default_rng(5)
    batch = _hidden_task(rng, 256, public=True)
    codes, n = batch.hidden_state, batch.num_players
    assert codes is not None
    hidden = (codes >= 1) & batch.has_hidden_state[:, None]  # type: ignore[index]
    uniform = float((np.log(n)[:, None] * hidden).sum() / hidden.sum())
    figures = _train(net, public=True, steps=40)
    assert figures["belief_loss"] < 0.3 * uniform


def test_value_target_critic_regresses_the_value_head_on_the_critic_without_grad_into_it() -> None:
    net = _randomize(_net(obs=24, feats=1)).train()
    batch = _hidden_task(np.random.default_rng(1), 16, public=False)
    tb = to_tensors(batch, seats=3, value_target="critic")
    plain = to_tensors(batch, seats=3, value_target="round")
    out = net(tb.observations, tb.action_features, tb.legal_mask, tb.hidden_state)
    assert out.critic is not None and tb.has_hidden_state is not None
    terms = alphazero_loss(out, tb, value_scale=0.5, policy_coef=0.0)
    target = torch.where(tb.has_hidden_state[:, None], out.critic.detach(), tb.value_targets)
    seats = tb.seat_mask.float()
    want = ((((out.values - target) / 0.5).square() * seats).sum(-1) / seats.sum(-1)).mean()
    assert torch.isclose(terms.value, want)
    assert not torch.isclose(terms.value, alphazero_loss(out, plain, value_scale=0.5).value)
    net.zero_grad()
    terms.value.backward()
    assert all(p.grad is None or not p.grad.any() for p in net.critic.parameters())  # type: ignore[union-attr]


def test_the_learner_reports_the_heads_and_refuses_a_critic_target_without_a_critic() -> None:
    game = make_game("kuhn_poker", players=3)
    encoder = encoder_for(game)
    config = ModelConfig.for_encoder(encoder, game, **SMALL, hidden=LOCATIONS,  # type: ignore[arg-type]
                                     belief_head=True, critic=True)  # fmt: skip
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    learner = Learner(net, LearnerConfig(value_target="critic", device="cpu"),
                      game=game, encoder=encoder)  # fmt: skip
    task = _hidden_task(np.random.default_rng(2), 32, public=False)
    obs = np.random.default_rng(3).normal(size=(32, encoder.observation_size))
    batch = dataclasses.replace(
        task, observations=obs.astype(np.float32),
        action_features=np.ones((32, 1, encoder.action_feature_size), np.float32),
        encoder_versions=np.full(32, encoder.version, np.int32),
    )  # fmt: skip
    terms, _ = learner.train_batch(learner.tensors(batch))
    floats = terms.as_floats()
    assert {"belief_loss", "critic_loss", "value_ev", "critic_ev"} <= set(floats)
    wrong = dataclasses.replace(batch, hidden_state=np.zeros((32, 5), np.float32))
    with pytest.raises(LearnerError, match="hidden states have 5 entries.*expect 6"):
        learner.tensors(wrong)
    bare = PolicyValueNet(config.replace(critic=False), encoder.observation_size,
                          encoder.action_feature_size)  # fmt: skip
    with pytest.raises(LearnerError, match="value_target='critic'.*no critic"):
        Learner(bare, LearnerConfig(value_target="critic", device="cpu"), game=game,
                encoder=encoder)  # fmt: skip
