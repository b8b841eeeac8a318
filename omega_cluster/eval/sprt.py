"""Sequential probability ratio test (SPRT) for gating a candidate against the champion.

The gate (:mod:`omega_cluster.eval.gate`) asks after each batch of bench games whether the
candidate is stronger: H0 "Elo ≤ elo0" against H1 "Elo ≥ elo1" (logistic Elo of the candidate over
the champion), with false-positive rate alpha and false-negative rate beta. This is the test
fishtest and Leela Zero gate with: Wald's SPRT (1945) stops as soon as the evidence is clear,
on average after about half the games of a fixed-size test with the same error rates.

The likelihood ratio is the *generalized* one (GSPRT) of Michel Van den Bergh's notes for
fishtest: the results are a multinomial over a few score values, and each hypothesis is the
maximum-likelihood distribution whose expected score is s0 = L(elo0) (resp. s1 = L(elo1)), with
L(x) = 1 / (1 + 10^(-x/400)). Two forms (fishtest's ``LLRcalc.py``):

* ``method="exact"`` — the constrained MLE (``MLE_expected``: p_i / (1 + x (a_i - s)) with x the
  root of the secular equation). Well behaved from the first game, so it is the default.
* ``method="normal"`` — the Brownian approximation ``N (s1 - s0)(2 mean - s0 - s1) / (2 var)``
  fishtest's ``sprt`` class reports. It is close to the exact one over hundreds of games but
  unreliable over a handful (after one win the sample variance is ~0 and the ratio explodes).

Models: ``"trinomial"`` counts single games (loss, draw, win = 0, 0.5, 1; Bernoulli is the case
without draws); ``"pentanomial"`` counts seat-swapped game pairs on one deal (0, 0.5, 1, 1.5, 2).
Pairing cancels the deal's and the seat's luck, which the pentanomial variance sees and the
trinomial one does not (it would treat the two games as independent and stop later than needed).
Counts are listed low to high, as in fishtest. A zero count is replaced by 1e-3 (fishtest's
``regularize``) so the MLE stays inside the simplex.

Bounds are Wald's: accept H0 when LLR ≤ log(beta / (1 - alpha)), accept H1 when
LLR ≥ log((1 - beta) / alpha). :func:`simulate_sprt` measures the operating characteristics
(error rates, mean games) of a design, :func:`simulate_fixed` the promotion rate of a fixed-size
gate ("play n pairs, promote iff the score beats 0.5 by a margin"); ``bench/bench_sprt.py``
prints both.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from omega_cluster.eval.stats import normal_quantile, pentanomial_counts, score_from_elo, wdl_counts

__all__ = [
    "MODELS",
    "SPRT",
    "Decision",
    "SPRTSimulation",
    "fixed_sample_size",
    "model_values",
    "simulate_fixed",
    "simulate_sprt",
    "sprt_bounds",
    "sprt_llr",
]

MODELS = ("trinomial", "pentanomial")
METHODS = ("exact", "normal")
_REGULARIZE = 1e-3  # fishtest's prior for a category never seen yet
_MAX_ITERATIONS = 200  # safeguarded Newton: a handful usually; bisection steps bound the rest
_TOLERANCE = 1e-10  # on x; the LLR is stationary in x at the root, so its error is O(dx²)


class Decision(enum.Enum):
    """The SPRT's answer after a batch of results."""

    ACCEPT_H1 = "accept H1"  # the candidate is at least elo1 stronger: promote
    ACCEPT_H0 = "accept H0"  # the candidate is at most elo0 stronger: reject
    CONTINUE = "continue"  # not enough evidence either way: play more games


def model_values(model: str) -> np.ndarray:
    """The per-game score of each count category of ``model``, low to high."""
    _check_model(model)
    return np.linspace(0.0, 1.0, 3 if model == "trinomial" else 5)


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"unknown SPRT model {model!r}; allowed: {', '.join(MODELS)}")


