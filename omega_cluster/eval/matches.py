"""Match specifications: a bench as data — cut into chunks, played anywhere, merged, sliced.

A bench is a tuple of :class:`MatchSpec` (game name and parameters, one player spec per seat, the
deal seed, every seat's rng seed, and where the game sits in the bench). :func:`play_spec` is a
pure function of its spec — the same spec gives the same :class:`SpecResult` in any process — so
the service can hand :func:`chunk_specs` chunks to Ray workers (each calls :func:`play_specs`) and
:func:`merge_results` puts the answers back in bench order, checking that nothing is missing,
duplicated or played from a different spec.

Slices (:class:`SliceKey`): player count × objective × seat. :func:`slice_outcomes` breaks one
player's results down per slice: wins, win rate (Wilson), fair share (N × mean win share, 1.0 is
par), mean score and the game's counts (:mod:`omega_cluster.eval.counts`).

The paired design (A and B on the same deals and seats) builds on these specs in
:mod:`omega_cluster.eval.paired`.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.eval.arena import (
    DEFAULT_MAX_STEPS,
    CountsHook,
    GameRecord,
    play_game,
    progress_bar,
)
from omega_cluster.eval.counts import counts_hook
from omega_cluster.eval.stats import ConfidenceInterval, mean_ci, wilson_interval
from omega_cluster.games.api import Game
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.player import Player
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import make_player

__all__ = [
    "METRICS",
    "BenchError",
    "MatchSpec",
    "SliceKey",
    "SliceOutcome",
    "SpecResult",
    "chunk_specs",
    "match_spec",
    "merge_results",
    "play_spec",
    "play_specs",
    "slice_outcomes",
]

ParamItems = tuple[tuple[str, Any], ...]

METRICS = ("win_share", "fair_share", "score", "return")
"""Per-game figures of a seat a paired contrast can compare; any counts key works too."""


class BenchError(UserError, ValueError):
    """Bad bench input: empty or inconsistent results, unpaired arms, malformed specs."""


@dataclass(frozen=True)
class MatchSpec:
    """One game of a bench: everything needed to play it anywhere and get the same result."""

    game: str  # registered game name (omega_cluster.games.registry), e.g. "mexican_train"
    params: ParamItems  # game parameters as sorted (key, value) pairs; lists become tuples
    seats: tuple[str, ...]  # player spec per seat (omega_cluster.players.registry.make_player)
    deal_seed: int  # seed of new_initial_state and of the chance rng
    seat_seeds: tuple[int, ...]  # seed of each seat's player rng
    index: int = 0  # position in the bench: merge_results orders and checks by it
    deal: int = 0  # index of the deal in the bench: the unit of a paired contrast
    rotation: int = 0  # which seating of the deal this game is
    focus: int | None = None  # seat of the player under test (paired design), else None
    arm: str = ""  # paired design: "a" or "b"; "" outside a paired design
    opening: int = 0  # the deal's first decisions drawn at random (arena.play_game's opening)

    def __post_init__(self) -> None:
        if not self.seats:
            raise BenchError(f"match spec {self.index}: no seats")
        if len(self.seat_seeds) != len(self.seats):
            raise BenchError(
                f"match spec {self.index}: {len(self.seat_seeds)} seat seeds for "
                f"{len(self.seats)} seats"
            )
        if self.focus is not None and not 0 <= self.focus < len(self.seats):
            raise BenchError(f"match spec {self.index}: focus seat {self.focus} is not a seat")

    @property
    def params_dict(self) -> dict[str, Any]:
        return dict(self.params)

    @property
    def num_players(self) -> int:
        return len(self.seats)


def match_spec(
    game: str,
    seats: Sequence[str],
    deal_seed: int,
    *,
    params: Mapping[str, Any] | None = None,
    seat_seeds: Sequence[int] | None = None,
    index: int = 0,
    deal: int = 0,
    rotation: int = 0,
    focus: int | None = None,
    arm: str = "",
    opening: int = 0,
) -> MatchSpec:
    """A :class:`MatchSpec` with normalized parameters; ``players`` defaults to ``len(seats)`` and
    seat seeds to ``derive_seed(deal_seed, "player", rotation, seat)``."""
    items = {"players": len(seats), **(params or {})}
    if seat_seeds is None:
        seat_seeds = [derive_seed(deal_seed, "player", rotation, s) for s in range(len(seats))]
    return MatchSpec(
        game=game,
        params=_param_items(items),
        seats=tuple(s.strip() for s in seats),
        deal_seed=int(deal_seed),
        seat_seeds=tuple(int(x) for x in seat_seeds),
        index=index,
        deal=deal,
        rotation=rotation,
        focus=focus,
        arm=arm,
        opening=opening,
    )


@dataclass(frozen=True)
class SpecResult:
    """A played :class:`MatchSpec`: the spec, the arena's record and the game's objective."""

    spec: MatchSpec
    record: GameRecord  # per-seat tuples indexed by seat; record.index == spec.index
    objective: str  # game.spec.objective of the game played ("win" for a game without one)

    def value(self, metric: str, seat: int) -> float:
        """A seat's per-game figure: a :data:`METRICS` name or a counts key."""
        r = self.record
        if metric == "win_share":
            return r.win_shares[seat]
        if metric == "fair_share":
            return len(r.win_shares) * r.win_shares[seat]
        if metric == "score":
            return r.scores[seat]
        if metric == "return":
            return r.returns[seat]
        if metric in r.counts:
            return r.counts[metric][seat]
        known = ", ".join([*METRICS, *r.counts])
        raise BenchError(f"unknown metric {metric!r}; known: {known}")


