"""The run's summary says why its champion stayed: :func:`rejections` over the Elo log."""

from __future__ import annotations

from typing import Any

from omega_cluster.pipeline.run_state import rejections


def _decision(version: int, parent: int, verdict: str, score: float, games: int) -> dict[str, Any]:
    return {"version": version, "parent": parent, "verdict": verdict, "promoted": verdict == "promote",
            "score": score, "score_low": score - 0.03, "score_high": score + 0.03, "games": games,
            "reason": f"SPRT after {games} games"}  # fmt: skip


def test_the_rejections_since_the_last_promotion_are_summed_up() -> None:
    log = [
        {"version": 0, "verdict": "initial", "promoted": True},
        {"version": 0, "rating": "anchored", "elo": 1300.0},  # a rating row: not a decision
        _decision(1, 0, "reject", 0.47, 200),
        _decision(2, 0, "promote", 0.56, 400),
        _decision(3, 2, "reject", 0.49, 300),
        _decision(4, 2, "reject", 0.52, 900),
        _decision(5, 2, "reject", 0.45, 100),
    ]
    why = rejections(log)
    assert why.startswith("the last 3 candidates were all rejected against champion v2")
    assert "scores 0.450..0.520 (mean 0.487)" in why
    assert "the closest, v4, 0.520 [0.490, 0.550] over 900 games (SPRT after 900 games)" in why


def test_nothing_to_explain_after_a_promotion_or_before_any_decision() -> None:
    assert rejections([{"version": 0, "verdict": "initial", "promoted": True}]) == ""
    assert (
        rejections([_decision(1, 0, "reject", 0.5, 100), _decision(2, 0, "promote", 0.6, 80)]) == ""
    )
