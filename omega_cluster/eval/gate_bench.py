"""The gate's bench as data: paired deals at every table size, and what each slice's deals say.

Every deal is played twice, so that the one thing that differs between its two games is the
candidate:

* **2 players** — the deal played with the candidate in seat 0 and the champion in seat 1, and
  again with the seats swapped: both seats get both models, the seat's and the cards' luck cancel
  in the pair.
* **N > 2 players** — one *focus* seat ``r`` per deal (rotated with the deal index, so every seat
  is the focus equally often). Game A: the candidate at ``r``, the champion at every other seat.
  Control game C: the same deal seed, the champion at every seat, and every seat's rng seeded as
  in A (the seeds derive from the deal seed, the focus seat and the seat only). A and C differ
  only in who sits at ``r``: duplicate bridge's design.

Each game is reduced to the focus seat's head-to-head score h = head_to_head(focus share, mean
share of the others) in {0, 0.5, 1} (:func:`omega_cluster.eval.stats.head_to_head`), and the deal
to a pair value in {0, 0.5, …, 2}: h(seat 0) + h(seat 1) at 2 players, h(A) + (1 - h(C)) at N > 2
— 1 is par (the candidate did at r what the champion does there), so the gate's pentanomial SPRT
(:mod:`omega_cluster.eval.sprt`) applies unchanged at every table size. Besides the pair values,
:func:`slice_figures` reports each slice's *fair share* (N × mean win share at the focus seat; 1.0
is par) of the candidate and of the champion (in the control games; at 2 players the champion's
seat of the same games), with t intervals over deals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster.eval.gate import SliceResults, SliceSummary
from omega_cluster.eval.matches import MatchSpec, SpecResult, match_spec
from omega_cluster.eval.stats import ConfidenceInterval, elo_from_score, head_to_head, mean_ci
from omega_cluster.games.chance import derive_seed

__all__ = ["CANDIDATE", "CHAMPION", "SliceFigures", "gate_specs", "slice_figures", "table_score"]

CANDIDATE, CHAMPION = "@candidate", "@champion"


def gate_specs(
    game: str,
    params: Mapping[str, Any],
    players: int,
    *,
    seed: int,
    deals: range,
    opening: int = 0,
) -> tuple[MatchSpec, ...]:
    """Two games per deal (module docstring), adjacent: arm ``"a"`` holds the candidate at the
    focus seat, arm ``"b"`` the swapped seats (2 players) or the all-champion control (N > 2).
    ``opening``: each deal's first decisions at random, the same in both games (a game without
    chance then plays a different game on every deal)."""
    specs: list[MatchSpec] = []
    for d in deals:
        deal_seed = derive_seed(seed, "deal", d)
        if players == 2:
            seatings = [(0, [CANDIDATE, CHAMPION], "a"), (1, [CHAMPION, CANDIDATE], "b")]
        else:
            r = d % players
            seats = [CHAMPION] * players
            seats[r] = CANDIDATE
            seatings = [(r, seats, "a"), (r, [CHAMPION] * players, "b")]
        for focus, seating, arm in seatings:
            specs.append(match_spec(game, seating, deal_seed, params=dict(params),
                                    index=len(specs), deal=d, rotation=focus, focus=focus,
                                    arm=arm, opening=opening))  # fmt: skip
    return tuple(specs)


def table_score(result: SpecResult) -> float:
    """The focus seat's head-to-head score against the mean of the other seats."""
    shares = result.record.win_shares
    focus = result.spec.focus
    assert focus is not None
    others = [s for i, s in enumerate(shares) if i != focus]
    return head_to_head(shares[focus], sum(others) / len(others))


def pair_scores(results: Sequence[SpecResult]) -> tuple[float, ...]:
    """The two per-game scores of each deal, from the candidate's side: (h(A), h(B)) at 2 players,
    (h(A), 1 - h(C)) at N > 2, so that each deal's sum is its pair value (module docstring).
    ``results`` are one slice's, sorted by (deal, arm)."""
    out: list[float] = []
    for r in results:
        h = table_score(r)
        control = r.spec.arm == "b" and CANDIDATE not in r.spec.seats
        out.append(1.0 - h if control else h)
    return tuple(out)


@dataclass(frozen=True)
class SliceFigures:
    """One slice's figures for the outcome, the log and MLflow."""

    key: str
    deals: int
    games: int
    summary: SliceSummary  # the gate's: score and Elo with intervals, worse or not
    fair_share: ConfidenceInterval  # the candidate's, t interval over deals
    champion_fair_share: ConfidenceInterval  # the champion's (control games at N > 2)

    def row(self, games: int) -> dict[str, Any]:
        """Flat figures; the Elo kept finite by keeping scores half a game (of ``games`` in the
        gate) inside (0, 1), as the gate's aggregate."""
        s = self.summary
        row: dict[str, Any] = {"key": self.key, "deals": self.deals, "games": self.games,
                               "wins": s.wins, "draws": s.draws, "losses": s.losses,
                               "worse": s.significantly_worse}  # fmt: skip
        for name, ci in (("score", s.score), ("elo", s.elo), ("fair_share", self.fair_share),
                         ("champion_fair_share", self.champion_fair_share)):  # fmt: skip
            if ci is not None:
                row.update({name: ci.estimate, f"{name}_low": ci.low, f"{name}_high": ci.high})
        eps = 0.5 / max(games, 1)
        for name in ("elo", "elo_low", "elo_high"):
            if name in row:
                score = row[name.replace("elo", "score")]
                row[name] = elo_from_score(min(1.0 - eps, max(eps, score)))
        return row


def slice_figures(
    slice_results: SliceResults,
    results: Sequence[SpecResult],
    summary: SliceSummary,
    level: float,
) -> SliceFigures:
    """Fair shares of one slice's deals (``results`` sorted by (deal, arm)) beside its gate
    summary."""
    n = results[0].spec.num_players if results else 2
    candidate: dict[int, list[float]] = {}
    champion: dict[int, list[float]] = {}
    for r in results:
        shares, spec = r.record.win_shares, r.spec
        cand = [i for i, s in enumerate(spec.seats) if s == CANDIDATE]
        if cand:
            candidate.setdefault(spec.deal, []).append(n * shares[cand[0]])
            if n == 2:
                champion.setdefault(spec.deal, []).append(n * shares[1 - cand[0]])
        else:
            assert spec.focus is not None
            champion.setdefault(spec.deal, []).append(n * shares[spec.focus])
    return SliceFigures(
        key=slice_results.key,
        deals=len(candidate),
        games=slice_results.games,
        summary=summary,
        fair_share=_deal_ci(candidate, level),
        champion_fair_share=_deal_ci(champion, level),
    )


def _deal_ci(by_deal: Mapping[int, Sequence[float]], level: float) -> ConfidenceInterval:
    values = [sum(v) / len(v) for _, v in sorted(by_deal.items())]
    if not values:
        return ConfidenceInterval(float("nan"), -float("inf"), float("inf"), level, 0)
    return mean_ci(values, level)
