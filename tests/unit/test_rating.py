"""Ratings (eval/rating.py): the Elo chain and its anchors, Bradley–Terry, OpenSkill."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.optimize

from omega_cluster.eval.rating import (
    DEFAULT_ANCHORS,
    AnchorResult,
    anchored_rating,
    anchors_due,
    bradley_terry,
    chain_start,
    openskill_ratings,
    promote,
)
from omega_cluster.eval.stats import ConfidenceInterval, score_from_elo


def test_chain_adds_gaps_and_their_errors_in_quadrature() -> None:
    root = chain_start("v0")
    assert root.elo == DEFAULT_ANCHORS["ensign"] == 1000.0 and root.half_width == 0.0
    v1 = promote(root, "v1", ConfidenceInterval(50.0, 20.0, 80.0, 0.95, 400), games=400)
    v2 = promote(v1, "v2", ConfidenceInterval(40.0, 0.0, 80.0, 0.95, 600), games=600)
    assert (v1.elo, v1.low, v1.high, v1.parent) == (1050.0, 1020.0, 1080.0, "v0")
    assert v2.elo == 1090.0 and v2.half_width == pytest.approx(50.0)  # hypot(30, 40)
    assert v2.parent == "v1" and v2.games == 600
    with pytest.raises(ValueError, match="finite Elo gap"):
        promote(v2, "v3", ConfidenceInterval(math.inf, 100.0, math.inf, 0.95, 20), games=20)


def test_anchored_rating_recovers_the_rating_that_the_scores_imply() -> None:
    """Scores at exactly the expected score of R = 1300 against each officer give R = 1300; the
    profile-likelihood interval contains it, and shrinks as 1/sqrt(games)."""

    def games(per_anchor: int) -> list[tuple[float, float]]:
        out = []
        for rating in DEFAULT_ANCHORS.values():
            p = score_from_elo(1300.0 - rating)
            out += [(rating, p)] * per_anchor  # a fractional score: the expected one
        return out

    small, large = anchored_rating(games(25)), anchored_rating(games(400))
    for fit in (small, large):
        assert fit.rating == pytest.approx(1300.0, abs=1e-6) and not fit.clamped
        assert fit.low < 1300.0 < fit.high
    assert large.games == 1200 and small.level == 0.95
    ratio = (small.high - small.low) / (large.high - large.low)
    assert ratio == pytest.approx(4.0, rel=0.05)  # 16 x the games: a quarter of the width
    # against one anchor at 1200 with 60 % of 200 games: R = 1200 + 400 log10(1.5)
    one = anchored_rating([(1200.0, 1.0)] * 120 + [(1200.0, 0.0)] * 80)
    assert one.rating == pytest.approx(1200.0 + 400.0 * math.log10(1.5), abs=1e-6)
    wald = 1.96 * 400 / math.log(10) / math.sqrt(200 * 0.6 * 0.4)  # the Wald half width
    assert (one.high - one.low) / 2 == pytest.approx(wald, rel=0.03)


def test_anchored_rating_of_a_perfect_record_is_clamped_and_flagged() -> None:
    wins = anchored_rating([(1000.0, 1.0)] * 20 + [(1400.0, 1.0)] * 20)
    assert wins.clamped and wins.rating == pytest.approx(2200.0) and wins.high == wins.rating
    assert 1400.0 < wins.low < 2200.0  # the data still bound it from below
    losses = anchored_rating([(1000.0, 0.0)] * 10)
    assert losses.clamped and losses.rating == pytest.approx(200.0) and losses.high < 1000.0
    assert not anchored_rating([(1000.0, 1.0), (1000.0, 0.0)]).clamped
    with pytest.raises(ValueError, match="at least one game"):
        anchored_rating([])
    with pytest.raises(ValueError, match=r"scores in \[0, 1\]"):
        anchored_rating([(1000.0, 1.5)])


def test_anchor_result_lists_its_games_for_the_fit() -> None:
    r = AnchorResult("3", "commander", 3, 2, 1, table="players=2,objective=points", kind="search")
    assert r.objective == "points" and r.score == pytest.approx(4 / 6)
    assert sorted(r.games(1400.0)) == [(1400.0, 0.0), *[(1400.0, 0.5)] * 2, *[(1400.0, 1.0)] * 3]


def test_anchors_due_every_k_promotions() -> None:
    assert [anchors_due(n, 3) for n in range(7)] == [False, False, False, True, False, False, True]
    with pytest.raises(ValueError, match=">= 1"):
        anchors_due(3, 0)


def _simulate_pairs(true: np.ndarray, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = len(true)
    wins, draws = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            p = score_from_elo(true[i] - true[j])
            d = 0.4 * min(p, 1 - p)  # draws, fewer when the gap is wide
            w, dr, l = rng.multinomial(games, [p - d / 2, d, 1 - p - d / 2])
            wins[i, j], wins[j, i], draws[i, j], draws[j, i] = w, l, dr, dr
    return wins, draws


def test_bradley_terry_recovers_six_known_ratings_within_two_standard_errors() -> None:
    """Measures recovery: 6 players at known Elo (anchor p0 = 0), 200 games per pair with draws;
    every estimate must lie within 2 of its standard errors of the truth (fixed seed), and the
    standard errors must be of the size binomial noise predicts (10–30 Elo here)."""
    true = np.array([0.0, 150.0, -100.0, 300.0, 50.0, -250.0])
    wins, draws = _simulate_pairs(true, 200, seed=3)
    names = [f"p{i}" for i in range(6)]
    fit = bradley_terry(names, wins, draws, anchor="p0")
    assert fit.elo[0] == 0.0 and fit.stderr[0] == 0.0
    for est, se, t in zip(fit.elo[1:], fit.stderr[1:], true[1:], strict=True):
        assert 10.0 < se < 30.0
        assert abs(est - t) <= 2.0 * se, (est, t, se)
    diff, se = fit.difference("p3", "p5")
    assert abs(diff - 550.0) <= 2.0 * se
    assert bradley_terry(names, wins, draws, anchor="p2", anchor_elo=1200.0).rating("p2") == 1200.0


def test_bradley_terry_is_the_likelihood_maximum_with_fisher_standard_errors() -> None:
    """Cross-check against scipy: the same likelihood maximized by BFGS, and standard errors
    from a finite-difference Hessian of it."""
    true = np.array([0.0, 80.0, -40.0, 120.0])
    wins, draws = _simulate_pairs(true, 60, seed=8)
    fit = bradley_terry(["a", "b", "c", "d"], wins, draws, prior_draws=0.0)
    score = wins + draws / 2
    scale = 400 / math.log(10)

    def nll(free: np.ndarray) -> float:
        r = np.concatenate([[0.0], free]) / scale
        p = 1 / (1 + np.exp(-(r[:, None] - r[None, :])))
        np.fill_diagonal(p, 0.5)
        return float(-np.sum(score * np.log(p)))

    best = scipy.optimize.minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-9})
    assert fit.elo[1:] == pytest.approx(best.x, abs=0.05)
    h, x0, n = 1e-2, np.array(fit.elo[1:]), 3
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            hess[i, j] = (
                nll(x0 + e_i + e_j)
                - nll(x0 + e_i - e_j)
                - nll(x0 - e_i + e_j)
                + nll(x0 - e_i - e_j)
            ) / (4 * h * h)
    assert fit.stderr[1:] == pytest.approx(np.sqrt(np.diag(np.linalg.inv(hess))), rel=1e-3)


def test_bradley_terry_bad_input() -> None:
    w = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]])
    with pytest.raises(ValueError, match=r"no path to \['c'\]"):
        bradley_terry(["a", "b", "c"], w)
    with pytest.raises(ValueError, match="no results"):
        bradley_terry(["a", "b"], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="2x2 matrices"):
        bradley_terry(["a", "b"], w)
    with pytest.raises(ValueError, match="anchor 'z' is not among"):
        bradley_terry(["a", "b"], [[0, 1], [1, 0]], anchor="z")
    with pytest.raises(ValueError, match="prior_draws > 0"):
        bradley_terry(["a", "b"], [[0, 5], [0, 0]], prior_draws=0.0)
    perfect = bradley_terry(["a", "b"], [[0, 5], [0, 0]])  # the prior keeps it finite
    assert -1000.0 < perfect.rating("b") < 0.0
    with pytest.raises(KeyError, match="unknown player 'q'"):
        perfect.rating("q")


def test_openskill_orders_players_by_strength_from_multiplayer_tables() -> None:
    """Measures ordering: 5 players of increasing strength seated 4 at a time for 300 tables,
    finishing order drawn Plackett–Luce style; the ordinals must sort them by strength."""
    rng = np.random.default_rng(9)
    names, strength = ["e", "d", "c", "b", "a"], np.array([1.0, 1.5, 2.2, 3.0, 4.5])
    tables, ranks = [], []
    for _ in range(300):
        seats = rng.choice(5, size=4, replace=False)
        order = []  # sample a finishing order: next place chosen proportional to strength
        left = list(seats)
        while left:
            w = strength[left] / strength[left].sum()
            order.append(left.pop(int(rng.choice(len(left), p=w))))
        tables.append([names[i] for i in seats])
        ranks.append([order.index(i) + 1 for i in seats])
    rated = openskill_ratings(tables, ranks)
    ordinals = [rated[n].ordinal for n in names]
    assert ordinals == sorted(ordinals)
    assert all(r.sigma < 25 / 3 for r in rated.values())  # uncertainty shrank from the prior
    again = openskill_ratings([["a", "e"]], [[1, 2]], initial=rated)
    assert again["a"].mu > rated["a"].mu and again["e"].mu < rated["e"].mu


def test_openskill_bad_input() -> None:
    with pytest.raises(ValueError, match="distinct players"):
        openskill_ratings([["a", "a"]], [[1, 2]])
    with pytest.raises(ValueError, match="one rank each"):
        openskill_ratings([["a", "b"]], [[1]])
    with pytest.raises(ValueError, match="no tables"):
        openskill_ratings([], [])


def test_anchor_result_paired_interval_is_a_t_interval_over_deals() -> None:
    result = AnchorResult("v3", "heuristic", 5, 2, 3, (1.0, 0.5, 0.75, 0.25, 0.5))
    ci = result.paired_interval()
    assert ci.n == 5 and ci.estimate == pytest.approx(0.6)
    # t(0.975, 4) = 2.776; sample sd of the five deal scores = 0.2850
    assert ci.high - ci.estimate == pytest.approx(2.776 * 0.2850 / 5**0.5, rel=1e-3)
    with pytest.raises(ValueError, match="2 deals"):
        AnchorResult("v3", "heuristic", 1, 0, 0, (1.0,)).paired_interval()
