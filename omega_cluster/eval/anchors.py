"""A champion against the fixed anchors: its anchored ratings, one per objective and player.

The chain of gate gaps is no rating (errors and the winners' curse add up along it), so after
each promotion — and for the first champion when the run starts — the champion plays fixed
anchors whose ratings are fixed (``gate.anchors``: player spec -> Elo, e.g. Ensign 1000,
Lieutenant 1200, Commander 1400), and :func:`omega_cluster.eval.rating.anchored_rating` places
it on their scale.

The champion plays as the two players its weights make (:data:`KINDS`): the network alone
(greedy: what an exported bundle runs) and the network inside the search (the run's leaf at
``gate.bench_simulations``). For each objective of the run's fleet and each anchor, each kind
plays ``gate.anchor_games`` games, spread over that objective's tables in proportion to the
fleet's weights (at least one deal per table, so every table size is measured), each deal once
per seat of the champion (the anchor at every other seat); the network alone, whose move is one
forward pass, may play more (``gate.anchor_network_games``) for a narrower interval. The deals derive from the run seed,
the champion's version, the table and the anchor: fresh for every champion, the same for both
kinds (so network and search face the same deals, the network's extra games on deals of their
own). A game's score is the champion's
head-to-head against the mean of the other seats (1, 0.5 or 0); the slice results also carry the
fair share (win share x players, 1.0 = par).

One rating per (objective, kind) over all that objective's tables and anchors: two headline
ratings per player kind for a run with objectives points and go_out, and one without.

In a game small enough to solve (:func:`omega_cluster.eval.exploitability.supports_exploitability`:
two-player Kuhn and Leduc poker, Goofspiel of at most 4 cards), :func:`champion_exploitability`
also gives each kind's distance from an equilibrium, its exploitability (the network's
probabilities; the search's final policy from one search at every information state), which
needs no anchor games.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from omega_cluster.eval.exploitability import exploitability, supports_exploitability
from omega_cluster.eval.matches import MatchSpec, SpecResult, chunk_specs, match_spec
from omega_cluster.eval.rating import AnchoredRating, AnchorResult, anchored_rating
from omega_cluster.eval.stats import head_to_head, wdl_counts
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.fleet import Fleet, TableSlice, fleet_for

if TYPE_CHECKING:  # gatekeeper imports this module
    from omega_cluster.eval.gatekeeper import GateServiceConfig, PlayFn

__all__ = [
    "KINDS",
    "AnchorReport",
    "ChampionRating",
    "anchor_specs",
    "anchor_tables",
    "champion_exploitability",
    "measure_anchors",
    "play_anchor",
]

KINDS = ("network", "search")  # the two players of one set of weights
CHAMPION = "@champion"  # the role token of the champion's seat (gatekeeper.CHAMPION)


@dataclass(frozen=True)
class ChampionRating:
    """One headline rating of a champion: per objective and player kind."""

    version: int
    objective: str
    kind: str
    fit: AnchoredRating


@dataclass(frozen=True)
class AnchorReport:
    """A champion's anchor games: the per-table results and the ratings they give."""

    version: int
    results: tuple[AnchorResult, ...]  # per (objective's table, kind, anchor)
    ratings: tuple[ChampionRating, ...]  # per (objective, kind)
    exploitability: tuple[tuple[str, float], ...] = ()  # (kind, NashConv / 2), solvable games

    def __bool__(self) -> bool:
        return bool(self.results or self.exploitability)


def anchor_specs(
    game: str, params: Mapping[str, Any], players: int, anchor: str, *, seed: int, games: int
) -> tuple[MatchSpec, ...]:
    """The champion at one seat against ``anchor`` at every other, seats rotated."""
    specs: list[MatchSpec] = []
    deals = max(1, math.ceil(games / players))
    for d in range(deals):
        deal_seed = derive_seed(seed, "anchor", anchor, d)
        for r in range(players):
            seats = [anchor] * players
            seats[r] = CHAMPION
            specs.append(match_spec(game, seats, deal_seed, params=dict(params),
                                    index=len(specs), deal=d, rotation=r, focus=r))  # fmt: skip
    return tuple(specs)


def anchor_tables(fleet: Fleet, objective: str, games: int) -> list[tuple[TableSlice, int]]:
    """The tables of ``objective`` and the games each gets: ``games`` in proportion to the
    fleet's weights, rounded to whole deals (one game per seat), at least one deal a table."""
    tables = [s for s in fleet.slices if s.objective == objective]
    if not tables:
        raise ValueError(f"no table of objective {objective!r}; tables: {', '.join(fleet.keys)}")
    total = sum(s.weight for s in tables)
    deals = [max(1, round(games * s.weight / total / s.players)) for s in tables]
    return [(s, d * s.players) for s, d in zip(tables, deals, strict=True)]


