"""Training losses: AlphaZero (policy cross-entropy + value MSE) and actor-critic (REINFORCE).

The learner (:mod:`.learner`) turns a sampled :class:`~omega_cluster.data.TrainingBatch` (numpy,
absolute seats) into a :class:`TensorBatch` (torch, on the device, values **seat-relative** as the
network predicts them: column ``k`` is seat ``(player + k) % N``) with :func:`to_tensors`, runs the
network and calls one of:

* :func:`alphazero_loss` — cross-entropy of the policy to the search's visit distribution over the
  legal actions (rows weighted by ``policy_weight × record weight``: playout-cap "fast" searches
  have policy weight 0), plus value MSE to the final returns or to the decision's round outcome
  (per-round credit: a decision is judged by its round), plus auxiliary losses when the batch carries aux targets
  (Silver et al. 2017; Wu 2019 for auxiliary targets: KataGo's ownership and score heads). The
  records' flat ``aux_targets`` column is split per head by :func:`aux_target_arrays` in the
  layout of the encoder's ``aux_heads``. Record weights down-weight weak teachers.
* :func:`actor_critic_loss` — for search-free self-play: REINFORCE on the chosen action with the
  value head as baseline, and two fixes against a policy collapse: advantages
  standardised per batch (zero mean, unit variance: "the policy learns relative move quality
  instead of pushing every losing move down") and clipped at ``k·σ``, plus an entropy bonus.
  (Gradient-norm clipping, the fourth fix, is the learner's.)

Both add the losses of the heads that read the records' training-only hidden state
(:mod:`._heads`): the belief cross-entropy (weighted like the aux losses) and the critic's value
MSE (weighted like the value loss), on the rows that carry a hidden state; with
``value_target="critic"`` the value head's target is the critic's values there (detached).

Value errors are measured in half-ranges of the value head (``value_scale``): a win share in
[0, 1] and Leduc's chips in [-13, 13] then give losses of the same size. Padded actions (``-inf``
logits) and padded seats are masked out everywhere; all loss arithmetic runs in float32, also
under mixed precision.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from omega_cluster.data import TrainingBatch
from omega_cluster.games.encoding import AuxHeadSpec
from omega_cluster.model.network import NetOutput
from omega_cluster.train._heads import (
    belief_rows,
    explained_variance,
    weighted_mean,
)
from omega_cluster.train._heads import (
    value_rows as seat_mse,
)

__all__ = [
    "VALUE_TARGETS",
    "LossError",
    "LossTerms",
    "TensorBatch",
    "actor_critic_loss",
    "alphazero_loss",
    "aux_loss",
    "aux_target_arrays",
    "explained_variance",
    "hidden_terms",
    "relative_seats",
    "to_tensors",
]

VALUE_TARGETS = ("final", "round", "search", "mixed", "critic")
"""Value targets: the final returns; the decision's round outcome (per-round credit, else final);
the search's root value (else the round/final outcome); or the mean of the two ("mixed": the
outcome is unbiased but noisy, the search's backed-up value less noisy but biased by its leaf:
a value head trained on search backups is a first step before a network leaf); or the
perfect-information critic's values (on rows with a hidden state, else the round outcome; the
critic itself learns the round outcome): the critic sees the hands, so its values are a less
noisy target than the outcome of one deal (PerfectDou)."""


class LossError(ValueError):
    """A batch that does not fit the network (seats, features) or a bad loss option."""


@dataclass(frozen=True, eq=False)
class TensorBatch:
    """A training batch as tensors on the learner's device (``S`` = the network's value seats)."""

    observations: torch.Tensor  # float32[B, D]
    action_features: torch.Tensor  # float32[B, L, F]
    legal_mask: torch.Tensor  # bool[B, L]
    policy_targets: torch.Tensor  # float32[B, L]: visit distribution (zeros where none)
    policy_weights: torch.Tensor  # float32[B]: policy_weight × record weight
    action_indices: torch.Tensor  # int64[B]: position of the chosen action in the legal row
    value_targets: torch.Tensor  # float32[B, S]: seat-relative value targets (0 past N)
    seat_mask: torch.Tensor  # bool[B, S]: True for the seats at the row's table
    weights: torch.Tensor  # float32[B]: record weights
    aux_targets: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)
    # name -> (target, present bool[B]); target: float32[B, size] (regression values, or
    # class probabilities of a classification head) or int64[B] class indices
    hidden_state: torch.Tensor | None = None  # float32[B, H]: training-only hidden state (zeros
    has_hidden_state: torch.Tensor | None = None  # bool[B]  where a row has none); None: no row has
    value_from_critic: bool = False  # value_target "critic": the value head learns the critic

    @property
    def num_players(self) -> torch.Tensor:
        """int64[B]: the table size of each row (its seats)."""
        return self.seat_mask.sum(-1)

    @property
    def size(self) -> int:
        return int(self.weights.shape[0])


@dataclass(frozen=True, eq=False)
class LossTerms:
    """The loss of one batch (scalar tensors; ``total`` is what is minimised)."""

    total: torch.Tensor
    policy: torch.Tensor  # cross-entropy (alphazero) or the REINFORCE surrogate (actor-critic)
    value: torch.Tensor  # weighted MSE in half-ranges of the value head
    entropy: torch.Tensor  # mean policy entropy (nats)
    aux: torch.Tensor  # summed auxiliary losses (0 without aux targets)
    # per-row terms behind the policy and value losses, for per-slice figures: name ->
    # (loss float32[B], weight float32[B]); the batch's loss is their weighted mean
    rows: dict[str, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)
    # figures of the hidden-information heads and the explained variance of the value head and
    # the critic against the outcome target (NaN where the net or the batch cannot give one)
    heads: dict[str, torch.Tensor] = field(default_factory=dict)

    def as_floats(self) -> dict[str, float]:
        """The losses as floats, and those figures of ``heads`` that this batch measured."""
        figures = {name: float(value.detach()) for name, value in self.heads.items()}
        return {
            "loss": float(self.total.detach()),
            "policy_loss": float(self.policy.detach()),
            "value_loss": float(self.value.detach()),
            "entropy": float(self.entropy.detach()),
            "aux_loss": float(self.aux.detach()),
            **{name: value for name, value in figures.items() if math.isfinite(value)},
        }


def relative_seats(
    values: np.ndarray, players: np.ndarray, num_players: np.ndarray, seats: int
) -> tuple[np.ndarray, np.ndarray]:
    """Absolute per-seat values ``[B, Nmax]`` → seat-relative ``[B, seats]`` and its mask:
    ``out[b, k] = values[b, (players[b] + k) % num_players[b]]`` for ``k < num_players[b]``."""
    n_max = values.shape[1]
    if n_max > seats:
        raise LossError(
            f"the batch has tables of up to {n_max} players, the network values only {seats} "
            "seats (train a network with more value seats, or filter the replay window)"
        )
    k = np.arange(seats)[None, :]
    mask = k < num_players[:, None]
    index = (players[:, None] + k) % np.maximum(num_players[:, None], 1)
    out = np.take_along_axis(values, np.minimum(index, max(n_max - 1, 0)), axis=1)
    return np.where(mask, out, 0.0).astype(np.float32), mask


def aux_target_arrays(
    batch: TrainingBatch, layout: Sequence[AuxHeadSpec]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The batch's flat ``aux_targets`` split by head: ``{name: (float32[B, size], present
    bool[B])}`` in the order of ``layout`` (the encoder's ``aux_heads``); ``{}`` without targets."""
    if batch.aux_targets is None or batch.has_aux_targets is None or not layout:
        return {}
    flat, present = batch.aux_targets, batch.has_aux_targets
    width = sum(head.size for head in layout)
    if flat.shape[1] != width:
        raise LossError(
            f"the batch has aux targets of {flat.shape[1]} values, the heads "
            f"{[h.name for h in layout]} take {width} (records of another encoder?)"
        )
    bounds = np.cumsum([0, *(head.size for head in layout)])
    return {
        head.name: (flat[:, bounds[i] : bounds[i + 1]], present) for i, head in enumerate(layout)
    }


