"""Ratings: the Elo chain of champions, Bradley–Terry over all pairwise results, and OpenSkill.

The gate (:mod:`omega_cluster.eval.gate`) measures each promoted candidate's gap over its parent;
this module turns those gaps into ratings the service logs (one :class:`EloRow` per promotion,
the Elo log) and [Service] plots (:mod:`omega_cluster.eval.report`).

* The **Elo chain** (:func:`chain_start`, :func:`promote`): each promotion adds the measured gap to
  the parent's rating, so the ladder is a sum of head-to-head gaps.
  Errors add up along a chain (intransitivity too), so it is pinned to fixed **anchors** —
  Ensign 1000, Lieutenant 1200, Commander 1400 by default (the rule-based players) — by
  re-measuring a champion against them every few promotions (:func:`anchors_due`) and shifting
  the whole chain by the inverse-variance weighted offset (:func:`fit_anchor_offset`).
* **Bradley–Terry** (:func:`bradley_terry`): maximum likelihood over every pairwise result (a draw
  is half a win), Newton's method, standard errors from the observed Fisher information (the
  inverse Hessian of the log-likelihood), on the Elo scale with one player fixed — the approach of
  KataGo's ``python/elo.py``, including its prior games so a perfect record stays finite.
* **OpenSkill** (:func:`openskill_ratings`): Plackett–Luce ratings from whole multi-player
  tables (a finishing order per table) through the ``openskill`` package; mu, sigma and the
  conservative ordinal mu - 3 sigma.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from openskill.models import PlackettLuce

from omega_cluster.eval.stats import ConfidenceInterval, elo_interval, mean_ci, normal_quantile

__all__ = [
    "DEFAULT_ANCHORS",
    "AnchorFit",
    "AnchorResult",
    "BradleyTerryFit",
    "EloRow",
    "SkillRating",
    "anchors_due",
    "bradley_terry",
    "chain_start",
    "fit_anchor_offset",
    "openskill_ratings",
    "promote",
]

DEFAULT_ANCHORS: Mapping[str, float] = {"ensign": 1000.0, "lieutenant": 1200.0, "commander": 1400.0}
_ELO_PER_NAT = 400.0 / math.log(10.0)  # Elo points per unit of the logistic's natural scale


# ----------------------------------------------------------------------------------------------
# The Elo chain of champions
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EloRow:
    """One row of the Elo log: a champion's rating."""

    version: str  # the champion's model version
    parent: str | None  # the champion it was measured against (None for the first)
    elo: float  # rating on the anchors' scale
    low: float  # interval on the rating (the chain's errors added in quadrature)
    high: float
    level: float  # coverage of [low, high]
    games: int  # games behind the gap that placed it

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2.0


def chain_start(
    version: str, elo: float = DEFAULT_ANCHORS["ensign"], *, level: float = 0.95
) -> EloRow:
    """The first champion's row, at ``elo`` (by default level with the weakest anchor) until
    :func:`fit_anchor_offset` places it from measured games."""
    return EloRow(version, None, elo, elo, elo, level, 0)


def promote(parent: EloRow, version: str, gap: ConfidenceInterval, games: int) -> EloRow:
    """The row of ``version``, promoted over ``parent`` with measured Elo ``gap`` (e.g. the
    gate's ``GateDecision.elo_gap``). The gap's and the parent's half widths add in quadrature:
    the matches are independent."""
    if not all(map(math.isfinite, (gap.estimate, gap.low, gap.high))):
        raise ValueError(
            f"a promotion needs a finite Elo gap and interval, got {gap}; a perfect record has "
            "no finite gap: play more games or use bradley_terry (its prior keeps it finite)"
        )
    if games < 0:
        raise ValueError(f"games must be >= 0, got {games!r}")
    elo = parent.elo + gap.estimate
    below = math.hypot(parent.elo - parent.low, gap.estimate - gap.low)
    above = math.hypot(parent.high - parent.elo, gap.high - gap.estimate)
    return EloRow(version, parent.version, elo, elo - below, elo + above, gap.level, games)


def anchors_due(promotions: int, every: int) -> bool:
    """Whether the anchors should be re-measured after ``promotions`` promotions (every K)."""
    if every < 1:
        raise ValueError(f"re-measure interval must be >= 1 promotion, got {every!r}")
    return promotions > 0 and promotions % every == 0