def _check_design(elo0: float, elo1: float, alpha: float, beta: float) -> None:
    if not (math.isfinite(elo0) and math.isfinite(elo1)) or elo0 >= elo1:
        raise ValueError(f"SPRT needs finite elo0 < elo1, got elo0={elo0!r}, elo1={elo1!r}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 0.5:
            raise ValueError(f"SPRT {name} must be in (0, 0.5), got {value!r}")


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's (lower, upper) LLR bounds: accept H0 at or below lower, H1 at or above upper."""
    _check_design(0.0, 1.0, alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _secular_log_weights(p: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log(1 + x a_i) where x solves f(x) = sum_i p_i a_i / (1 + x a_i) = 0 (fishtest ``secular``).

    ``p``: float[..., K] empirical probabilities; ``a``: float[K] centred values (min < 0 < max).
    f decreases on the bracket (-1/max a, -1/min a), so Newton's method kept inside a shrinking
    bracket (a bisection step whenever Newton would leave it) converges; it vectorizes over runs.
    """
    flat = p.reshape(-1, p.shape[-1])
    x = np.zeros(len(flat))  # f(0) = mean - s: the root is near 0 once the data say much
    lo = np.full(len(flat), -1.0 / a.max())
    hi = np.full(len(flat), -1.0 / a.min())
    live = np.arange(len(flat))  # iterate only on the roots not found yet
    for _ in range(_MAX_ITERATIONS):
        ratio = a / (1.0 + x[live, None] * a)
        f = np.sum(flat[live] * ratio, axis=-1)
        lo[live] = np.where(f > 0.0, x[live], lo[live])
        hi[live] = np.where(f > 0.0, hi[live], x[live])
        newton = x[live] + f / np.sum(flat[live] * ratio * ratio, axis=-1)  # x - f / f'
        inside = (newton > lo[live]) & (newton < hi[live])
        moved = np.where(inside, newton, 0.5 * (lo[live] + hi[live])) - x[live]
        x[live] += moved
        live = live[np.abs(moved) >= _TOLERANCE]
        if live.size == 0:
            break
    roots = x.reshape(p.shape[:-1])
    return np.log1p(roots[..., None] * a)


def sprt_llr(
    counts: np.ndarray | Sequence[float], s0: float, s1: float, *, method: str = "exact"
) -> np.ndarray:
    """Generalized log-likelihood ratio of s = s1 against s = s0 for ``counts`` (float[..., K],
    K = 3 trinomial or 5 pentanomial, low to high); vectorized over the leading axes."""
    if method not in METHODS:
        raise ValueError(f"unknown LLR method {method!r}; allowed: {', '.join(METHODS)}")
    c = np.asarray(counts, dtype=float)
    if c.ndim == 0 or c.shape[-1] not in (3, 5):
        raise ValueError(f"counts need 3 (trinomial) or 5 (pentanomial) categories, got {c.shape}")
    if np.any(c < 0):
        raise ValueError("counts must be >= 0")
    c = np.where(c == 0.0, _REGULARIZE, c)
    n = c.sum(axis=-1)
    p = c / n[..., None]
    values = np.linspace(0.0, 1.0, c.shape[-1])
    if method == "normal":
        mean = p @ values
        var = np.sum(p * (values - mean[..., None]) ** 2, axis=-1)
        return np.asarray(n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var))
    # log(pdf1_i / pdf0_i) = log(1 + x0 a0_i) - log(1 + x1 a1_i): the MLE under s0 and under s1
    jumps = _secular_log_weights(p, values - s0) - _secular_log_weights(p, values - s1)
    return np.asarray(n * np.sum(p * jumps, axis=-1))


class SPRT:
    """A running SPRT of H0 "Elo ≤ elo0" against H1 "Elo ≥ elo1" for one candidate.

    Feed it results with :meth:`update` (per-game scores for ``"trinomial"``, per-pair scores for
    ``"pentanomial"``) or :meth:`update_counts`; each returns the :class:`Decision` so far. The
    first crossing of a bound is final (Wald's test stops there): later updates still add to the
    counts and :attr:`llr`, but the decision they return does not change.
    """

    def __init__(
        self,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        *,
        model: str = "trinomial",
        method: str = "exact",
    ) -> None:
        _check_design(elo0, elo1, alpha, beta)
        _check_model(model)
        if method not in METHODS:
            raise ValueError(f"unknown LLR method {method!r}; allowed: {', '.join(METHODS)}")
        self.elo0, self.elo1, self.alpha, self.beta = elo0, elo1, alpha, beta
        self.model, self.method = model, method
        self.s0, self.s1 = score_from_elo(elo0), score_from_elo(elo1)
        self.lower, self.upper = sprt_bounds(alpha, beta)
        self.counts = np.zeros(3 if model == "trinomial" else 5)  # low to high
        self.llr = 0.0
        self.decision = Decision.CONTINUE

    @property
    def games(self) -> int:
        """Games played so far (two per pair in the pentanomial model)."""
        return int(self.counts.sum()) * (1 if self.model == "trinomial" else 2)

    def update(self, results: Sequence[float]) -> Decision:
        """Add per-game scores (0, 0.5, 1) or, for ``"pentanomial"``, pair scores (0 … 2)."""
        if self.model == "trinomial":
            w, d, l = wdl_counts(results)
            return self.update_counts((l, d, w))
        return self.update_counts(pentanomial_counts(results))

    def update_counts(self, counts: Sequence[float]) -> Decision:
        """Add counts, low to high: (losses, draws, wins) or pairs scoring (0, 0.5, 1, 1.5, 2)."""
        c = np.asarray(counts, dtype=float)
        if c.shape != self.counts.shape or np.any(c < 0):
            raise ValueError(
                f"{self.model} counts must be {len(self.counts)} numbers >= 0, got {counts!r}"
            )
        self.counts = self.counts + c
        if self.counts.sum() == 0:
            return self.decision
        self.llr = float(sprt_llr(self.counts, self.s0, self.s1, method=self.method))
        if self.decision is Decision.CONTINUE:
            if self.llr >= self.upper:
                self.decision = Decision.ACCEPT_H1
            elif self.llr <= self.lower:
                self.decision = Decision.ACCEPT_H0
        return self.decision


def fixed_sample_size(
    pdf0: Sequence[float], pdf1: Sequence[float], alpha: float, beta: float
) -> float:
    """Samples a fixed-size one-sided test needs for the same alpha and beta (normal approx.).

    ``pdf0``/``pdf1`` are the true category probabilities (low to high) at elo0 and elo1; a z test
    of the mean score at level alpha with power 1 - beta at s1 needs
    N = ((z_{1-alpha} sd0 + z_{1-beta} sd1) / (s1 - s0))². Samples are pairs for 5 categories.
    """
    _check_design(0.0, 1.0, alpha, beta)
    moments = []
    for pdf in (pdf0, pdf1):
        p = np.asarray(pdf, dtype=float)
        values = np.linspace(0.0, 1.0, len(p))
        mean = float(p @ values)
        moments.append((mean, float(np.sqrt(p @ (values - mean) ** 2))))
    (m0, sd0), (m1, sd1) = moments
    z = normal_quantile(1.0 - alpha) * sd0 + normal_quantile(1.0 - beta) * sd1
    return (z / (m1 - m0)) ** 2


@dataclass(frozen=True)
class SPRTSimulation:
    """Operating characteristics of one SPRT design at one true result distribution."""

    runs: int  # simulated tests
    accept_h1: float  # share of runs that accepted H1
    accept_h0: float  # share of runs that accepted H0
    undecided: float  # share still running at max_samples
    mean_samples: float  # mean samples (games, or pairs) to a decision, capped at max_samples


def simulate_sprt(
    sprt: SPRT,
    pdf: Sequence[float],
    *,
    runs: int,
    rng: np.random.Generator | int,
    max_samples: int = 100_000,
    check_every: int = 1,
    chunk: int = 256,
) -> SPRTSimulation:
    """Run ``runs`` independent copies of ``sprt``'s design on samples drawn from ``pdf``.

    Vectorized: all live runs advance ``chunk`` samples at a time and the LLR is evaluated every
    ``check_every`` samples (as a gate that checks after each batch from the workers); a run stops
    at its first crossing. ``sprt`` supplies the design only (its state is not touched).
    """
    p = np.asarray(pdf, dtype=float)
    if p.shape != sprt.counts.shape or np.any(p < 0) or not math.isclose(p.sum(), 1.0):
        raise ValueError(f"pdf must be {len(sprt.counts)} probabilities summing to 1, got {pdf!r}")
    if runs < 1 or check_every < 1 or chunk % check_every:
        raise ValueError("need runs >= 1, check_every >= 1 and chunk a multiple of check_every")
    gen = np.random.default_rng(rng)
    cdf = np.cumsum(p)[:-1]
    totals = np.zeros((runs, len(p)))
    done_at = np.full(runs, max_samples, dtype=float)
    verdict = np.zeros(runs)  # +1 accept H1, -1 accept H0, 0 undecided
    live = np.arange(runs)
    played = 0
    while live.size and played < max_samples:
        cats = np.searchsorted(cdf, gen.random((live.size, chunk)), side="right")
        onehot = cats[..., None] == np.arange(len(p))
        steps = np.cumsum(onehot, axis=1)[:, check_every - 1 :: check_every]
        llr = sprt_llr(totals[live, None, :] + steps, sprt.s0, sprt.s1, method=sprt.method)
        position = played + check_every * np.arange(1, steps.shape[1] + 1)
        crossed = ((llr >= sprt.upper) | (llr <= sprt.lower)) & (position <= max_samples)
        hit = crossed.any(axis=1)
        first = crossed.argmax(axis=1)[hit]
        rows = live[hit]
        verdict[rows] = np.where(llr[hit, first] >= sprt.upper, 1.0, -1.0)
        done_at[rows] = position[first]
        totals[live] += steps[:, -1, :]
        live = live[~hit]
        played += chunk
    return SPRTSimulation(
        runs=runs,
        accept_h1=float(np.mean(verdict > 0)),
        accept_h0=float(np.mean(verdict < 0)),
        undecided=float(np.mean(verdict == 0)),
        mean_samples=float(done_at.mean()),
    )


def simulate_fixed(
    pdf: Sequence[float], *, samples: int, margin: float, runs: int, rng: np.random.Generator | int
) -> float:
    """The share of ``runs`` fixed-size gates that promote: each draws ``samples`` results from
    ``pdf`` (3 trinomial or 5 pentanomial categories, low to high) and promotes iff the score S
    (mean per-game value) gives 2S - 1 > ``margin`` (the gate's ``fixed`` mode)."""
    p = np.asarray(pdf, dtype=float)
    if p.shape not in ((3,), (5,)) or np.any(p < 0) or not math.isclose(p.sum(), 1.0):
        raise ValueError(f"pdf must be 3 or 5 probabilities summing to 1, got {pdf!r}")
    if runs < 1 or samples < 1:
        raise ValueError(f"need runs >= 1 and samples >= 1, got {runs!r}, {samples!r}")
    counts = np.random.default_rng(rng).multinomial(samples, p, size=runs)
    score = counts @ np.linspace(0.0, 1.0, len(p)) / samples
    return float(np.mean(2.0 * score - 1.0 > margin + 1e-12))
