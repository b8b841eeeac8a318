"""Losses: seat rotation, masked cross-entropy, value targets, REINFORCE fixes, aux heads."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch
from train_helpers import leduc_records

from omega_cluster.data import records_to_table, table_to_batch
from omega_cluster.games.encoding import AuxHeadSpec
from omega_cluster.model.network import NetOutput
from omega_cluster.train import (
    LossError,
    TensorBatch,
    actor_critic_loss,
    alphazero_loss,
    aux_loss,
    to_tensors,
)
from omega_cluster.train.losses import aux_target_arrays, relative_seats


def _batch(
    logits: list[list[float]],
    targets: list[list[float]],
    *,
    values: list[list[float]] | None = None,
    value_targets: list[list[float]] | None = None,
    policy_weights: list[float] | None = None,
    actions: list[int] | None = None,
) -> tuple[NetOutput, TensorBatch]:
    lg = torch.tensor(logits)
    mask = torch.isfinite(lg)
    b = lg.shape[0]
    v = torch.tensor(values if values is not None else [[0.0, 0.0]] * b)
    tb = TensorBatch(
        observations=torch.zeros(b, 1),
        action_features=torch.zeros(b, lg.shape[1], 1),
        legal_mask=mask,
        policy_targets=torch.tensor(targets),
        policy_weights=torch.tensor(policy_weights or [1.0] * b),
        action_indices=torch.tensor(actions or [0] * b),
        value_targets=torch.tensor(value_targets or [[0.0, 0.0]] * b),
        seat_mask=torch.ones(b, 2, dtype=torch.bool),
        weights=torch.ones(b),
    )
    return NetOutput(lg, v, {}), tb


def test_relative_seats_rotate_to_the_acting_player() -> None:
    values = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [5.0, 6.0, 0.0]], np.float32)
    rel, mask = relative_seats(values, np.array([0, 2, 1]), np.array([3, 3, 2]), 4)
    assert rel.tolist() == [[1, 2, 3, 0], [3, 1, 2, 0], [6, 5, 0, 0]]
    assert mask.tolist() == [[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 0, 0]]
    with pytest.raises(LossError, match="up to 3 players.*only 2 seats"):
        relative_seats(values, np.array([0, 0, 0]), np.array([3, 3, 2]), 2)


def test_cross_entropy_is_masked_and_weighted_by_policy_weight() -> None:
    inf = float("-inf")
    output, tb = _batch(
        [[0.0, 1.0, inf], [2.0, 0.0, 0.0]],
        [[0.25, 0.75, 0.0], [1.0, 0.0, 0.0]],
        policy_weights=[1.0, 0.0],  # the second row is a "fast" search: no policy target
    )
    terms = alphazero_loss(output, tb)
    log_p = torch.log_softmax(torch.tensor([0.0, 1.0]), dim=0)
    expected = -(0.25 * log_p[0] + 0.75 * log_p[1])
    assert torch.isclose(terms.policy, expected)
    assert all(np.isfinite(v) for v in terms.as_floats().values())
    p = torch.softmax(torch.tensor([0.0, 1.0]), 0)
    q = torch.softmax(torch.tensor([2.0, 0.0, 0.0]), 0)
    entropy = (-(p * p.log()).sum() - (q * q.log()).sum()) / 2
    assert torch.isclose(terms.entropy, entropy)


def test_value_loss_is_in_half_ranges_of_the_head() -> None:
    output, tb = _batch(
        [[0.0], [0.0]],
        [[1.0], [1.0]],
        values=[[0.5, 0.5], [0.5, 0.5]],
        value_targets=[[1.0, 0.0], [0.0, 1.0]],
    )
    assert torch.isclose(alphazero_loss(output, tb, value_scale=0.5).value, torch.tensor(1.0))
    assert torch.isclose(alphazero_loss(output, tb, value_scale=1.0).value, torch.tensor(0.25))


def test_value_targets_final_round_search_and_mixed() -> None:
    batch = table_to_batch(records_to_table(list(leduc_records())[:8]))
    final = to_tensors(batch, seats=2, value_target="final")
    assert torch.equal(final.value_targets[:, 0], torch.from_numpy(
        batch.returns[np.arange(8), batch.players]
    ))  # fmt: skip
    assert torch.equal(to_tensors(batch, seats=2, value_target="round").value_targets,
                       final.value_targets)  # fmt: skip  # Leduc rows have no round outcome
    own = np.arange(8), batch.players
    search = to_tensors(batch, seats=2, value_target="search").value_targets[:, 0].numpy()
    assert batch.has_root_value.all() and np.allclose(search, batch.root_values[own])
    mixed = to_tensors(batch, seats=2, value_target="mixed").value_targets[:, 0].numpy()
    assert np.allclose(mixed, 0.5 * (batch.returns[own] + batch.root_values[own]))
    with pytest.raises(LossError, match="value_target='bogus'"):
        to_tensors(batch, seats=2, value_target="bogus")


def test_actor_critic_standardises_and_clips_advantages() -> None:
    logits = [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5], [0.0, 0.0]]
    returns = [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [10.0, 0.0]]
    output, tb = _batch(logits, [[1.0, 0.0]] * 4, value_targets=returns, actions=[1, 0, 1, 0])
    clip = 1.0
    terms = actor_critic_loss(output, tb, advantage_clip=clip, entropy_coef=0.0, value_coef=0.0)
    adv = torch.tensor([1.0, 0.0, 0.0, 10.0])
    adv = ((adv - adv.mean()) / adv.std(unbiased=False)).clamp(-clip, clip)
    log_p = torch.log_softmax(torch.tensor(logits), -1)[torch.arange(4), torch.tensor([1, 0, 1, 0])]
    assert torch.isclose(terms.policy, -(adv * log_p).mean())
    assert torch.isclose(terms.total, terms.policy)
    bonus = actor_critic_loss(output, tb, advantage_clip=clip, entropy_coef=0.5, value_coef=0.0)
    assert torch.isclose(bonus.total, terms.policy - 0.5 * terms.entropy)  # entropy is a bonus


def test_actor_critic_gradient_raises_the_better_action() -> None:
    """A step on the surrogate makes the action with the positive advantage more likely."""
    logits = torch.zeros(2, 2, requires_grad=True)
    _, tb = _batch([[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0]] * 2,
                   value_targets=[[1.0, 0.0], [-1.0, 0.0]], actions=[0, 0])  # fmt: skip
    output = NetOutput(logits, torch.zeros(2, 2), {})
    actor_critic_loss(output, tb, entropy_coef=0.0).total.backward()
    assert logits.grad is not None
    assert (
        logits.grad[0, 0] < 0 < logits.grad[1, 0]
    )  # descent raises row 0's action, lowers row 1's


def test_aux_losses_regression_and_classification() -> None:
    heads = (
        AuxHeadSpec("pips", 2, "regression", "doc"),
        AuxHeadSpec("out", 3, "classification", "doc"),
    )
    output, tb = _batch([[0.0], [0.0]], [[1.0], [1.0]])
    aux = {
        "pips": torch.tensor([[1.0, 0.0], [0.0, 0.0]]),
        "out": torch.tensor([[0.0, 0.0, 0.0]] * 2),
    }
    output = NetOutput(output.logits, output.values, aux)
    targets = {
        "pips": (torch.tensor([[0.0, 0.0], [9.0, 9.0]]), torch.tensor([True, False])),
        "out": (torch.tensor([2, 0]), torch.tensor([True, True])),
    }
    tb = TensorBatch(**{**tb.__dict__, "aux_targets": targets})
    expected = 0.5 + float(np.log(3.0))  # row 0's MSE (row 1 is masked) + uniform 3-class CE
    assert abs(float(aux_loss(output, tb, heads)) - expected) < 1e-5
    terms = alphazero_loss(output, tb, aux_coef=2.0, aux_heads=heads)
    assert torch.isclose(terms.total, terms.policy + terms.value + 2.0 * terms.aux)
    with pytest.raises(LossError, match="no head"):
        aux_loss(NetOutput(output.logits, output.values, {}), tb, heads)


def test_flat_aux_targets_split_by_the_encoder_layout_and_train_soft_classes() -> None:
    layout = (
        AuxHeadSpec("pips", 2, "regression", "doc"),
        AuxHeadSpec("out", 3, "classification", "doc"),
    )
    records = list(leduc_records())[:3]
    flat = [np.array([0.5, 0.25, 0, 1, 0], np.float32), None, np.array([0, 0, 0, 0, 1], np.float32)]
    table = records_to_table(
        [replace(r, aux_targets=a) for r, a in zip(records, flat, strict=True)]
    )
    batch = table_to_batch(table)
    arrays = aux_target_arrays(batch, layout)
    assert arrays["pips"][0].tolist() == [[0.5, 0.25], [0, 0], [0, 0]]
    assert arrays["out"][0].tolist() == [[0, 1, 0], [0, 0, 0], [0, 0, 1]]
    assert arrays["out"][1].tolist() == [True, False, True]
    tb = to_tensors(batch, seats=2, aux_layout=layout)
    logits = torch.tensor([[0.0, 2.0, 0.0]] * 3)
    output = NetOutput(torch.zeros(3, 1), torch.zeros(3, 2), {"out": logits})
    log_p = torch.log_softmax(logits[0], -1)
    expected = -(float(log_p[1]) + float(log_p[2])) / 2  # the one-hots of rows 0 and 2
    assert abs(float(aux_loss(output, tb, layout[1:])) - expected) < 1e-5
    with pytest.raises(LossError, match="5 values, the heads \\['pips'\\] take 2"):
        aux_target_arrays(batch, layout[:1])
    wrong = NetOutput(torch.zeros(3, 1), torch.zeros(3, 2), {"out": torch.zeros(3, 4)})
    with pytest.raises(LossError, match="4 outputs, its targets 3"):
        aux_loss(wrong, tb, layout[1:])
    assert to_tensors(batch, seats=2).aux_targets == {}  # no layout: no aux targets


def test_a_batch_without_action_features_is_refused() -> None:
    records = list(leduc_records())[:4]
    table = records_to_table(records)
    stripped = [
        type(r)(**{**{f: getattr(r, f) for f in r.__dataclass_fields__}, "action_features": None})
        for r in records
    ]
    assert table.num_rows == 4
    batch = table_to_batch(records_to_table(stripped))
    with pytest.raises(LossError, match="no action features"):
        to_tensors(batch, seats=2)
