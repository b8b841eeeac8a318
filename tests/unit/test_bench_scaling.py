"""The scaling bench's choice of versions at doubling self-play, its log2 fit and its strength
rows."""

from __future__ import annotations

import math

import pytest

from bench.bench_scaling import Point, doubling_versions, fit_log2


def test_the_versions_nearest_to_each_halving_of_the_last_are_taken_once() -> None:
    rows = {1: 1000.0, 2: 2100.0, 3: 3000.0, 4: 3900.0, 5: 6000.0, 6: 8000.0}
    chosen = doubling_versions(rows, games_per_row=0.5, points=4)
    assert [v for v, _ in chosen] == [1, 2, 4, 6]  # 8000, 4000, 2000, 1000 rows
    assert chosen[-1] == (6, 4000.0)  # games = rows * games per row
    short = doubling_versions({1: 1000.0, 2: 1100.0}, games_per_row=1.0, points=4)
    assert [v for v, _ in short] == [1, 2]  # a short run: fewer points, none twice
    assert doubling_versions({}, games_per_row=1.0, points=4) == []


def test_the_fit_recovers_a_log2_trend_and_weights_by_the_intervals() -> None:
    points = [Point(k, 2.0**k, 0.4 + 0.02 * k, 0.39 + 0.02 * k, 0.41 + 0.02 * k, 100)
              for k in (8, 9, 10, 11)]  # fmt: skip
    a, b = fit_log2(points)
    assert a == pytest.approx(0.4) and b == pytest.approx(0.02)
    noisy = [*points, Point(99, 2.0**12, 0.0, -0.5, 0.5, 10)]  # a point with a huge interval
    a2, b2 = fit_log2(noisy)
    assert b2 == pytest.approx(0.02, abs=0.002)
    assert math.isfinite(a2)


def test_strength_rows_are_what_the_release_card_reads(tmp_path) -> None:
    """The rows the benches write (a curve's Point, a table size's interval) load as a strength
    file, the statistic named by the table size: fair share against Commander above 2 players."""
    import json

    from bench.bench_scaling import strength_row
    from omega_cluster.eval.stats import ConfidenceInterval
    from omega_cluster.release import read_strength

    interval = ConfidenceInterval(1.1, 1.0, 1.2, 0.95, 600)
    rows = [strength_row("commander", 2, Point(3, 100.0, 0.52, 0.5, 0.54, 1000), "cmd", 7),
            strength_row("commander", 4, interval, "cmd", 7),
            strength_row("network:models/x", 4, interval, "cmd", 7)]  # fmt: skip
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"rows": rows}))
    table = read_strength(path)
    assert [(r.players, r.games, r.statistic) for r in table.rows] == [
        (2, 2000, "win share (by deal, 95% t)"),
        (4, 2400, "fair share (by deal, 95% t)"),
        (4, 2400, "score vs each seat (by deal, 95% t)"),
    ]
    assert table.rows[1].value == 1.1 and table.rows[1].low == 1.0
