"""Intervals, Elo from scores, paired contrasts and the multi-player reduction (eval/stats.py).

scipy is used only here, to cross-check the numpy/closed-form code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from omega_cluster.eval.stats import (
    elo_from_score,
    elo_interval,
    head_to_head,
    mean_ci,
    paired_contrast,
    pentanomial_counts,
    score_from_elo,
    score_interval,
    wdl_counts,
    wilson_interval,
)


def test_elo_and_score_are_inverse_and_logistic() -> None:
    assert elo_from_score(0.5) == 0.0
    assert score_from_elo(400.0) == pytest.approx(10.0 / 11.0)  # 10:1 odds at +400
    for elo in (-600.0, -35.0, 0.0, 12.5, 300.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-9)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    with pytest.raises(ValueError, match=r"score must be in \[0, 1\]"):
        elo_from_score(1.2)


@pytest.mark.parametrize(("wins", "n"), [(0, 10), (3, 10), (10, 10), (57, 100), (1, 400)])
def test_score_interval_without_draws_is_wilson(wins: int, n: int) -> None:
    ci, wilson = score_interval(wins, 0, n - wins), wilson_interval(wins, n)
    assert (ci.low, ci.estimate, ci.high) == pytest.approx(
        (wilson.low, wilson.estimate, wilson.high)
    )


def test_score_interval_with_draws_solves_its_equation_and_is_narrower() -> None:
    """Draws carry less variance than a coin: same score, narrower interval; the bounds are the
    roots of (s - p)² = z²/n (p(1 - p) - δ/4)."""
    w, d, l = 40, 40, 20
    n, s, delta = 100, 0.6, 0.4
    ci = score_interval(w, d, l)
    z2 = scipy.stats.norm.ppf(0.975) ** 2
    for p in (ci.low, ci.high):
        assert (s - p) ** 2 == pytest.approx(z2 / n * (p * (1 - p) - delta / 4))
    wilson = wilson_interval(60, 100)
    assert ci.estimate == pytest.approx(0.6) and ci.low > wilson.low and ci.high < wilson.high


def test_elo_interval_maps_the_score_interval() -> None:
    ci = elo_interval(60, 20, 20)
    assert ci.estimate == pytest.approx(elo_from_score(0.7))
    assert ci.low < ci.estimate < ci.high and ci.n == 100
    perfect = elo_interval(50, 0, 0)
    assert perfect.estimate == math.inf and math.isfinite(perfect.low) and perfect.low > 0
    with pytest.raises(ValueError, match="no results"):
        elo_interval(0, 0, 0)
    with pytest.raises(ValueError, match=">= 0"):
        elo_interval(-1, 2, 3)


def test_paired_contrast_matches_scipy_t_interval_and_bootstrap_agrees() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.6, 0.3, 200), rng.normal(0.5, 0.3, 200)
    c = paired_contrast(a.tolist(), b.tolist(), rng=1)
    diff = a - b
    low, high = scipy.stats.t.interval(0.95, len(diff) - 1, diff.mean(), scipy.stats.sem(diff))
    assert (c.t_interval.low, c.t_interval.high) == pytest.approx((low, high), rel=1e-6)
    assert c.mean == pytest.approx(diff.mean()) and c.sd == pytest.approx(diff.std(ddof=1))
    assert c.n == 200 and c.bootstrap_interval is not None
    # with 200 roughly normal differences the bootstrap and t intervals nearly coincide
    assert c.bootstrap_interval.low == pytest.approx(low, abs=0.01)
    assert c.bootstrap_interval.high == pytest.approx(high, abs=0.01)
    assert paired_contrast([1.0], [0.0], bootstrap=0, rng=0).bootstrap_interval is None


def test_paired_contrast_bad_input() -> None:
    with pytest.raises(ValueError, match="equal lengths"):
        paired_contrast([1.0, 0.0], [1.0], rng=0)
    with pytest.raises(ValueError, match="at least one seed"):
        paired_contrast([], [], rng=0)
    with pytest.raises(ValueError, match="confidence level"):
        paired_contrast([1.0], [0.0], level=1.5, rng=0)
    with pytest.raises(ValueError, match="bootstrap"):
        paired_contrast([1.0], [0.0], bootstrap=-1, rng=0)


def test_paired_contrast_intervals_cover_the_true_difference_about_95_percent() -> None:
    """Measures coverage over 1,000 simulated experiments shaped like a paired strength study of
    two players on shared deals: 64 deal seeds, 4 slot-games each per player, a per-seed
    difficulty shared by A and B (win rate p_s ~ U(0.2, 0.6) for B, p_s + 0.1 for A), so the true
    contrast is exactly +0.1 and the per-seed data are discrete and not normal. A 95% interval should cover in ~95%:
    binomial SE over 1,000 is 0.007, so [0.93, 0.97] is about ±3 SE."""
    rng = np.random.default_rng(2024)
    experiments, seeds, slots, true = 1000, 64, 4, 0.1
    t_cover = boot_cover = 0
    for _ in range(experiments):
        p = rng.uniform(0.2, 0.6, seeds)
        a = rng.binomial(slots, p + true) / slots
        b = rng.binomial(slots, p) / slots
        c = paired_contrast(a, b, bootstrap=400, rng=rng)
        assert c.bootstrap_interval is not None
        t_cover += c.t_interval.contains(true)
        boot_cover += c.bootstrap_interval.contains(true)
    assert 0.93 <= t_cover / experiments <= 0.97
    assert 0.93 <= boot_cover / experiments <= 0.97


def test_head_to_head_reduction_and_counts() -> None:
    assert head_to_head(0.5, 0.0) == 1.0  # the candidate shared a win, the champion lost
    assert head_to_head(0.0, 0.0) == 0.5  # a third seat won: a tie between the two
    assert head_to_head(-3, -1) == 0.0  # negated placements: 3rd behind 1st
    with pytest.raises(ValueError, match="finite"):
        head_to_head(math.nan, 1.0)
    assert wdl_counts([1, 1, 0.5, 0]) == (2, 1, 1)
    assert pentanomial_counts([0, 2, 1.5, 1, 1]) == (1, 0, 2, 1, 1)
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        wdl_counts([0.7])
    with pytest.raises(ValueError, match="game-pair score"):
        pentanomial_counts([2.5])


def test_mean_ci_still_matches_scipy() -> None:
    values = [0.1, 0.4, 0.35, 0.8, 0.6]
    ci = mean_ci(values, 0.9)
    low, high = scipy.stats.t.interval(0.9, 4, np.mean(values), scipy.stats.sem(values))
    assert (ci.low, ci.high) == pytest.approx((low, high))