def to_tensors(
    batch: TrainingBatch,
    *,
    seats: int,
    value_target: str = "final",
    device: torch.device | str = "cpu",
    aux_targets: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    aux_layout: Sequence[AuxHeadSpec] = (),
) -> TensorBatch:
    """A :class:`TensorBatch` of ``batch`` for a network with ``seats`` value seats.

    Aux targets: ``aux_targets`` as given, else the batch's own column split by ``aux_layout``
    (:func:`aux_target_arrays`)."""
    if value_target not in VALUE_TARGETS:
        raise LossError(f"value_target={value_target!r} is not allowed; allowed: {VALUE_TARGETS}")
    if batch.action_features is None:
        raise LossError(
            "the batch has no action features; the action-conditioned network needs them "
            "(records written without an encoder's encode_actions)"
        )
    targets = batch.value_targets(per_round=value_target != "final")  # "critic": learns round
    if value_target in ("search", "mixed"):
        share = 1.0 if value_target == "search" else 0.5
        searched = batch.has_root_value[:, None]
        targets = np.where(searched, (1 - share) * targets + share * batch.root_values, targets)
    rel, mask = relative_seats(targets, batch.players, batch.num_players, seats)

    def tensor(array: np.ndarray, dtype: torch.dtype | None = None) -> torch.Tensor:
        t = torch.from_numpy(np.ascontiguousarray(array))
        return t.to(device=device, dtype=dtype, non_blocking=True)

    if aux_targets is None:
        aux_targets = aux_target_arrays(batch, aux_layout)
    aux = {
        name: (tensor(target), tensor(present.astype(np.bool_)))
        for name, (target, present) in aux_targets.items()
    }
    hidden = _hidden_arrays(batch)
    return TensorBatch(
        observations=tensor(batch.observations),
        action_features=tensor(batch.action_features),
        legal_mask=tensor(batch.legal_mask),
        policy_targets=tensor(batch.policy_targets),
        policy_weights=tensor(batch.policy_weights * batch.weights),
        action_indices=tensor(batch.action_indices, torch.int64),
        value_targets=tensor(rel),
        seat_mask=tensor(mask),
        weights=tensor(batch.weights),
        aux_targets=aux,
        hidden_state=None if hidden is None else tensor(hidden[0]),
        has_hidden_state=None if hidden is None else tensor(hidden[1]),
        value_from_critic=value_target == "critic",
    )


