"""Per-slice figures of the learner over a mix of tables (``players=4,objective=points``, ...).

:class:`SliceSums` adds up the row losses of each slice over the steps of one
:meth:`~.learner.Learner.train_steps` call (the slice of each sampled row comes from the replay
window's labels), so a slice's loss is the weighted mean over all its rows of the call;
:func:`slice_metrics` flattens them into a candidate's metrics.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from omega_cluster.train.losses import LossTerms

__all__ = ["SliceSums", "slice_metrics"]


class SliceSums:
    """Per-slice sums of the row losses over a call's steps (on the device, read once at the
    end): a slice's loss is the weighted mean over all its rows of the call."""

    TERMS = ("policy_loss", "value_loss")

    def __init__(self, keys: tuple[str, ...], device: torch.device) -> None:
        self.keys, self.device = keys, device
        k = len(keys)
        self.sums = {t: torch.zeros(k, device=device) for t in self.TERMS}
        self.weights = {t: torch.zeros(k, device=device) for t in self.TERMS}
        self.samples = np.zeros(k, np.int64)

    def add(self, codes: np.ndarray, terms: LossTerms) -> None:
        index = torch.from_numpy(codes.astype(np.int64)).to(self.device)
        for t in self.TERMS:
            loss, weight = terms.rows[t]
            self.sums[t].index_add_(0, index, (loss * weight).float())
            self.weights[t].index_add_(0, index, weight.float())
        self.samples += np.bincount(codes, minlength=len(self.keys))

    def figures(self, window_rows: dict[str, int]) -> dict[str, dict[str, float]]:
        """``{key: {samples, window_rows, policy_loss, value_loss}}`` for the slices the window
        holds or the call trained on; a loss only where the call had rows of weight > 0."""
        sums = {t: self.sums[t].cpu().numpy() for t in self.TERMS}
        weights = {t: self.weights[t].cpu().numpy() for t in self.TERMS}
        out: dict[str, dict[str, float]] = {}
        for i, key in enumerate(self.keys):
            if self.samples[i] == 0 and key not in window_rows:
                continue
            row = {"samples": float(self.samples[i]), "window_rows": float(window_rows.get(key, 0))}
            for t in self.TERMS:
                if weights[t][i] > 0:
                    row[t] = float(sums[t][i] / weights[t][i])
            out[key] = row
        return out


def slice_metrics(slices: Mapping[str, Mapping[str, float]], samples: int) -> dict[str, float]:
    """A candidate's per-slice figures as flat metrics: ``slice/<key>/policy_loss``,
    ``.../value_loss``, ``.../window_rows`` (rows of the slice in the replay window) and
    ``.../sample_share`` (its share of the rows trained on)."""
    out: dict[str, float] = {}
    for key, figures in slices.items():
        for name in ("policy_loss", "value_loss", "window_rows"):
            if name in figures:
                out[f"slice/{key}/{name}"] = float(figures[name])
        out[f"slice/{key}/sample_share"] = figures.get("samples", 0.0) / max(1, samples)
    return out
