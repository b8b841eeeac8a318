"""The gate: promote, reject or keep playing, from a candidate's results against the champion.

A pure decision, called by the gatekeeper ([Service]) after every round of bench games with all
results so far, one slice per table of the run (player count × objective). Each game counts from
the candidate's side as a head-to-head score — 1, 0.5 or 0, a multi-player table reduced by
:func:`omega_cluster.eval.stats.head_to_head` — and a slice may be *paired*: games (2i, 2i+1)
are one deal played twice with everything but the candidate fixed (the seat-swapped pair at 2
players; at N > 2 the candidate's game and 1 - the all-champion control's score:
:mod:`omega_cluster.eval.gate_bench`), so each deal's sum is a pentanomial pair value, par 1.

Two modes (:class:`GateConfig`):

* ``"fixed"`` — a fixed budget: play ``games_per_slice`` in every slice, then promote iff
  the candidate's aggregate score beats the champion's by more than ``margin``. Head to head the
  champion's score is 1 - S, so the rule is (S) - (1 - S) = 2S - 1 > margin (margin 0: beat it).
* ``"sprt"`` (the default) — fishtest / Leela Zero: a GSPRT of H0 "Elo ≤ elo0" against H1
  "Elo ≥ elo1" (:mod:`omega_cluster.eval.sprt`) over all slices pooled, pentanomial when every
  slice is paired, trinomial otherwise; it stops as soon as the evidence is clear. ``max_games``
  ends an undecided test with a rejection (the champion stays: never regress on a hunch). Its
  error rates are set by ``alpha`` and ``beta``, where a fixed budget's depend on the budget:
  ``bench/bench_sprt.py`` simulates both modes' promotion rates.

Both modes also refuse a candidate that is significantly worse in any one slice (its score
interval lies wholly below 0.5) — an aggregate must not hide a broken table. With k slices some
would look worse by chance, so this test runs each slice's interval at the Bonferroni level
1 - (1 - ``slice_level``) / k: a candidate truly no worse anywhere trips it with probability at
most (1 - slice_level) / 2 however many tables the fleet has (the reported intervals stay at
``slice_level``). And a candidate whose parent is older than the
current champion is rejected outright (KataGo's gatekeeper): it was trained from data that a
newer champion has superseded.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from omega_cluster.eval.sprt import sprt_bounds, sprt_llr
from omega_cluster.eval.stats import (
    ConfidenceInterval,
    elo_from_score,
    mean_ci,
    pentanomial_counts,
    score_from_elo,
    score_interval,
    wdl_counts,
)
from omega_cluster.fields import FieldChecks, FieldError

__all__ = [
    "GATE_MODES",
    "Contender",
    "GateConfig",
    "GateConfigError",
    "GateDecision",
    "SliceResults",
    "SliceSummary",
    "Verdict",
    "decide",
]

GATE_MODES = ("fixed", "sprt")


class GateConfigError(FieldError):
    """A :class:`GateConfig` field refused (naming the field, its value and what is allowed)."""


@dataclass(frozen=True)
class GateConfig:
    """How the gate decides. Validated on construction."""

    mode: str = "sprt"  # "fixed" (games per slice + margin) or "sprt"
    games_per_slice: int = 40  # fixed: games every slice must have before deciding
    margin: float = 0.0  # fixed: promote iff 2S - 1 (candidate's minus champion's score) > margin
    elo0: float = 0.0  # sprt: H0 "Elo gain <= elo0"
    elo1: float = 30.0  # sprt: H1 "Elo gain >= elo1"
    alpha: float = 0.025  # sprt: false-promotion rate at elo0
    beta: float = 0.1  # sprt: false-rejection rate at elo1
    slice_level: float = 0.95  # coverage of the per-slice intervals (worse: Bonferroni, docstring)
    require_no_worse_slice: bool = True  # reject if any slice is significantly below 0.5
    reject_stale: bool = True  # reject a candidate whose parent is older than the champion
    min_games: int = 0  # sprt: no decision before this many games in all
    max_games: int | None = 1000  # sprt: reject when this many games leave it undecided
    remeasure_anchors_every: int = 5  # promotions between anchor matches (rating.anchors_due)

    def __post_init__(self) -> None:
        check = FieldChecks(self, GateConfigError)
        check.choice("mode", GATE_MODES)
        check.integer("games_per_slice", 1)
        check.number("margin", -1.0, 1.0, open_high=True)  # a score difference
        check.number("elo0")
        check.number("elo1")
        if self.elo0 >= self.elo1:
            check.refuse("elo1", "must be > {elo0} (SPRT: H0 elo0 < H1 elo1)", elo0=self.elo0)
        for name in ("alpha", "beta"):  # the SPRT's error rates
            check.number(name, 0.0, 0.5, open_low=True, open_high=True)
        check.integer("min_games", 0)
        check.integer("max_games", 1, optional=True)
        if self.max_games is not None and self.max_games < self.min_games:
            check.refuse("max_games", "must be >= {min_games}", min_games=self.min_games)
        check.number("slice_level", 0.0, 1.0, open_low=True, open_high=True)
        check.integer("remeasure_anchors_every", 1)  # promotions


@dataclass(frozen=True)
class Contender:
    """A model in the gate: its version and the version it was trained (warm-started) from."""

    version: int  # model versions increase with time
    parent: int | None = None


@dataclass(frozen=True)
class SliceResults:
    """The candidate's head-to-head scores against the champion in one slice."""

    key: str  # e.g. "players=4,objective=points"
    scores: tuple[float, ...]  # per game or table: 1 win, 0.5 tie, 0 loss (candidate's side)
    paired: bool = False  # scores (2i, 2i+1) are one deal played from both seats

    def __post_init__(self) -> None:
        wdl_counts(self.scores)  # raises on a score other than 0, 0.5, 1
        if self.paired and len(self.scores) % 2:
            raise ValueError(f"slice {self.key!r} is paired but has an odd number of games")

    @classmethod
    def from_wdl(cls, key: str, wins: int, draws: int, losses: int) -> SliceResults:
        if min(wins, draws, losses) < 0:
            raise ValueError(f"wins, draws, losses must be >= 0, got {(wins, draws, losses)}")
        return cls(key, (1.0,) * wins + (0.5,) * draws + (0.0,) * losses)

    @property
    def games(self) -> int:
        return len(self.scores)

    @property
    def pair_scores(self) -> tuple[float, ...]:
        """Per-deal sums (0 … 2) of a paired slice."""
        if not self.paired:
            raise ValueError(f"slice {self.key!r} is not paired")
        return tuple(a + b for a, b in zip(self.scores[::2], self.scores[1::2], strict=True))