def _hidden_arrays(batch: TrainingBatch) -> tuple[np.ndarray, np.ndarray] | None:
    """The batch's training-only hidden state ``(float32[B, H], present bool[B])``, or None
    when no row carries one."""
    hidden = getattr(batch, "hidden_state", None)
    present = getattr(batch, "has_hidden_state", None)
    if hidden is None or present is None or not np.any(present):
        return None
    return np.asarray(hidden, np.float32), np.asarray(present, np.bool_)


_weighted_mean = weighted_mean


def _log_policy(output: NetOutput, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked log-probabilities (0 at padding, never ``0 · -inf``) and the row entropies."""
    log_p = torch.log_softmax(output.logits.float(), dim=-1)
    log_p = torch.where(mask, log_p, torch.zeros_like(log_p))
    entropy = -(log_p.exp() * log_p * mask).sum(-1)
    return log_p, entropy


def _value_rows(output: NetOutput, tb: TensorBatch, value_scale: float) -> torch.Tensor:
    """Each row's value MSE over the seats at its table (in half-ranges of the head), to the
    outcome target, or with ``value_from_critic`` to the critic's values (no gradient through
    them) on the rows that carry a hidden state."""
    target = tb.value_targets
    if tb.value_from_critic and output.critic is not None and tb.has_hidden_state is not None:
        critic = output.critic.detach().float()
        target = torch.where(tb.has_hidden_state[:, None], critic, target)
    return seat_mse(output.values, target, tb.seat_mask, value_scale)


def hidden_terms(
    output: NetOutput, tb: TensorBatch, value_scale: float
) -> tuple[torch.Tensor, torch.Tensor, dict[str, torch.Tensor]]:
    """``(belief loss, critic loss, figures)`` of the hidden-information heads (both 0 where the
    net or the batch lacks them); figures: ``belief_loss``, ``critic_loss`` (NaN where absent),
    ``value_ev`` and ``critic_ev`` (explained variance of the acting player's own value, seat 0,
    against the outcome target: pooling the seats would credit a head for the seats' means)."""
    zero = torch.zeros((), device=tb.weights.device)
    nan = torch.full((), float("nan"), device=tb.weights.device)
    own, target = tb.seat_mask[:, :1], tb.value_targets[:, :1]  # the acting player's value
    figures = {"value_ev": explained_variance(output.values[:, :1].detach(), target, own)}
    belief, critic = zero, zero
    figures["belief_loss"] = figures["critic_loss"] = figures["critic_ev"] = nan
    if tb.hidden_state is None or tb.has_hidden_state is None:
        return belief, critic, figures
    present = tb.has_hidden_state
    if output.belief is not None:
        rows, items = belief_rows(output.belief, tb.hidden_state, tb.num_players)
        belief = weighted_mean(rows, tb.weights * (present & (items > 0)).float())
        figures["belief_loss"] = belief.detach()
    if output.critic is not None:
        rows = seat_mse(output.critic, tb.value_targets, tb.seat_mask, value_scale)
        critic = weighted_mean(rows, tb.weights * present.float())
        figures["critic_loss"] = critic.detach()
        figures["critic_ev"] = explained_variance(
            output.critic[:, :1].detach(), target, own & present[:, None]
        )
    return belief, critic, figures


def aux_loss(output: NetOutput, tb: TensorBatch, heads: tuple[AuxHeadSpec, ...]) -> torch.Tensor:
    """Sum over the aux heads that have targets in ``tb``: MSE (regression, mean over the head's
    outputs) or cross-entropy (classification: to class indices, or to class probabilities such
    as a one-hot), each a mean over the rows whose target is present, record-weighted."""
    total = torch.zeros((), device=tb.weights.device)
    for head in heads:
        if head.name not in tb.aux_targets:
            continue
        if head.name not in output.aux:
            raise LossError(f"aux target {head.name!r} has no head in the network")
        target, present = tb.aux_targets[head.name]
        predicted = output.aux[head.name].float()
        if target.dim() == 2 and target.shape[1] != predicted.shape[1]:
            raise LossError(
                f"aux head {head.name!r} has {predicted.shape[1]} outputs, its targets "
                f"{target.shape[1]} values"
            )
        if head.kind == "classification" and target.dim() == 2:
            per_row = -(target.float() * torch.log_softmax(predicted, dim=-1)).sum(-1)
        elif head.kind == "classification":
            per_row = F.cross_entropy(predicted, target.long(), reduction="none")
        else:
            per_row = (predicted - target.float()).square().mean(-1)
        total = total + _weighted_mean(per_row, tb.weights * present.float())
    return total


def alphazero_loss(
    output: NetOutput,
    tb: TensorBatch,
    *,
    value_scale: float = 1.0,
    policy_coef: float = 1.0,
    value_coef: float = 1.0,
    aux_coef: float = 0.25,
    aux_heads: tuple[AuxHeadSpec, ...] = (),
) -> LossTerms:
    """Policy cross-entropy to the visit distribution + value MSE (+ aux); module docstring."""
    log_p, entropy = _log_policy(output, tb.legal_mask)
    cross_entropy = -(tb.policy_targets * log_p).sum(-1)
    policy = _weighted_mean(cross_entropy, tb.policy_weights)
    value_rows = _value_rows(output, tb, value_scale)
    value = _weighted_mean(value_rows, tb.weights)
    aux = aux_loss(output, tb, aux_heads)
    belief, critic, figures = hidden_terms(output, tb, value_scale)
    total = policy_coef * policy + value_coef * (value + critic) + aux_coef * (aux + belief)
    rows = _detached(
        policy_loss=(cross_entropy, tb.policy_weights), value_loss=(value_rows, tb.weights)
    )
    mean_entropy = _weighted_mean(entropy, tb.weights)
    return LossTerms(total, policy, value, mean_entropy, aux, rows, figures)


def _detached(
    **terms: tuple[torch.Tensor, torch.Tensor],
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    return {name: (loss.detach(), weight.detach()) for name, (loss, weight) in terms.items()}


def actor_critic_loss(
    output: NetOutput,
    tb: TensorBatch,
    *,
    value_scale: float = 1.0,
    value_coef: float = 1.0,
    entropy_coef: float = 0.05,
    advantage_clip: float = 3.0,
    aux_coef: float = 0.25,
    aux_heads: tuple[AuxHeadSpec, ...] = (),
) -> LossTerms:
    """REINFORCE with the value head as baseline, standardised + clipped advantages, entropy bonus.

    The advantage of a row is (its own seat's target − the value head's prediction, detached);
    it is standardised over the batch and clipped to ``±advantage_clip`` σ.
    """
    log_p, entropy = _log_policy(output, tb.legal_mask)
    chosen = log_p.gather(1, tb.action_indices[:, None]).squeeze(1)
    baseline = output.values[:, 0].detach().float()
    advantage = (tb.value_targets[:, 0] - baseline) / value_scale
    if advantage.numel() > 1:
        std = advantage.std(unbiased=False)
        advantage = (advantage - advantage.mean()) / (std + 1e-8)
    else:
        advantage = torch.zeros_like(advantage)
    advantage = advantage.clamp(-advantage_clip, advantage_clip)
    policy = -_weighted_mean(advantage * chosen, tb.weights)
    value_rows = _value_rows(output, tb, value_scale)
    value = _weighted_mean(value_rows, tb.weights)
    mean_entropy = _weighted_mean(entropy, tb.weights)
    aux = aux_loss(output, tb, aux_heads)
    belief, critic, figures = hidden_terms(output, tb, value_scale)
    total = (
        policy + value_coef * (value + critic) - entropy_coef * mean_entropy
        + aux_coef * (aux + belief)
    )  # fmt: skip
    rows = _detached(
        policy_loss=(-(advantage * chosen), tb.weights), value_loss=(value_rows, tb.weights)
    )
    return LossTerms(total, policy, value, mean_entropy, aux, rows, figures)