# -- playing ----------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _game(name: str, params: ParamItems) -> Game:
    """Games are immutable rule sets, so one per (name, params) serves every spec of a process."""
    return make_game(name, **dict(params))


def _hook(game: Game, counts: bool | CountsHook) -> CountsHook | None:
    if counts is True:
        return counts_hook(game)
    return counts or None


def play_spec(
    spec: MatchSpec,
    *,
    counts: bool | CountsHook = True,
    max_steps: int = DEFAULT_MAX_STEPS,
    players: Sequence[Player] | None = None,
) -> SpecResult:
    """Play one spec. ``counts=True`` uses the game's registered hook; ``players`` (one per seat,
    built from ``spec.seats``) lets :func:`play_specs` reuse players across a chunk."""
    game = _game(spec.game, spec.params)
    if game.num_players != spec.num_players:
        raise BenchError(
            f"match spec {spec.index}: {spec.num_players} seats for {spec.game} with "
            f"players={game.num_players}"
        )
    if players is None:
        players = [make_player(s, game) for s in spec.seats]
    rngs = [random.Random(x) for x in spec.seat_seeds]
    record = play_game(
        game,
        players,
        seed=spec.deal_seed,
        rngs=rngs,
        counts=_hook(game, counts),
        max_steps=max_steps,
        opening=spec.opening,
    )
    record = dataclasses.replace(record, index=spec.index, deal=spec.deal, rotation=spec.rotation)
    return SpecResult(spec=spec, record=record, objective=game.spec.objective)


