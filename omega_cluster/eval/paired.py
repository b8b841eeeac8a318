"""The paired design: each deal seed played with A and then with B in the same seat.

The method of duplicate bridge: everything but the player under test is
fixed — the deal, the other seats' players and every seat's rng — so the difference between the
arms is the players' and not the cards'. :func:`paired_specs` builds the bench of
:class:`~omega_cluster.eval.matches.MatchSpec` (the focus seat rotated over the table),
:func:`paired_sample` averages each deal's rotations per arm, and the per-seed differences, which
are independent across seeds, go to :func:`omega_cluster.eval.stats.paired_contrast` for a t- and a
bootstrap interval. Rotating the focus seat cancels the seat advantage from the contrast; seeds,
not games, are the sample size, because the games of one deal share its luck.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omega_cluster.eval.matches import BenchError, MatchSpec, SpecResult, match_spec
from omega_cluster.games.api import Game
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import make_player

__all__ = ["PairedSample", "paired_sample", "paired_specs"]


def paired_specs(
    game: str,
    a: str,
    b: str,
    others: str | Sequence[str],
    seeds: Sequence[int],
    *,
    params: Mapping[str, Any] | None = None,
    rotations: Sequence[int] | None = None,
) -> tuple[MatchSpec, ...]:
    """Each deal seed played with ``a`` and then ``b`` at the focus seat, for each focus seat in
    ``rotations`` (default: every seat). ``others`` (one spec, or one per other seat, which then
    sets ``players`` unless ``params`` does) sit at the seats after the focus, in order: seat
    ``(r + 1 + k) % N`` gets ``others[k]``. Both arms of a (seed, rotation) share the deal seed
    and every seat's rng seed. Every player spec is built once here, so a misspelled player
    fails before any game is played."""
    full = {**(params or {})}
    if not isinstance(others, str):
        full.setdefault("players", len(others) + 1)
    table = make_game(game, **full)
    n = table.num_players
    full["players"] = n
    if isinstance(others, str):
        others = [others] * (n - 1)
    others = [o.strip() for o in others]
    if len(others) != n - 1:
        raise BenchError(f"{len(others)} other players for a {n}-player table; give {n - 1}")
    _check_players(table, [a, b, *others])
    focus_seats = list(range(n)) if rotations is None else list(rotations)
    bad = [r for r in focus_seats if not 0 <= r < n] or len(set(focus_seats)) != len(focus_seats)
    if bad or not focus_seats:
        raise BenchError(f"rotations {focus_seats} must be distinct seats in 0..{n - 1}")
    if not seeds:
        raise BenchError("paired_specs needs at least one deal seed")
    specs: list[MatchSpec] = []
    for d, deal_seed in enumerate(seeds):
        for r in focus_seats:
            seats = [""] * n
            for k, other in enumerate(others):
                seats[(r + 1 + k) % n] = other
            for arm, player in (("a", a), ("b", b)):
                seats[r] = player
                specs.append(
                    match_spec(
                        game,
                        seats,
                        deal_seed,
                        params=full,
                        index=len(specs),
                        deal=d,
                        rotation=r,
                        focus=r,
                        arm=arm,
                    )
                )
    return tuple(specs)


def _check_players(game: Game, specs: Sequence[str]) -> None:
    for spec in dict.fromkeys(specs):
        make_player(spec, game)  # raises PlayerSpecError naming the valid players


@dataclass(frozen=True)
class PairedSample:
    """Per-deal means of one metric at the focus seat, arm A and arm B, deal by deal."""

    metric: str  # a METRICS name or a counts key
    a_player: str  # player spec of arm A
    b_player: str
    deal_seeds: tuple[int, ...]  # one per deal, in bench order
    a: tuple[float, ...]  # float[deals]: mean over the deal's rotations, arm A
    b: tuple[float, ...]
    rotations: int  # games per deal and arm

    @property
    def differences(self) -> tuple[float, ...]:
        """float[deals]: A − B per deal seed."""
        return tuple(x - y for x, y in zip(self.a, self.b, strict=True))


def paired_sample(results: Sequence[SpecResult], *, metric: str = "win_share") -> PairedSample:
    """Pair the arms of :func:`paired_specs` results and average each deal's rotations."""
    if not results:
        raise BenchError("paired_sample: no results (an empty bench, or nothing was played)")
    cells: dict[tuple[int, int], dict[str, float]] = {}
    players: dict[str, set[str]] = {"a": set(), "b": set()}
    deal_seeds: dict[int, int] = {}
    for result in results:
        spec = result.spec
        if spec.arm not in players or spec.focus is None:
            raise BenchError(f"match spec {spec.index} is not part of a paired design")
        players[spec.arm].add(spec.seats[spec.focus])
        deal_seeds[spec.deal] = spec.deal_seed
        cell = cells.setdefault((spec.deal, spec.rotation), {})
        if spec.arm in cell:
            raise BenchError(f"deal {spec.deal} rotation {spec.rotation}: arm {spec.arm} twice")
        cell[spec.arm] = result.value(metric, spec.focus)
    for arm, names in players.items():
        if len(names) != 1:
            raise BenchError(f"arm {arm} has players {sorted(names) or 'none'}; expected one")
    per_deal: dict[int, list[tuple[float, float]]] = {}
    for (deal, rotation), cell in sorted(cells.items()):
        if len(cell) != 2:
            have = next(iter(cell))
            raise BenchError(f"deal {deal} rotation {rotation} has arm {have} but not its pair")
        per_deal.setdefault(deal, []).append((cell["a"], cell["b"]))
    counts = {len(v) for v in per_deal.values()}
    if len(counts) != 1:
        raise BenchError(f"deals have different numbers of rotations: {sorted(counts)}")
    deals = sorted(per_deal)
    return PairedSample(
        metric=metric,
        a_player=players["a"].pop(),
        b_player=players["b"].pop(),
        deal_seeds=tuple(deal_seeds[d] for d in deals),
        a=tuple(sum(x for x, _ in per_deal[d]) / len(per_deal[d]) for d in deals),
        b=tuple(sum(y for _, y in per_deal[d]) / len(per_deal[d]) for d in deals),
        rotations=counts.pop(),
    )
