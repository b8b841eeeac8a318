"""A run from nothing in poker read by its exploitability, beside NFSP and CFR+ (issue Zero).

A smoke-sized Kuhn run (``run=zero``'s loop at smoke sizes, in process) keeps each champion's
exploitability in ``pipeline.json``; ``bench/bench_poker_zero.py --quick`` (run as a command:
tests do not import ``bench/``) reads the champions at their promotion, recomputes the rows
the run's state lacks exactly as the gatekeeper computed them, and trains OpenSpiel's NFSP
(a fixed number of episodes, so the check does not depend on the machine's speed) and CFR+
beside them; its curves and plot land in the run's ``plots/``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from omega_cluster.config import load_settings, to_yaml
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.service import run_training

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
UNIFORM = 11 / 24  # Kuhn poker: uniform play's exploitability
MAX = 2.0  # Kuhn poker: no best response gains more than the pot


def _bench(*args: str, results: Path) -> str:
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "OMEGA_RESULTS_DIR": str(results), "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run([sys.executable, "-m", "bench.bench_poker_zero", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_reads_the_champions_and_trains_nfsp_and_cfr_plus(tmp_path: Path) -> None:
    root = tmp_path / "run"
    settings = load_settings(["run=zero", "game=kuhn_poker", "cluster=inprocess", "model=small",
                              "run.iterations=2", "run.games_per_iteration=16",
                              "search.simulations=16", "gate.bench_simulations=16",
                              "gate.mode=fixed", "gate.games_per_slice=20", "gate.anchor_games=0",
                              "gate.anchor_network_games=0", "learner.batch_size=64",
                              "learner.min_rows=32", "learner.steps_per_candidate=60",
                              "cluster.games_per_chunk=8", "cluster.concurrent_games=4",
                              "tracking.enabled=false", "run.progress=false",
                              f"run.dir={root}"])  # fmt: skip
    run_training(settings, config_yaml=to_yaml(settings), progress=False)
    state_path = root / "pipeline.json"
    state = json.loads(state_path.read_text())
    kept = {(r["version"], r["player"]): r["value"] for r in state["exploitability"]}
    assert {(0, "network"), (0, "search")} <= set(kept)
    state["exploitability"] = [r for r in state["exploitability"] if r["version"] != 0]
    state_path.write_text(json.dumps(state))  # v0's rows missing: the bench computes them

    out = _bench("--run", str(root), "--quick", "--seed", "5", results=tmp_path / "results")
    assert "v0: exploitability of network, search computed here" in out
    assert not (tmp_path / "results").exists()  # --quick records nothing
    data = json.loads((root / "plots" / "bench-exploitability.json").read_text())
    assert (root / "plots" / "bench-exploitability.png").stat().st_size > 1000
    assert data["uniform"] == pytest.approx(UNIFORM)

    champions = data["run"]["champions"]
    registry = ModelRegistry(root, game="kuhn_poker")
    promoted = [v.version for v in registry.versions if v.status in ("champion", "retired")]
    assert [c["version"] for c in champions] == promoted and champions[0]["minutes"] == 0.0
    for a, b in itertools.pairwise(champions):  # in the order of their promotion
        assert a["minutes"] <= b["minutes"] and a["games"] <= b["games"]
    assert champions[-1]["minutes"] <= data["run"]["minutes"]
    assert 0 < data["run"]["games"] == state["games"]
    for c in champions:
        assert 0.0 <= c["network"] <= MAX and 0.0 <= c["search"] <= MAX
        for kind in ("network", "search"):  # recomputed for v0 as the gatekeeper computed it
            assert c[kind] == pytest.approx(kept[c["version"], kind], abs=1e-12)
    assert {v for v, _ in data["run"]["snapshots"]} <= {v.version for v in registry.versions}

    nfsp, cfr_plus = data["nfsp"], data["cfr_plus"]
    for curve in (nfsp, cfr_plus):
        assert [p["seconds"] for p in curve] == sorted(p["seconds"] for p in curve)
        assert [p["games"] for p in curve] == sorted(p["games"] for p in curve)
        assert all(0.0 <= p["value"] <= MAX for p in curve)
    assert nfsp[-1]["games"] == 12_000  # --quick: a fixed number of episodes
    # NFSP's average policy learned something: below its start and below uniform play
    assert nfsp[-1]["value"] < min(nfsp[0]["value"], UNIFORM) - 0.02
    assert cfr_plus[0]["value"] == pytest.approx(UNIFORM)  # its first average policy: uniform
    assert cfr_plus[-1]["value"] < 1e-3  # the floor: stopped below FLOOR
