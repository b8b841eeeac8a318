"""Ratings: the Elo chain of champions, Bradley–Terry over all pairwise results, and OpenSkill.

The gate (:mod:`omega_cluster.eval.gate`) measures each promoted candidate's gap over its parent;
this module turns those gaps into ratings the service logs (one :class:`EloRow` per promotion,
the Elo log) and [Service] plots (:mod:`omega_cluster.eval.report`).

* The **Elo chain** (:func:`chain_start`, :func:`promote`): each promotion adds the measured gap to
  the parent's rating, so the ladder is a sum of head-to-head gaps. Errors and the winners' curse
  (a gate promotes the lucky) add up along a chain, so it is not a rating by itself.
* The **anchored rating** (:func:`anchored_rating`): each champion plays fixed anchors of fixed
  ratings — Ensign 1000, Lieutenant 1200, Commander 1400 by default — and its rating is the
  maximum-likelihood Elo against them, with a profile-likelihood interval; no chain, so no error
  carries over from one champion to the next.
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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from openskill.models import PlackettLuce

from omega_cluster.eval.stats import ConfidenceInterval, mean_ci, normal_quantile

__all__ = [
    "DEFAULT_ANCHORS",
    "AnchorResult",
    "AnchoredRating",
    "BradleyTerryFit",
    "EloRow",
    "SkillRating",
    "anchored_rating",
    "anchors_due",
    "bradley_terry",
    "chain_start",
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
    table: str = ""  # the slice key of the table (players=N,objective=O)
    kind: str = ""  # how the champion played: network (greedy policy) | search
    fair_share: float = math.nan  # mean win share x players (1.0: par at the table)
    # per game, the champion's score against the anchor's seats, one comparison per seat (1 if
    # its win share is higher, 0.5 if equal), averaged: 0.5 is par at any table size (empty:
    # the wins/draws/losses are that score)
    game_scores: tuple[float, ...] = ()
    # the champion's mean fair share on each deal over its seat rotations, in deal order (empty:
    # not recorded): the sample of :meth:`fair_share_interval`
    deal_fair_shares: tuple[float, ...] = ()

    @property
    def objective(self) -> str:
        return self.table.partition("objective=")[2]

    @property
    def score(self) -> float:
        if self.game_scores:
            return sum(self.game_scores) / len(self.game_scores)
        return (self.wins + 0.5 * self.draws) / max(1, self.wins + self.draws + self.losses)

    def games(self, rating: float) -> list[tuple[float, float]]:
        """(anchor rating, score) per game, for :func:`anchored_rating`."""
        if self.game_scores:
            return [(rating, s) for s in self.game_scores]
        return (
            [(rating, 1.0)] * self.wins
            + [(rating, 0.5)] * self.draws
            + [(rating, 0.0)] * self.losses
        )

    def paired_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Student-t interval on the mean per-deal score (duplicate scoring, as fishtest's
        pentanomial model for game pairs): the games of one deal share its luck, so deals, not
        games, are the independent sample. A deal that favours one *seat* gives the champion one
        win and one loss whichever player it is (the interval narrows below the per-game Wilson
        interval); a deal that favours one *player* in both seats (the champion wins or loses
        both) widens it. Which kind wins depends on the game and the pair of players."""
        if len(self.deal_scores) < 2:
            raise ValueError(f"a paired interval needs >= 2 deals, got {len(self.deal_scores)}")
        return mean_ci(self.deal_scores, level)

    def fair_share_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Student-t interval on the mean per-deal fair share (1.0: par at the table), deals
        the independent sample as in :meth:`paired_interval`."""
        if len(self.deal_fair_shares) < 2:
            raise ValueError(f"a fair-share interval needs >= 2 deals, got "
                             f"{len(self.deal_fair_shares)}")  # fmt: skip
        return mean_ci(self.deal_fair_shares, level)


@dataclass(frozen=True)
class AnchoredRating:
    """A champion's rating with the anchors' ratings held fixed (:func:`anchored_rating`)."""

    rating: float  # maximum-likelihood Elo on the anchors' scale
    low: float  # profile-likelihood interval at ``level``
    high: float
    level: float
    games: int
    clamped: bool  # the rating or an end of its interval is at the clamp (anchored_rating)


def anchored_rating(
    games: Iterable[tuple[float, float]], *, level: float = 0.95, reach: float = 800.0
) -> AnchoredRating:
    """The Elo R that best explains a champion's scores against fixed anchors.

    ``games``: (anchor rating, score in [0, 1]) per game. The model: the expected score against
    anchor a is E_a(R) = 1 / (1 + 10^((r_a - R)/400)); R maximises the log-likelihood
    sum s log E + (1 - s) log(1 - E) (a draw is half a win). The interval is the profile
    likelihood's: every R whose log-likelihood is within z^2/2 of the best (z the normal
    quantile of ``level``), which stays right when the record is lopsided (a Wald interval from
    the Fisher information is symmetric and too short there). R and the interval stay inside
    ``reach`` Elo of the anchors; ``clamped`` says that R or an end of the interval sits at that
    bound (a perfect record, whose likelihood rises without end, always does; so do few games
    against anchors far from R): the data alone would put it further out.
    """
    pairs = np.array([(float(a), float(s)) for a, s in games], dtype=float).reshape(-1, 2)
    if len(pairs) == 0:
        raise ValueError("an anchored rating needs at least one game")
    if not np.all(np.isfinite(pairs)) or np.any((pairs[:, 1] < 0) | (pairs[:, 1] > 1)):
        raise ValueError("anchor ratings must be finite and scores in [0, 1]")
    anchor, score = pairs[:, 0], pairs[:, 1]
    lo, hi = float(anchor.min() - reach), float(anchor.max() + reach)

    def loglik(r: float) -> float:
        x = (anchor - r) / _ELO_PER_NAT  # E = 1 / (1 + e^x)
        return float(-np.sum(score * np.logaddexp(0.0, x) + (1 - score) * np.logaddexp(0.0, -x)))

    def slope(r: float) -> float:  # d loglik / dR, up to a positive factor: falls as R rises
        return float(np.sum(score - 1.0 / (1.0 + np.exp((anchor - r) / _ELO_PER_NAT))))

    best = _bisect(lambda r: slope(r) > 0.0, lo, hi)
    cut = loglik(best) - normal_quantile(0.5 + level / 2.0) ** 2 / 2.0
    low_out, high_out = loglik(lo) >= cut, loglik(hi) >= cut  # the interval reaches the bound
    low = lo if low_out else _bisect(lambda r: loglik(r) < cut, lo, best)
    high = hi if high_out else _bisect(lambda r: loglik(r) >= cut, best, hi)
    return AnchoredRating(best, low, high, level, len(pairs), low_out or high_out)


def _bisect(below: Callable[[float], bool], lo: float, hi: float) -> float:
    """The point of [lo, hi] where ``below`` turns from true to false (it must change once)."""
    for _ in range(60):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if below(mid) else (lo, mid)
    return (lo + hi) / 2.0


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
