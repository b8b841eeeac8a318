"""The short soak (``scripts/soak.py``; ``make soak`` runs the long one): a kuhn_poker smoke run
on the embedded Ray survives three SIGKILLs at seeded random times — one of them the driver,
which is resumed after one of its shards is truncated — with every invariant holding (the
truncated shard quarantined and no longer counted) and nothing of the run left running."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.xdist_group("soak"), pytest.mark.slow]


def _soak_module() -> object:
    spec = importlib.util.spec_from_file_location("soak", ROOT / "scripts" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["soak"] = module
    spec.loader.exec_module(module)
    return module


def test_a_short_soak_survives_its_kills(tmp_path: Path) -> None:
    soak = _soak_module()
    run_dir = tmp_path / "run"
    report = soak.soak(run_dir, kills=3, seed=0, mode="async", iterations=6,  # type: ignore[attr-defined]
                       gap=(6.0, 12.0), timeout_s=240.0, log=sys.stderr)  # fmt: skip
    soak.print_report(report, sys.stderr)  # type: ignore[attr-defined]
    summary = json.dumps({**report.__dict__}, default=str)
    assert sum(report.kills.values()) == 3, summary
    assert not report.driver_problems, summary  # the error that stopped a driver, if one did
    assert report.driver_exits and report.driver_exits[-1] == 0, summary
    assert report.decisions >= 6, summary
    assert report.kills.get("driver") == 1 and report.resumes >= 1, summary
    assert len(report.corrupted) == 1 and report.data["quarantined"] >= 1, summary  # truncated
    broken = {name: problems for name, problems in report.invariants.items() if problems}
    assert not broken, summary
    assert not report.left_running and not report.left_listening, summary
    assert report.data["games"] > 0 and report.data["shards"] > 0, summary