def _score(result: SpecResult) -> tuple[float, float, float]:
    """The focus seat's head-to-head score against the mean of the others (1 only for a win at
    a table of N > 2: par is 1/N there), its fair share, and its score against the anchor's
    seats one by one, averaged (par 0.5 at any table size: what the rating is fitted on)."""
    shares, focus = result.record.win_shares, result.spec.focus
    assert focus is not None
    others = [s for i, s in enumerate(shares) if i != focus]
    mine = shares[focus]
    pairwise = sum(head_to_head(mine, s) for s in others) / len(others)
    return head_to_head(mine, sum(others) / len(others)), mine * len(shares), pairwise


def play_anchor(
    config: GateServiceConfig,
    version: int,
    uri: str,
    play: PlayFn,
    *,
    anchor: str,
    table: TableSlice,
    games: int,
    kind: str,
    roles: Mapping[str, str] | None = None,
) -> AnchorResult:
    """The champion at ``uri`` (playing as ``kind``) against ``anchor`` at ``table``. ``roles``:
    further role tokens and their checkpoint URIs, so that ``anchor`` may name one — another
    checkpoint, playing as ``kind`` too (a run's untrained v0 as the reference)."""
    from omega_cluster.eval.gatekeeper import BenchTask

    seed = derive_seed(config.run_seed, "anchor", version, table.key)
    specs = anchor_specs(_game_name(config), table.params, table.players, anchor, seed=seed,
                         games=games)  # fmt: skip
    size = max(table.players, config.chunk_games // table.players * table.players)
    role_uris = {**(roles or {}), CHAMPION: uri}
    tasks = [BenchTask(c, role_uris, kind=kind) for c in chunk_specs(specs, size=size)]
    results = sorted((r for rs in play(tasks) for r in rs),
                     key=lambda r: (r.spec.deal, r.spec.rotation))  # fmt: skip
    scored = [_score(r) for r in results]
    w, d, l = wdl_counts([s for s, _, _ in scored])
    by_deal: dict[int, list[tuple[float, float]]] = {}
    for r, (_, f, p) in zip(results, scored, strict=True):
        by_deal.setdefault(r.spec.deal, []).append((p, f))
    deals = [v for _, v in sorted(by_deal.items())]
    deal_scores = tuple(sum(p for p, _ in v) / len(v) for v in deals)
    deal_fair = tuple(sum(f for _, f in v) / len(v) for v in deals)
    share = sum(f for _, f, _ in scored) / max(1, len(scored))
    return AnchorResult(str(version), anchor, w, d, l, deal_scores, table=table.key, kind=kind,
                        fair_share=share, game_scores=tuple(p for _, _, p in scored),
                        deal_fair_shares=deal_fair)  # fmt: skip


def measure_anchors(
    config: GateServiceConfig,
    version: int,
    uri: str,
    play: PlayFn,
    *,
    anchors: Mapping[str, float] | None = None,
    games: int | None = None,
    kinds: Sequence[str] = KINDS,
) -> AnchorReport:
    """Every anchor game of the champion at ``uri`` (module docstring) and its ratings;
    ``anchors`` and ``games`` default to the config's (an empty report when either is off); a
    ``games`` given applies to every kind, else the network alone plays ``anchor_network_games``
    when set (a kind with no games is not rated)."""
    anchors = dict(config.anchors if anchors is None else anchors)
    network = config.anchor_network_games
    per_kind = {kind: games if games is not None
                else network if kind == "network" and network is not None
                else config.anchor_games for kind in kinds}  # fmt: skip
    if not anchors or max(per_kind.values(), default=0) < 1:
        return AnchorReport(version, (), ())
    fleet = config.fleet or fleet_for(config.game, dict(config.game_params))
    results: list[AnchorResult] = []
    ratings: list[ChampionRating] = []
    for objective in fleet.objectives:
        for kind in kinds:
            if per_kind[kind] < 1:
                continue
            tables = anchor_tables(fleet, objective, per_kind[kind])
            mine = [play_anchor(config, version, uri, play, anchor=a, table=t, games=n,
                                kind=kind) for t, n in tables for a in anchors]  # fmt: skip
            fit = anchored_rating(g for r in mine for g in r.games(anchors[r.anchor]))
            results.extend(mine)
            ratings.append(ChampionRating(version, objective, kind, fit))
    return AnchorReport(version, tuple(results), tuple(ratings))


def champion_exploitability(
    config: GateServiceConfig, version: int, uri: str, *, kinds: Sequence[str] = KINDS
) -> tuple[tuple[str, float], ...]:
    """Each kind's exploitability for the champion at ``uri`` (module docstring); empty for a
    game :func:`supports_exploitability` refuses. The search's rng derives from the run seed and
    the version (each information state's from that and its key)."""
    from dataclasses import replace

    from omega_cluster.eval.gatekeeper import model_player

    game = config.build_game()
    if not supports_exploitability(game):
        return ()
    seed = derive_seed(config.run_seed, "exploitability", version)
    values = []
    for kind in kinds:
        player = model_player(replace(config.player, kind=kind), game, uri)
        values.append((kind, exploitability(game, player, seed=seed)))
    return tuple(values)


def _game_name(config: GateServiceConfig) -> str:
    return config.fleet.game if config.fleet is not None else config.build_game().spec.name