def play_specs(
    specs: Iterable[MatchSpec],
    *,
    counts: bool | CountsHook = True,
    progress: bool = False,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> tuple[SpecResult, ...]:
    """Play a chunk of specs in order. A player is built once per (game, seat, spec) and reused:
    the players of this project keep no state between decisions (rng is passed to ``act``)."""
    todo = list(specs)
    built: dict[tuple[str, ParamItems, int, str], Player] = {}
    results = []
    with progress_bar(progress, len(todo), todo[0].game if todo else "bench") as advance:
        for spec in todo:
            game = _game(spec.game, spec.params)
            players = []
            for seat, name in enumerate(spec.seats):
                key = (spec.game, spec.params, seat, name)
                if key not in built:
                    built[key] = make_player(name, game)
                players.append(built[key])
            results.append(play_spec(spec, counts=counts, max_steps=max_steps, players=players))
            advance()
    return tuple(results)


def chunk_specs(specs: Sequence[MatchSpec], *, size: int) -> tuple[tuple[MatchSpec, ...], ...]:
    """Consecutive chunks of at most ``size`` specs (a paired design's arms stay adjacent)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise BenchError(f"chunk size must be a positive int, got {size!r}")
    return tuple(tuple(specs[i : i + size]) for i in range(0, len(specs), size))


def merge_results(
    chunks: Iterable[Iterable[SpecResult]], *, expected: Sequence[MatchSpec] | None = None
) -> tuple[SpecResult, ...]:
    """Results of every chunk in bench order. A chunk played twice (a retried worker) is merged
    once; two different results for one index are an error, and so is any spec of ``expected``
    without its result, or a result whose spec differs from the expected one."""
    by_index: dict[int, SpecResult] = {}
    for chunk in chunks:
        for result in chunk:
            i = result.spec.index
            if i in by_index and by_index[i] != result:
                raise BenchError(f"two different results for match spec {i}")
            by_index[i] = result
    if not by_index:
        raise BenchError("no results to merge: every chunk is empty")
    if expected is not None:
        missing = [s.index for s in expected if s.index not in by_index]
        if missing:
            raise BenchError(f"{len(missing)} match specs have no result, e.g. {missing[:5]}")
        for spec in expected:
            if by_index[spec.index].spec != spec:
                raise BenchError(f"the result for match spec {spec.index} is of another spec")
        extra = set(by_index) - {s.index for s in expected}
        if extra:
            raise BenchError(f"results for specs not in the bench: {sorted(extra)[:5]}")
    return tuple(by_index[i] for i in sorted(by_index))


# -- slices ------------------------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class SliceKey:
    """Player count × objective × seat; ``seat=-1`` is every seat together."""

    players: int
    objective: str
    seat: int = -1

    def __str__(self) -> str:
        where = "all seats" if self.seat < 0 else f"seat {self.seat}"
        return f"{self.players}p · {self.objective} · {where}"


@dataclass(frozen=True)
class SliceOutcome:
    """One player's results in one slice (means are per game)."""

    key: SliceKey
    label: str  # whose results: an arm ("a") or a player spec
    games: int
    wins: float  # sum of win shares
    win_rate: float  # wins / games
    win_rate_ci: ConfidenceInterval  # Wilson interval
    fair_share: float  # N × mean win share; 1.0 is par
    fair_share_ci: ConfidenceInterval  # t-interval on the per-game N × win share
    mean_score: float  # the game's natural score (Mexican Train: pips, lower is better)
    score_ci: ConfidenceInterval
    counts: Mapping[str, float] = field(default_factory=dict)  # hook counts, mean per game


def slice_outcomes(
    results: Sequence[SpecResult],
    *,
    arm: str | None = None,
    player: str | None = None,
    level: float = 0.95,
) -> dict[SliceKey, SliceOutcome]:
    """Per-slice outcomes of one player: the focus seat of ``arm``'s games, or every seat where
    ``player`` (a spec string) sits. Per seat and over all seats (``seat=-1``), sorted by key."""
    if (arm is None) == (player is None):
        raise BenchError("slice_outcomes needs exactly one of arm= or player=")
    if not results:
        raise BenchError("slice_outcomes: no results")
    groups: dict[SliceKey, list[tuple[SpecResult, int]]] = {}
    for result in results:
        spec = result.spec
        if arm is not None:
            seats = [spec.focus] if spec.arm == arm and spec.focus is not None else []
        else:
            seats = [s for s, name in enumerate(spec.seats) if name == player]
        for seat in seats:
            for key_seat in (seat, -1):
                key = SliceKey(spec.num_players, result.objective, key_seat)
                groups.setdefault(key, []).append((result, seat))
    label = arm if arm is not None else str(player)
    if not groups:
        raise BenchError(f"no games of {'arm' if arm is not None else 'player'} {label!r}")
    return {key: _outcome(key, label, groups[key], level) for key in sorted(groups)}


def _outcome(
    key: SliceKey, label: str, games: list[tuple[SpecResult, int]], level: float
) -> SliceOutcome:
    shares = [r.record.win_shares[s] for r, s in games]
    n = len(games)
    wins = sum(shares)
    fair = mean_ci([key.players * x for x in shares], level)
    score = mean_ci([r.record.scores[s] for r, s in games], level)
    keys = set.intersection(*(set(r.record.counts) for r, _ in games))
    counts = {k: sum(r.record.counts[k][s] for r, s in games) / n for k in sorted(keys)}
    return SliceOutcome(
        key=key,
        label=label,
        games=n,
        wins=wins,
        win_rate=wins / n,
        win_rate_ci=wilson_interval(min(wins, n), n, level),
        fair_share=fair.estimate,
        fair_share_ci=fair,
        mean_score=score.estimate,
        score_ci=score,
        counts=counts,
    )


def _param_items(params: Mapping[str, Any]) -> ParamItems:
    def freeze(value: Any) -> Any:
        return tuple(freeze(v) for v in value) if isinstance(value, list | tuple) else value

    return tuple(sorted((str(k), freeze(v)) for k, v in params.items()))