@dataclass(frozen=True)
class AnchorResult:
    """A champion's record against one fixed anchor (wins/draws/losses from its side).

    ``deal_scores``: the champion's mean score on each deal over its seat rotations (the bench
    plays every deal once per seat), in deal order; empty when not recorded. Deals, not games,
    are then the independent sample: see :meth:`paired_interval`.
    """

    version: str
    anchor: str
    wins: int
    draws: int
    losses: int
    deal_scores: tuple[float, ...] = ()

    def paired_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Student-t interval on the mean per-deal score (duplicate scoring, as fishtest's
        pentanomial model for game pairs): the games of one deal share its luck, so deals, not
        games, are the independent sample. A deal that favours one *seat* gives the champion one
        win and one loss whichever player it is (the interval narrows below the per-game Wilson
        interval); a deal that favours one *player* in both seats (the champion wins or loses
        both) widens it. Measured on Mexican Train 2p, champion vs Commander: 0.565 [0.491,
        0.639] by deal, Wilson [0.496, 0.632] over the same 200 games: the second kind wins."""
        if len(self.deal_scores) < 2:
            raise ValueError(f"a paired interval needs >= 2 deals, got {len(self.deal_scores)}")
        return mean_ci(self.deal_scores, level)


@dataclass(frozen=True)
class AnchorFit:
    """The chain shifted onto the anchors' scale."""

    offset: float  # Elo added to every row
    stderr: float  # standard error of the offset
    rows: tuple[EloRow, ...]  # the chain after the shift
    used: int  # anchor results that entered the fit (perfect records carry no finite gap)


def fit_anchor_offset(
    rows: Sequence[EloRow],
    results: Iterable[AnchorResult],
    anchors: Mapping[str, float] = DEFAULT_ANCHORS,
    *,
    level: float = 0.95,
) -> AnchorFit:
    """Shift the chain so its champions agree with their measured records against the anchors.

    Each result implies a rating anchor + gap for its champion; the offset is the inverse-variance
    weighted mean of (implied - chain rating), each variance from the gap's interval. Only the
    offset is fitted: the chain's internal gaps stay as measured.
    """
    by_version = {row.version: row for row in rows}
    z = normal_quantile(0.5 + level / 2.0)
    weighted, weights, used = 0.0, 0.0, 0
    for r in results:
        if r.anchor not in anchors:
            raise ValueError(f"unknown anchor {r.anchor!r}; known: {', '.join(sorted(anchors))}")
        if r.version not in by_version:
            raise ValueError(f"anchor result for {r.version!r}, which is not in the chain")
        gap = elo_interval(r.wins, r.draws, r.losses, level)
        if not all(map(math.isfinite, (gap.estimate, gap.low, gap.high))):
            continue  # a perfect record bounds the gap on one side only
        se = max((gap.high - gap.low) / (2.0 * z), 1e-9)
        weighted += (anchors[r.anchor] + gap.estimate - by_version[r.version].elo) / se**2
        weights += 1.0 / se**2
        used += 1
    if used == 0:
        raise ValueError(
            "no anchor result with a finite Elo gap (need a record that is not 0 or n)"
        )
    offset = weighted / weights
    shifted = tuple(
        replace(row, elo=row.elo + offset, low=row.low + offset, high=row.high + offset)
        for row in rows
    )
    return AnchorFit(offset, 1.0 / math.sqrt(weights), shifted, used)