class Verdict(enum.Enum):
    PROMOTE = "promote"
    REJECT = "reject"
    CONTINUE = "continue"


@dataclass(frozen=True)
class SliceSummary:
    """One slice's figures, from the candidate's side."""

    key: str
    games: int
    wins: int
    draws: int
    losses: int
    score: ConfidenceInterval | None  # None with no games yet
    elo: ConfidenceInterval | None  # Elo gap over the champion in this slice
    significantly_worse: bool  # the score interval at the Bonferroni level lies below 0.5
    worse_test: ConfidenceInterval | None = None  # that interval (module docstring)


@dataclass(frozen=True)
class GateDecision:
    verdict: Verdict
    reason: str  # names the deciding slice, margin, interval or LLR
    slices: tuple[SliceSummary, ...]
    games: int  # games over all slices
    score: ConfidenceInterval | None  # aggregate candidate score (None with no games)
    elo_gap: ConfidenceInterval | None  # aggregate Elo gap of the candidate over the champion
    llr: float | None = None  # sprt mode only
    llr_bounds: tuple[float, float] | None = None  # (accept H0, accept H1)


def _score_interval(slices: Sequence[SliceResults], level: float) -> ConfidenceInterval | None:
    """Score interval of pooled slices: over deals (t) when all are paired, else Wilson+draws."""
    if sum(s.games for s in slices) == 0:
        return None
    if all(s.paired for s in slices):
        deals = [p / 2.0 for s in slices for p in s.pair_scores]
        if len(deals) > 1 and np.ptp(deals) > 0:
            ci = mean_ci(deals, level)
            return ConfidenceInterval(
                ci.estimate, max(0.0, ci.low), min(1.0, ci.high), level, 2 * len(deals)
            )
    w, d, l = wdl_counts([x for s in slices for x in s.scores])
    return score_interval(w, d, l, level)


def _elo(score: ConfidenceInterval | None) -> ConfidenceInterval | None:
    if score is None:
        return None
    return ConfidenceInterval(
        elo_from_score(score.estimate),
        elo_from_score(score.low),
        elo_from_score(score.high),
        score.level,
        score.n,
    )


def _summarize(s: SliceResults, level: float, slices: int) -> SliceSummary:
    w, d, l = wdl_counts(s.scores)
    score = _score_interval([s], level)
    test = _score_interval([s], 1.0 - (1.0 - level) / slices) if slices > 1 else score
    worse = test is not None and test.high < 0.5
    return SliceSummary(s.key, s.games, w, d, l, score, _elo(score), worse, test)


