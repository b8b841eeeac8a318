"""One generation's games as independent jobs: the pool, the seatings, the deals and the scores.

A candidate's fitness is its mean fair share (players × win share; 1.0 is par) at a focus seat,
the other seats played by members of the **pool**: the default weights plus the bests of the
latest generations (:func:`update_pool`). Deal ``d`` of a generation puts the candidate at seat
``d mod players`` and pool member ``(d + k) mod pool`` at the ``k``-th other seat. Every candidate
of a generation plays the same deals in the same seatings (common random numbers: the
differences between candidates are not drowned by the luck of the deal), and each generation
draws fresh deals from the run seed (:data:`DEAL_SEEDS_RULE`), so no candidate is fitted to a
fixed set of deals.

A job (:class:`TuneJob`) carries everything needed to play it in any process
(:func:`play_job`), so a caller's ``map`` may fan the jobs out over workers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster.eval.arena import play_game
from omega_cluster.eval.tuning.specs import job_context
from omega_cluster.games.chance import derive_seed

__all__ = [
    "DEAL_SEEDS_RULE",
    "Map",
    "TuneJob",
    "deal_seed",
    "fitnesses",
    "generation_jobs",
    "in_process",
    "play_job",
    "seating",
    "update_pool",
]

Weights = tuple[float, ...]
Map = Callable[[Callable[["TuneJob"], float], Sequence["TuneJob"]], Sequence[float]]
"""``map(play_job, jobs) -> scores`` in job order (in-process, or over workers)."""

DEAL_SEEDS_RULE = (
    "deal d of generation g: derive_seed(seed, 'tune-deal', g, d) (omega_cluster.games.chance)"
)


def in_process(fn: Callable[[TuneJob], float], jobs: Sequence[TuneJob]) -> list[float]:
    """The default ``map``: every job in this process, in order."""
    return [fn(job) for job in jobs]


def deal_seed(seed: int, generation: int, deal: int) -> int:
    """The deal seed of deal ``deal`` of generation ``generation`` (:data:`DEAL_SEEDS_RULE`)."""
    return derive_seed(seed, "tune-deal", generation, deal)


def seating(deal: int, players: int, pool: int) -> tuple[int, tuple[int | None, ...]]:
    """``(focus seat, pool member per seat)`` of deal ``deal`` (None at the focus seat)."""
    focus = deal % players
    members: list[int | None] = [None] * players
    for k in range(players - 1):
        members[(focus + 1 + k) % players] = (deal + k) % pool
    return focus, tuple(members)


@dataclass(frozen=True)
class TuneJob:
    """One game: a candidate at the focus seat of one deal, pool members at the others."""

    game: str
    params: tuple[tuple[str, Any], ...]
    target: str
    generation: int
    candidate: int
    deal: int
    deal_seed: int
    focus: int
    seats: tuple[Weights, ...]  # weight values per seat (spec order)


def generation_jobs(
    game: str,
    params: tuple[tuple[str, Any], ...],
    target: str,
    *,
    players: int,
    candidates: Sequence[Weights],
    pool: Sequence[Weights],
    generation: int,
    seed: int,
    deals: int,
) -> list[TuneJob]:
    """Every (candidate, deal) game of one generation, candidate-major."""
    if not pool:
        raise ValueError("the pool is empty: it holds at least the default weights")
    jobs = []
    for d in range(deals):
        focus, members = seating(d, players, len(pool))
        seed_d = deal_seed(seed, generation, d)
        for c, weights in enumerate(candidates):
            seats = tuple(weights if m is None else pool[m] for m in members)
            jobs.append(TuneJob(game, params, target, generation, c, d, seed_d, focus, seats))
    jobs.sort(key=lambda j: (j.candidate, j.deal))
    return jobs


def play_job(job: TuneJob) -> float:
    """The focus seat's fair share in the job's game (the target's fast playout when it has
    one, else the built players through the arena's game loop)."""
    game, target = job_context(job.game, job.params, job.target)
    n = game.num_players
    values = [target.as_dict(w) for w in job.seats]
    if target.playout is not None:
        returns = target.playout(game, values, job.deal_seed)
        if returns is not None:
            return n * float(returns[job.focus])
    players = [_player(job.game, job.params, job.target, w) for w in job.seats]
    rngs = [random.Random(derive_seed(job.deal_seed, "player", 0, s)) for s in range(n)]
    record = play_game(game, players, seed=job.deal_seed, rngs=rngs)
    return n * record.win_shares[job.focus]


_PLAYERS: dict[tuple[Any, ...], Any] = {}


def _player(game: str, params: tuple[tuple[str, Any], ...], target: str, weights: Weights) -> Any:
    """A built player per weight set, reused across the jobs of a process (the players keep no
    state between decisions); the cache holds the latest few hundred."""
    key = (game, params, target, weights)
    if key not in _PLAYERS:
        if len(_PLAYERS) > 256:
            _PLAYERS.clear()
        built, spec = job_context(game, params, target)
        _PLAYERS[key] = spec.build(built, spec.as_dict(weights))
    return _PLAYERS[key]


def fitnesses(jobs: Sequence[TuneJob], scores: Sequence[float], population: int) -> list[float]:
    """Each candidate's mean score over its jobs."""
    if len(scores) != len(jobs):
        raise ValueError(f"{len(scores)} scores for {len(jobs)} jobs")
    totals, counts = [0.0] * population, [0] * population
    for job, score in zip(jobs, scores, strict=True):
        totals[job.candidate] += float(score)
        counts[job.candidate] += 1
    return [t / c for t, c in zip(totals, counts, strict=True)]


def update_pool(pool: Sequence[Weights], best: Weights, size: int) -> list[Weights]:
    """The next generation's pool: the defaults (``pool[0]``, always kept) and the latest
    ``size − 1`` generation bests, ``best`` newest (the oldest best dropped first)."""
    bests = [*pool[1:], best]
    return [pool[0], *bests[max(0, len(bests) - (size - 1)) :]] if size > 1 else [pool[0]]
