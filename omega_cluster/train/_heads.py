"""The losses of the heads that learn through hidden information, and the explained variance.

The records carry, for training only, the hidden state at each decision (the
:class:`~omega_cluster.games.encoding.HiddenSpec` of the encoder: for "locations", each item's
code relative to the acting player — 0 not hidden from it, 1 the undealt pool, ``1 + k`` the hand
of the seat ``k`` places after it). Two heads of :class:`~omega_cluster.model.PolicyValueNet` use it:

* the **belief head** predicts each item's code from the public observation; its loss
  (:func:`belief_rows`) is the cross-entropy over the items hidden from the player (code >= 1),
  with the logits restricted to the codes that exist at the row's table (``1 .. N``: the pool
  and the ``N - 1`` other hands), so a 2-player row is not charged for 8-player hands;
* the **critic** reads the hidden state too (a perfect-information value); its loss is the value
  MSE (:func:`value_rows`) to the same target as the value head's, on the rows that carry a
  hidden state. Its values can in turn be the value head's target (PerfectDou's scheme:
  perfect-information training, imperfect-information play).

Rows without a hidden state contribute nothing to either loss.
"""

from __future__ import annotations

import torch

__all__ = ["belief_rows", "explained_variance", "value_rows", "weighted_mean"]


def weighted_mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """``Σ w·v / Σ w`` (0 when every weight is 0)."""
    return (values * weights).sum() / weights.sum().clamp_min(1e-12)


def value_rows(
    predicted: torch.Tensor, target: torch.Tensor, seat_mask: torch.Tensor, value_scale: float
) -> torch.Tensor:
    """float32[B]: each row's MSE over the seats at its table, in half-ranges of the head."""
    err = (predicted.float() - target) / value_scale
    seats = seat_mask.float()
    return (err.square() * seats).sum(-1) / seats.sum(-1).clamp_min(1.0)


def belief_rows(
    logits: torch.Tensor, hidden_state: torch.Tensor, num_players: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss float32[B], hidden items float32[B])``: each row's mean cross-entropy (nats) over
    its hidden items (code >= 1), the logits ``[B, size, classes]`` restricted to the codes
    ``1 .. N`` of the row's table size ``num_players`` (int[B]); 0 for a row with no hidden item."""
    codes = hidden_state.round().long().clamp(0, logits.shape[-1] - 1)  # [B, size]
    classes = torch.arange(logits.shape[-1], device=logits.device)
    allowed = (classes >= 1) & (classes[None, :] <= num_players[:, None])  # [B, classes]
    masked = logits.float().masked_fill(~allowed[:, None, :], float("-inf"))
    log_p = torch.log_softmax(masked, dim=-1)
    picked = log_p.gather(-1, codes.unsqueeze(-1)).squeeze(-1)  # [B, size]
    hidden = (codes >= 1) & allowed.gather(1, codes)  # a code past N is bad data: skipped
    nll = torch.where(hidden, -picked, torch.zeros_like(picked))
    count = hidden.float().sum(-1)
    return nll.sum(-1) / count.clamp_min(1.0), count


def explained_variance(
    predicted: torch.Tensor, target: torch.Tensor, mask: torch.Tensor, *, bias: bool = False
) -> torch.Tensor:
    """``1 - Var(target - predicted) / Var(target)`` over the entries where ``mask`` is True
    (a scalar; NaN with fewer than two entries or a constant target).

    With ``bias=True`` the residual is not centred: ``1 - Σ(target - predicted)² / Σ(target -
    mean)²``, the coefficient of determination, which counts a constant offset of the prediction
    as unexplained (``bench/bench_value.py``'s figure). Float64 inputs are computed in float64.
    """
    dtype = torch.float64 if target.dtype == torch.float64 else torch.float32
    m = mask.to(dtype)
    n = m.sum()
    target = target.to(dtype)
    residual = target - predicted.to(dtype)

    def var(x: torch.Tensor, centred: bool = True) -> torch.Tensor:
        mean = (x * m).sum() / n.clamp_min(1.0) if centred else 0.0
        return ((x - mean).square() * m).sum() / n.clamp_min(1.0)

    total = var(target)
    ok = (n >= 2) & (total > 1e-12)
    return torch.where(ok, 1.0 - var(residual, not bias) / total.clamp_min(1e-12), torch.nan)
