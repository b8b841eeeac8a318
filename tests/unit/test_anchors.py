"""The anchor bench (eval/anchors.py): its tables per objective, its specs, and the rating plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from omega_cluster.eval.anchors import CHAMPION, anchor_specs, anchor_tables
from omega_cluster.eval.matches import BenchError
from omega_cluster.eval.rating_plots import plot_anchor_slices, plot_ratings
from omega_cluster.games.fleet import fleet_for

PNG = b"\x89PNG"


def test_anchor_games_spread_over_an_objectives_tables_by_weight() -> None:
    fleet = fleet_for(
        "mexican_train", {"players": 2, "rounds": 1}, {2: 1, 4: 2}, ["points", "go_out"]
    )
    for objective in ("points", "go_out"):
        tables = anchor_tables(fleet, objective, 40)
        assert [(t.key, n) for t, n in tables] == [
            (f"players=2,objective={objective}", 14),  # 40/3 games: 7 deals of 2 seats
            (f"players=4,objective={objective}", 28),  # 80/3 games: 7 deals of 4 seats
        ]
        assert all(t.params["objective"] == objective for t, _ in tables)
    tiny = anchor_tables(fleet, "points", 1)  # every table still gets one deal
    assert [n for _, n in tiny] == [2, 4]
    with pytest.raises(ValueError, match="no table of objective 'score'"):
        anchor_tables(fleet, "score", 40)


def test_anchor_specs_seat_the_champion_once_per_deal_and_seat() -> None:
    specs = anchor_specs("mexican_train", {"players": 3, "rounds": 1}, 3, "commander", seed=5,
                         games=7)  # fmt: skip
    assert len(specs) == 9  # ceil(7 / 3) deals x 3 seats
    for spec in specs:
        assert spec.seats[spec.focus] == CHAMPION and spec.focus == spec.rotation
        assert [s for i, s in enumerate(spec.seats) if i != spec.focus] == ["commander"] * 2
    assert len({s.deal_seed for s in specs}) == 3  # one deal per three seatings
    again = anchor_specs("mexican_train", {"players": 3, "rounds": 1}, 3, "commander", seed=5,
                         games=7)  # fmt: skip
    other = anchor_specs("mexican_train", {"players": 3, "rounds": 1}, 3, "lieutenant", seed=5,
                         games=7)  # fmt: skip
    assert again == specs and {s.deal_seed for s in other}.isdisjoint(s.deal_seed for s in specs)


def _rating(version: int, objective: str, player: str, elo: float) -> dict[str, object]:
    return {"version": version, "rating": "anchored", "objective": objective, "player": player,
            "elo": elo, "low": elo - 60, "high": elo + 60}  # fmt: skip


def test_the_rating_plots_are_written(tmp_path: Path) -> None:
    rows = [_rating(v, o, p, 1000 + 40 * v) for v in (0, 2, 3) for o in ("points", "go_out")
            for p in ("network", "search")]  # fmt: skip
    chain = [{"version": v, "elo": 1000 + 50 * v, "low": 990, "high": 1200, "promoted": True}
             for v in (0, 2, 3)]  # fmt: skip
    path = plot_ratings([*rows, *chain], tmp_path / "plots" / "rating.png",
                        anchors={"ensign": 1000.0, "commander": 1400.0})  # fmt: skip
    assert path.read_bytes()[:4] == PNG
    only_chain = plot_ratings(chain, tmp_path / "chain.png")
    assert only_chain.stat().st_size > 1000
    slices = [{"version": v, "table": f"players={n},objective=points", "anchor": "commander",
               "player": p, "score": 0.4 + 0.05 * v} for v in (0, 2) for n in (2, 4)
              for p in ("network", "search")]  # fmt: skip
    assert plot_anchor_slices(slices, tmp_path / "slices.png").read_bytes()[:4] == PNG
    with pytest.raises(BenchError, match="no anchored rating"):
        plot_ratings([{"version": 1, "promoted": False}], tmp_path / "none.png")
    with pytest.raises(BenchError, match="no anchor rows"):
        plot_anchor_slices([], tmp_path / "none.png")


def test_a_fleet_champion_gets_one_rating_per_objective_and_player(tmp_path: Path) -> None:
    """Mexican Train over 2 and 3 players and both objectives, in process: each table's players
    are built for that table, and the report holds a rating per (objective, player kind) over
    all of that objective's tables and anchors."""
    from omega_cluster import wiring
    from omega_cluster.config import load_settings
    from omega_cluster.eval.anchors import KINDS, measure_anchors
    from omega_cluster.model.checkpoint import save_checkpoint

    settings = load_settings(["run=smoke", "game.fleet={2:1,3:1}", "game.objectives=[points,go_out]",
                              "gate.anchors={ensign:1000,commander:1400}",
                              "gate.bench_simulations=4"])  # fmt: skip
    game = wiring.build_game(settings)
    encoder = wiring.build_encoder(settings, game)
    uri = tmp_path / "v0"
    save_checkpoint(uri, wiring.build_model(settings, game, encoder), game=game, encoder=encoder,
                    version=0, metrics={})  # fmt: skip
    service = wiring.gate_service(settings)
    report = measure_anchors(service.config, 0, str(uri), service.play, games=6)
    assert [(r.objective, r.kind) for r in report.ratings] == [
        (o, k) for o in ("points", "go_out") for k in KINDS
    ]
    for rating in report.ratings:
        mine = [
            r for r in report.results if (r.objective, r.kind) == (rating.objective, rating.kind)
        ]
        assert {(r.table, r.anchor) for r in mine} == {
            (f"players={n},objective={rating.objective}", a) for n in (2, 3)
            for a in ("ensign", "commander")}  # fmt: skip
        assert rating.fit.games == sum(r.wins + r.draws + r.losses for r in mine) == 2 * (4 + 3)
        assert rating.fit.low <= rating.fit.rating <= rating.fit.high
    for r in report.results:  # every deal played once per seat: the deals' fair shares average
        assert r.fair_share == pytest.approx(sum(r.deal_fair_shares) / len(r.deal_fair_shares))
        if len(r.deal_fair_shares) > 1:
            ci = r.fair_share_interval()
            assert ci.low <= r.fair_share <= ci.high and ci.n == len(r.deal_fair_shares)


def test_an_n_player_game_is_scored_seat_by_seat_so_par_is_one_half_at_any_size() -> None:
    from types import SimpleNamespace

    from omega_cluster.eval.anchors import _score
    from omega_cluster.eval.rating import AnchorResult, anchored_rating

    def result(shares: tuple[float, ...]) -> Any:
        return SimpleNamespace(record=SimpleNamespace(win_shares=shares),
                               spec=SimpleNamespace(focus=0))  # fmt: skip

    # another seat won: the head-to-head says lost, seat by seat it lost one and tied two
    assert _score(result((0.0, 1.0, 0.0, 0.0))) == (0.0, 0.0, pytest.approx(1 / 3))
    assert _score(result((1.0, 0.0, 0.0, 0.0))) == (1.0, 4.0, 1.0)
    # an 8-player champion as strong as its anchors wins 1 game in 8: rated at the anchors' Elo
    games = [(1.0,) + (0.0,) * 7] + [(0.0, 1.0) + (0.0,) * 6] * 7
    scores = tuple(_score(result(g))[2] for g in games)
    fit = anchored_rating(AnchorResult("1", "commander", 0, 0, 0, game_scores=scores * 10)
                          .games(1400.0))  # fmt: skip
    assert fit.rating == pytest.approx(1400.0, abs=1.0)
