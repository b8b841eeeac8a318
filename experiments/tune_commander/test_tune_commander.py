"""The Commander tuner's whole loop on a tiny budget (run with ``python -m pytest
experiments/tune_commander``; not part of ``make test``)."""

from __future__ import annotations

import pytest

from experiments.tune_commander import tune_commander


def test_tune_commander_runs_and_prints_weights(capsys: pytest.CaptureFixture[str]) -> None:
    """The tuner's whole loop on a tiny budget: generations, the check and the weights."""
    tune_commander.main(
        [
            "--generations",
            "2",
            "--population",
            "3",
            "--deals",
            "8",
            "--check",
            "8",
            "--workers",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert out.count("gen ") == 2
    assert "fair share vs default Commanders on 8 fresh deals" in out
    assert "'hand_flexibility'" in out and "'goes_out'" not in out
