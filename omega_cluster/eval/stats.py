"""Confidence intervals and contrasts for evaluation figures (win rates, scores, Elo gaps).

The arena (:mod:`omega_cluster.eval.arena`) summarizes per-game values with these helpers; the
gate (:mod:`omega_cluster.eval.gate`), the ratings (:mod:`omega_cluster.eval.rating`) and the
sequential test (:mod:`omega_cluster.eval.sprt`) build on them.

* :func:`mean_ci` — Student-t interval on the mean of i.i.d. per-game values. The t quantile (not the
  normal one) matters for the short matches a gate may stop at: with 10 games the 95% quantile is
  2.26, not 1.96.
* :func:`wilson_interval` — Wilson score interval for a proportion (Wilson 1927). Unlike the normal
  ("Wald") interval it stays inside [0, 1] and is not degenerate at 0 or n wins. Win shares may be
  fractional (tied winners share a win), which the formula accepts as is.
* :func:`score_interval`, :func:`elo_interval` — the same idea for a win/draw/loss record, and the
  logistic Elo difference it implies (:func:`elo_from_score`, :func:`score_from_elo`).
* :func:`paired_contrast` — a paired contrast (duplicate bridge's design): per-seed differences between
  A and B on the same deal and seat, with a t interval and a bootstrap interval over seeds.
* :func:`head_to_head`, :func:`wdl_counts`, :func:`pentanomial_counts` — how a multi-player table
  (or a seat-swapped pair of tables) becomes one candidate-vs-champion score for Elo and SPRT.

No scipy: the t quantile is computed from the closed-form t CDF for integer degrees of freedom
(Abramowitz & Stegun 26.7.3–26.7.4) by bisection, and from the Cornish–Fisher expansion
(A&S 26.7.5) above 200 degrees of freedom, where its error is below 1e-8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

__all__ = [
    "ConfidenceInterval",
    "PairedContrast",
    "elo_from_score",
    "elo_interval",
    "head_to_head",
    "mean_ci",
    "normal_quantile",
    "paired_contrast",
    "pentanomial_counts",
    "score_from_elo",
    "score_interval",
    "t_quantile",
    "wdl_counts",
    "wilson_interval",
]

_SERIES_MAX_DF = 200  # above this, Cornish–Fisher is exact to ~1e-8 and much cheaper


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate with a two-sided confidence interval."""

    estimate: float  # the mean (or proportion) of the sample
    low: float  # lower bound; -inf when the sample cannot bound it (n < 2)
    high: float  # upper bound; +inf when the sample cannot bound it
    level: float  # coverage, e.g. 0.95
    n: int  # sample size

    @property
    def half_width(self) -> float:
        """Half the interval's width (the "±" figure)."""
        return (self.high - self.low) / 2.0

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def __str__(self) -> str:
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level!r}")


def normal_quantile(p: float) -> float:
    """The standard normal quantile Φ⁻¹(p)."""
    return NormalDist().inv_cdf(p)