def decide(
    candidate: Contender,
    champion: Contender,
    results_by_slice: Sequence[SliceResults] | Mapping[str, SliceResults],
    config: GateConfig,
) -> GateDecision:
    """Promote, reject or continue, from all results so far (see the module docstring)."""
    slices = list(
        results_by_slice.values() if isinstance(results_by_slice, Mapping) else results_by_slice
    )
    if not slices:
        raise ValueError("the gate needs at least one slice of results")
    keys = [s.key for s in slices]
    if len(set(keys)) != len(keys):
        raise ValueError(
            f"duplicate slice keys: {sorted(k for k in set(keys) if keys.count(k) > 1)}"
        )
    summaries = tuple(_summarize(s, config.slice_level, len(slices)) for s in slices)
    score = _score_interval(slices, config.slice_level)
    games = sum(s.games for s in slices)

    def verdict(v: Verdict, reason: str, llr: float | None = None) -> GateDecision:
        bounds = sprt_bounds(config.alpha, config.beta) if llr is not None else None
        return GateDecision(v, reason, summaries, games, score, _elo(score), llr, bounds)

    if config.reject_stale and candidate.parent is not None and candidate.parent < champion.version:
        return verdict(
            Verdict.REJECT,
            f"stale candidate: v{candidate.version} was trained from v{candidate.parent}, "
            f"older than the champion v{champion.version}",
        )
    worse = [s for s in summaries if s.significantly_worse] if config.require_no_worse_slice else []
    if config.mode == "fixed":
        return _decide_fixed(summaries, score, worse, config, verdict)
    return _decide_sprt(slices, games, worse, config, verdict)


def _worse_reason(worse: Sequence[SliceSummary]) -> str:
    s = worse[0]
    ci = s.worse_test
    assert ci is not None
    return (
        f"slice {s.key} is significantly worse: score {ci.estimate:.3f} "
        f"[{ci.low:.3f}, {ci.high:.3f}] ({100 * ci.level:.4g}%) over {s.games} games lies below 0.5"
        + (f" (and {len(worse) - 1} more slices)" if len(worse) > 1 else "")
    )


def _decide_fixed(
    summaries: Sequence[SliceSummary],
    score: ConfidenceInterval | None,
    worse: Sequence[SliceSummary],
    config: GateConfig,
    verdict: Callable[..., GateDecision],
) -> GateDecision:
    short = [s for s in summaries if s.games < config.games_per_slice]
    if short:
        s = short[0]
        return verdict(
            Verdict.CONTINUE,
            f"slice {s.key} has {s.games} of {config.games_per_slice} games"
            + (f" ({len(short) - 1} more slices short)" if len(short) > 1 else ""),
        )
    if worse:
        return verdict(Verdict.REJECT, _worse_reason(worse))
    assert score is not None  # every slice has games_per_slice >= 1 games
    gain = 2.0 * score.estimate - 1.0
    detail = (
        f"aggregate score {score.estimate:.3f} [{score.low:.3f}, {score.high:.3f}] vs the "
        f"champion's {1.0 - score.estimate:.3f}: difference {gain:+.3f}"
    )
    if gain > config.margin:
        return verdict(Verdict.PROMOTE, f"{detail} > margin {config.margin:+.3f}")
    return verdict(Verdict.REJECT, f"{detail} <= margin {config.margin:+.3f}")


def _decide_sprt(
    slices: Sequence[SliceResults],
    games: int,
    worse: Sequence[SliceSummary],
    config: GateConfig,
    verdict: Callable[..., GateDecision],
) -> GateDecision:
    if games == 0 or games < config.min_games:
        return verdict(Verdict.CONTINUE, f"{games} of at least {config.min_games} games played")
    if all(s.paired for s in slices):
        model = "pentanomial"
        counts = np.sum([pentanomial_counts(s.pair_scores) for s in slices], axis=0)
    else:
        model = "trinomial"
        w, d, l = wdl_counts([x for s in slices for x in s.scores])
        counts = np.array([l, d, w])
    s0, s1 = score_from_elo(config.elo0), score_from_elo(config.elo1)
    llr = float(sprt_llr(counts, s0, s1))
    lower, upper = sprt_bounds(config.alpha, config.beta)
    test = (
        f"{model} SPRT LLR {llr:+.2f}, bounds [{lower:+.2f}, {upper:+.2f}] "
        f"(elo0={config.elo0:g}, elo1={config.elo1:g}) after {games} games"
    )
    if llr >= upper:
        if worse:
            return verdict(Verdict.REJECT, f"{test} accepts H1, but {_worse_reason(worse)}", llr)
        return verdict(Verdict.PROMOTE, f"{test}: accept H1", llr)
    if llr <= lower:
        return verdict(Verdict.REJECT, f"{test}: accept H0", llr)
    if config.max_games is not None and games >= config.max_games:
        return verdict(Verdict.REJECT, f"{test}: undecided at max_games={config.max_games}", llr)
    return verdict(Verdict.CONTINUE, f"{test}: continue", llr)
