"""Confidence intervals for evaluation figures (win rates, fair shares, mean returns and scores).

The arena (:mod:`omega_cluster.eval.arena`) summarizes per-game values with these helpers; the
gatekeeper and the rating code build on them (paired contrasts and SPRT come later, here).

* :func:`mean_ci` — Student-t interval on the mean of i.i.d. per-game values. The t quantile (not the
  normal one) matters for the short matches a gate may stop at: with 10 games the 95% quantile is
  2.26, not 1.96.
* :func:`wilson_interval` — Wilson score interval for a proportion (Wilson 1927). Unlike the normal
  ("Wald") interval it stays inside [0, 1] and is not degenerate at 0 or n wins. Win shares may be
  fractional (tied winners share a win), which the formula accepts as is.

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

__all__ = ["ConfidenceInterval", "mean_ci", "normal_quantile", "t_quantile", "wilson_interval"]

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