def _t_cdf_two_sided(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with integer ``df`` (A&S 26.7.3 odd df, 26.7.4 even df)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:
        if df == 1:
            return 2.0 * theta / math.pi
        term, total = 1.0, 1.0
        for k in range(1, (df - 3) // 2 + 1):  # 1 + 2/3 c² + 2·4/(3·5) c⁴ + …
            term *= c2 * (2 * k) / (2 * k + 1)
            total += term
        return 2.0 / math.pi * (theta + s * math.cos(theta) * total)
    term, total = 1.0, 1.0
    for k in range(1, (df - 2) // 2 + 1):  # 1 + 1/2 c² + 1·3/(2·4) c⁴ + …
        term *= c2 * (2 * k - 1) / (2 * k)
        total += term
    return s * total


def _cornish_fisher(z: float, df: int) -> float:
    """A&S 26.7.5: the t quantile from the normal one, four correction terms."""
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


@lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The quantile of Student's t distribution with ``df`` degrees of freedom (``p`` in (0, 1))."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"quantile probability must be in (0, 1), got {p!r}")
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df!r}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    if df > _SERIES_MAX_DF:
        return _cornish_fisher(normal_quantile(p), df)
    target = 2.0 * p - 1.0  # P(|T| <= t)
    low, high = 0.0, 1.0
    while _t_cdf_two_sided(high, df) < target:
        high *= 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if _t_cdf_two_sided(mid, df) < target:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return 0.5 * (low + high)


def mean_ci(values: Sequence[float], level: float = 0.95) -> ConfidenceInterval:
    """Student-t interval on the mean of ``values`` (i.i.d. per-game figures).

    With one value the spread is unknown and the bounds are infinite; with no values it raises.
    """
    _check_level(level)
    n = len(values)
    if n == 0:
        raise ValueError("mean_ci needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return ConfidenceInterval(mean, -math.inf, math.inf, level, 1)
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    half = t_quantile(0.5 + level / 2.0, n - 1) * math.sqrt(variance / n)
    return ConfidenceInterval(mean, mean - half, mean + half, level, n)


def wilson_interval(wins: float, n: int, level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for ``wins`` successes in ``n`` trials (fractional wins allowed)."""
    _check_level(level)
    if n <= 0:
        raise ValueError(f"wilson_interval needs n >= 1 trials, got {n!r}")
    if not 0.0 <= wins <= n:
        raise ValueError(f"wins must be in [0, n={n}], got {wins!r}")
    p = wins / n
    z = normal_quantile(0.5 + level / 2.0)
    z2n = z * z / n
    center = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
    low = 0.0 if wins == 0 else max(0.0, center - half)  # exact ends: no rounding residue
    high = 1.0 if wins == n else min(1.0, center + half)
    return ConfidenceInterval(p, low, high, level, n)


# ----------------------------------------------------------------------------------------------
# Elo from a score, and the score's interval with draws
# ----------------------------------------------------------------------------------------------


def score_from_elo(elo: float) -> float:
    """The expected score (win rate, draws half) of a player ``elo`` points stronger (logistic)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """The logistic Elo difference implied by a score in [0, 1]; ±inf at 0 and 1."""
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must be in [0, 1], got {score!r}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _check_wdl(wins: float, draws: float, losses: float) -> float:
    if min(wins, draws, losses) < 0:
        raise ValueError(f"wins, draws, losses must be >= 0, got {(wins, draws, losses)!r}")
    n = wins + draws + losses
    if n <= 0:
        raise ValueError("no results: wins + draws + losses must be > 0")
    return n


def score_interval(
    wins: float, draws: float, losses: float, level: float = 0.95
) -> ConfidenceInterval:
    """Interval on the score (wins + draws/2) / n: Wilson's interval extended to draws.

    Wilson inverts ``(s - p)² = z² var(p) / n``. With a draw ratio δ held at its observed value the
    per-game variance is ``p(1 - p) - δ/4`` (a draw is worth half and is less spread than a coin),
    so the bounds are the two roots of ``(1 + k)p² - (2s + k)p + s² + kδ/4 = 0`` with k = z²/n.
    With no draws this is exactly :func:`wilson_interval`; like it, the interval stays in [0, 1]
    and is not degenerate when every game was won or lost.
    """
    _check_level(level)
    n = _check_wdl(wins, draws, losses)
    s = (wins + 0.5 * draws) / n
    delta = draws / n
    k = normal_quantile(0.5 + level / 2.0) ** 2 / n
    b = 2.0 * s + k
    disc = max(0.0, b * b - 4.0 * (1.0 + k) * (s * s + k * delta / 4.0))
    low = max(0.0, (b - math.sqrt(disc)) / (2.0 * (1.0 + k)))
    high = min(1.0, (b + math.sqrt(disc)) / (2.0 * (1.0 + k)))
    return ConfidenceInterval(s, low, high, level, round(n))


def elo_interval(
    wins: float, draws: float, losses: float, level: float = 0.95
) -> ConfidenceInterval:
    """Elo difference from a win/draw/loss record with its interval (:func:`score_interval` mapped
    through :func:`elo_from_score`, which is monotone, so coverage carries over)."""
    score = score_interval(wins, draws, losses, level)
    return ConfidenceInterval(
        elo_from_score(score.estimate),
        elo_from_score(score.low),
        elo_from_score(score.high),
        level,
        score.n,
    )


# ----------------------------------------------------------------------------------------------
# Paired contrasts (the same deal and seat played by A, then by B)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedContrast:
    """A's mean advantage over B on the same seeds, with a t and a bootstrap interval over seeds."""

    mean: float  # mean over seeds of (A's result - B's result)
    sd: float  # sample standard deviation of the per-seed differences (0.0 when n == 1)
    n: int  # number of seeds (pairs)
    level: float  # coverage of both intervals
    t_interval: ConfidenceInterval  # Student-t on the per-seed differences
    bootstrap_interval: ConfidenceInterval | None  # percentile bootstrap over seeds; None if off

    def __str__(self) -> str:
        t = self.t_interval
        return f"{self.mean:+.3f} [{t.low:+.3f}, {t.high:+.3f}] (n={self.n})"


def paired_contrast(
    a: Sequence[float],
    b: Sequence[float],
    *,
    level: float = 0.95,
    bootstrap: int = 2000,
    rng: np.random.Generator | int,
) -> PairedContrast:
    """Contrast A against B from per-seed results: ``a[i]`` and ``b[i]`` come from the same deal
    seed and seat(s), everything else fixed (as in duplicate bridge).

    Pairing removes the deal's luck from the difference, so the interval is far narrower than one
    from two independent samples. The bootstrap resamples whole seeds (``bootstrap`` replicates,
    percentile interval; 0 disables it); it does not assume the differences are normal, which
    matters for win/loss results on few seeds.
    """
    _check_level(level)
    if len(a) != len(b):
        raise ValueError(f"paired results need equal lengths, got {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError("paired_contrast needs at least one seed")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0 replicates, got {bootstrap!r}")
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if not np.all(np.isfinite(diff)):
        raise ValueError("paired results must be finite numbers")
    t = mean_ci(diff.tolist(), level)
    n = len(diff)
    sd = float(diff.std(ddof=1)) if n > 1 else 0.0
    boot = None
    if bootstrap > 0:
        gen = np.random.default_rng(rng)
        means = diff[gen.integers(0, n, size=(bootstrap, n))].mean(axis=1)
        lo, hi = np.quantile(means, [0.5 - level / 2.0, 0.5 + level / 2.0])
        boot = ConfidenceInterval(t.estimate, float(lo), float(hi), level, n)
    return PairedContrast(t.estimate, sd, n, level, t, boot)


# ----------------------------------------------------------------------------------------------
# Multi-player tables reduced to candidate-vs-champion head-to-head scores
# ----------------------------------------------------------------------------------------------


def head_to_head(candidate: float, champion: float) -> float:
    """One table's head-to-head score of the candidate against the champion: 1, 0.5 or 0.

    A table of 3–8 players is reduced to the one comparison the gate cares about: did the
    candidate do better than the champion *at this table*? Pass the candidate's and the
    champion's figure at the table — win share (a shared win counts its share), or the negated
    placement, or the score where higher is better; when several seats hold the same model, pass
    their mean. Higher wins (1.0), equal is a tie (0.5), lower loses (0.0). The scores are then
    Bernoulli/trinomial per table (or pentanomial per seat-swapped pair of tables), so the Elo
    figures and SPRT apply unchanged, measuring "the candidate beats the champion at a table".
    """
    if not (math.isfinite(candidate) and math.isfinite(champion)):
        raise ValueError(f"table results must be finite, got {(candidate, champion)!r}")
    return 1.0 if candidate > champion else 0.5 if candidate == champion else 0.0


def wdl_counts(scores: Sequence[float]) -> tuple[int, int, int]:
    """(wins, draws, losses) of head-to-head scores, each 1, 0.5 or 0."""
    counts = [0, 0, 0]
    for s in scores:
        if s not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game score must be 0, 0.5 or 1, got {s!r}")
        counts[int(2 * s)] += 1
    return counts[2], counts[1], counts[0]


def pentanomial_counts(pair_scores: Sequence[float]) -> tuple[int, int, int, int, int]:
    """Counts of game-pair scores 0, 0.5, 1, 1.5, 2 (low to high, fishtest's order)."""
    counts = [0] * 5
    for s in pair_scores:
        if s not in (0.0, 0.5, 1.0, 1.5, 2.0):
            raise ValueError(f"a game-pair score must be 0, 0.5, 1, 1.5 or 2, got {s!r}")
        counts[int(2 * s)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]