# ----------------------------------------------------------------------------------------------
# Bradley–Terry maximum likelihood
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BradleyTerryFit:
    """Maximum-likelihood Elo ratings with standard errors (relative to the anchor)."""

    players: tuple[str, ...]
    elo: tuple[float, ...]  # rating per player; the anchor's is fixed
    stderr: tuple[float, ...]  # standard error per player relative to the anchor (anchor: 0)
    anchor: str
    covariance: np.ndarray = field(compare=False, repr=False)  # float[P, P], Elo², anchor row 0

    def rating(self, player: str) -> float:
        return self.elo[self._index(player)]

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Elo of ``a`` minus ``b`` and its standard error (from the full covariance)."""
        i, j = self._index(a), self._index(b)
        c = self.covariance
        return self.elo[i] - self.elo[j], math.sqrt(max(0.0, c[i, i] + c[j, j] - 2 * c[i, j]))

    def _index(self, player: str) -> int:
        if player not in self.players:
            raise KeyError(f"unknown player {player!r}; rated: {', '.join(self.players)}")
        return self.players.index(player)


def _check_pairwise(
    players: Sequence[str], wins: np.ndarray, draws: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    n = len(players)
    if n < 2 or len(set(players)) != n:
        raise ValueError(f"need at least two distinct players, got {list(players)!r}")
    if wins.shape != (n, n) or draws.shape != (n, n):
        raise ValueError(
            f"wins and draws must be {n}x{n} matrices, got {wins.shape}, {draws.shape}"
        )
    if np.any(wins < 0) or np.any(draws < 0) or not np.allclose(draws, draws.T):
        raise ValueError("wins must be >= 0 and draws >= 0 and symmetric")
    games = wins + wins.T + draws
    np.fill_diagonal(games, 0.0)
    if games.sum() == 0:
        raise ValueError("no results: every pair has zero games")
    reached, frontier = {0}, [0]  # the likelihood pins ratings only within a connected graph
    while frontier:
        i = frontier.pop()
        for j in np.flatnonzero(games[i] > 0):
            if int(j) not in reached:
                reached.add(int(j))
                frontier.append(int(j))
    if len(reached) < n:
        cut = [players[i] for i in range(n) if i not in reached]
        raise ValueError(f"results do not connect every player: no path to {cut}")
    return wins + draws / 2.0, games


def bradley_terry(
    players: Sequence[str],
    wins: np.ndarray | Sequence[Sequence[float]],
    draws: np.ndarray | Sequence[Sequence[float]] | None = None,
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    prior_draws: float = 1.0,
    max_iterations: int = 100,
) -> BradleyTerryFit:
    """Bradley–Terry ratings from ``wins[i][j]`` (games i won against j) and ``draws[i][j]``.

    P(i beats j) = 1 / (1 + 10^(-(elo_i - elo_j)/400)), a draw counting half a win for each.
    ``prior_draws`` virtual draws are added to every pair that met (KataGo's ``elo.py`` adds
    prior games likewise) so that a player who won every game still has a finite rating; 0 gives
    the pure MLE, which then may not exist. ``anchor`` (default: the first player) is fixed at
    ``anchor_elo``; standard errors are relative to it.
    """
    w = np.asarray(wins, dtype=float)
    d = np.zeros_like(w) if draws is None else np.asarray(draws, dtype=float)
    score, games = _check_pairwise(players, w, d)
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws!r}")
    met = games > 0
    score, games = score + met * prior_draws / 2.0, games + met * prior_draws
    fixed = 0 if anchor is None else list(players).index(anchor) if anchor in players else -1
    if fixed < 0:
        raise ValueError(f"anchor {anchor!r} is not among the players {list(players)!r}")
    free = np.array([i for i in range(len(players)) if i != fixed])
    r = np.zeros(len(players))  # natural (logistic) units
    for _ in range(max_iterations):
        grad, hess = _bt_derivatives(r, score, games)
        step = np.linalg.solve(hess[np.ix_(free, free)], -grad[free])
        r[free] += step
        if np.max(np.abs(r)) > 50.0:  # 50 nats ≈ 8700 Elo: the MLE does not exist
            raise ValueError(
                "Bradley–Terry diverged: a player won or lost every game; use prior_draws > 0"
            )
        if np.max(np.abs(step)) < 1e-10:
            break
    else:
        raise ValueError(f"Bradley–Terry did not converge in {max_iterations} Newton steps")
    _, hess = _bt_derivatives(r, score, games)
    cov = np.zeros((len(players), len(players)))
    cov[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)]) * _ELO_PER_NAT**2
    elo = (r - r[fixed]) * _ELO_PER_NAT + anchor_elo
    return BradleyTerryFit(
        players=tuple(players),
        elo=tuple(float(e) for e in elo),
        stderr=tuple(float(math.sqrt(c)) for c in np.diag(cov)),
        anchor=players[fixed],
        covariance=cov,
    )


def _bt_derivatives(
    r: np.ndarray, score: np.ndarray, games: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Hessian of the Bradley–Terry log-likelihood in natural units."""
    p = 1.0 / (1.0 + np.exp(-(r[:, None] - r[None, :])))  # P(i beats j)
    grad = np.sum(score - games * p, axis=1)
    info = games * p * (1.0 - p)
    hess = info.copy()
    np.fill_diagonal(hess, -info.sum(axis=1))
    return grad, hess


# ----------------------------------------------------------------------------------------------
# OpenSkill (Plackett–Luce) for multi-player tables
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillRating:
    """A Plackett–Luce rating: skill mean and uncertainty (openskill's default scale, mu0 = 25)."""

    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """The conservative rating mu - 3 sigma (openskill's ``ordinal``) used to rank."""
        return self.mu - 3.0 * self.sigma


def openskill_ratings(
    tables: Iterable[Sequence[str]],
    ranks: Iterable[Sequence[float]],
    *,
    initial: Mapping[str, SkillRating] | None = None,
) -> dict[str, SkillRating]:
    """Rate players from finishing orders of multi-player tables, one table after another.

    ``tables[k]`` lists the players at table k (each once: give each seat's copy of a model its
    own name, or rate the model's best seat); ``ranks[k]`` their placements, lower is better,
    equal for a tie. Each player is a team of one in openskill's Plackett–Luce model.
    """
    model = PlackettLuce()
    current = {
        name: model.rating(mu=r.mu, sigma=r.sigma, name=name) for name, r in (initial or {}).items()
    }
    count = 0
    for seats, places in zip(tables, ranks, strict=True):
        if len(seats) < 2 or len(set(seats)) != len(seats) or len(places) != len(seats):
            raise ValueError(
                f"a table needs >= 2 distinct players and one rank each, got {seats!r} {places!r}"
            )
        teams = [[current.get(name) or model.rating(name=name)] for name in seats]
        for (rated,), name in zip(model.rate(teams, ranks=list(places)), seats, strict=True):
            current[name] = rated
        count += 1
    if count == 0:
        raise ValueError("no tables to rate")
    return {name: SkillRating(float(r.mu), float(r.sigma)) for name, r in current.items()}
