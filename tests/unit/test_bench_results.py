"""``python -m bench.results`` renders the results tables from the benchmarks' JSON files.

Run as a command (tests do not import ``bench/``), on a temporary root holding a sample JSON and
two documents with the table markers: the tables appear between the markers, the text around them
is kept, and ``--check`` tells an up-to-date document from a stale one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# bench.results.TABLES: docs/results.md's
TABLES = ("speed", "strength", "baselines", "zero", "zero_own", "exploitability_leduc_poker",
          "exploitability_kuhn_poker")  # fmt: skip

SAMPLE = {
    "bench": "bench_sample",
    "figures": [
        {
            "name": "sample sims/s",
            "figure": "1,234",
            "reference": "a | reference 617",
            "ratio": "2.00×",
            "command": "python -m bench.bench_sample",
            "table": "speed",
            "headline": "sample speed",
            "date": "2026-12-01",
            "source": "abc1234",
        },
        {
            "name": "sample vs random",
            "figure": "win rate 60.0% [55.1, 64.7]",
            "reference": "random",
            "ratio": "bar 55%: met",
            "command": "python -m bench.bench_sample --strength",
            "table": "strength",
            "headline": "",
            "date": "2026-11-30",
            "source": "README at def5678",
        },
    ],
}


def _results(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.results", "--root", str(root), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _markers(*tables: str) -> str:
    return "".join(
        f"intro {t}\n<!-- results:{t} -->\nold\n<!-- /results:{t} -->\nafter\n" for t in tables
    )


def test_the_tables_are_rendered_from_the_json(tmp_path: Path) -> None:
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "bench_sample.json").write_text(json.dumps(SAMPLE))
    (tmp_path / "docs" / "results.md").write_text(_markers(*TABLES))
    (tmp_path / "README.md").write_text(_markers("headline"))
    assert _results(tmp_path, "--check").returncode == 1  # "old" is not the table
    done = _results(tmp_path)
    assert done.returncode == 0, done.stderr
    assert _results(tmp_path, "--check").returncode == 0

    results = (tmp_path / "docs" / "results.md").read_text()
    assert (
        "old" not in results and results.count("after") == len(TABLES) and "intro speed" in results
    )
    speed = results.split("<!-- results:speed -->\n")[1].split("<!-- /results:speed -->")[0]
    assert speed.splitlines() == [
        "| benchmark | figure | reference (same run) | ratio / bar | command | measured |",
        "|---|---|---|---|---|---|",
        "| sample sims/s | 1,234 | a \\| reference 617 | 2.00× | `python -m bench.bench_sample`"
        " | 2026-12-01, abc1234 |",
    ]
    strength = results.split("<!-- results:strength -->\n")[1]
    assert "| sample vs random | win rate 60.0% [55.1, 64.7] | random | bar 55%: met |" in strength
    assert "sample sims/s" not in strength
    readme = (tmp_path / "README.md").read_text()
    assert "| sample speed | 1,234 | a \\| reference 617 | 2.00× |" in readme
    assert "sample vs random" not in readme  # no headline label: not in the README


def test_the_committed_tables_match_the_committed_json() -> None:
    """docs/results.md and the README's table are what the script writes, not edited by hand."""
    check = _results(ROOT, "--check")
    assert check.returncode == 0, check.stdout + check.stderr


RECORD = """
from bench.results import Figure, record
record("bench_sample", [Figure("speed a", "1"), Figure("strength a", "0.5", table="strength")])
record("bench_sample", [Figure("speed b", "2")])  # a speed run replaces every speed figure
record("bench_sample", [Figure("strength b", "0.6", table="strength")])  # strength: by name
record("bench_sample", [Figure("strength a", "0.7", table="strength")], quick=True)  # not kept
"""


def _record(code: str, results: Path) -> None:
    """Run ``code`` (calls of ``record``) in a fresh interpreter writing into ``results``."""
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "OMEGA_RESULTS_DIR": str(results)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr


def test_record_replaces_speed_figures_and_keeps_strength_ones(tmp_path: Path) -> None:
    _record(RECORD, tmp_path)
    figures = json.loads((tmp_path / "bench_sample.json").read_text())["figures"]
    assert [(f["name"], f["figure"]) for f in figures] == [
        ("strength a", "0.5"),
        ("speed b", "2"),
        ("strength b", "0.6"),
    ]
    assert all(f["date"] and f["source"] for f in figures)


POKER_ROWS = """
from bench.results import Figure, record
table = "exploitability_kuhn_poker"
record("bench_sample", [Figure("strength a", "0.5", table="strength"),
                        Figure("v0, kuhn_poker", "0.45", table=table),
                        Figure("v3, kuhn_poker", "0.30", table=table)])
record("bench_sample", [Figure("v1, kuhn_poker", "0.40", table=table)])  # a new run: its rows only
"""


def test_a_poker_table_is_replaced_whole_by_a_new_run(tmp_path: Path) -> None:
    """One run measures a poker game's table whole: a new run's rows replace the old run's
    (whose champions need not recur), and the benchmark's other figures stay."""
    _record(POKER_ROWS, tmp_path)
    figures = json.loads((tmp_path / "bench_sample.json").read_text())["figures"]
    assert [(f["name"], f["figure"]) for f in figures] == [
        ("strength a", "0.5"),
        ("v1, kuhn_poker", "0.40"),
    ]


CURVE_ROWS = """
from bench.results import Figure, record
record("bench_sample", [Figure("after 500 games (v2)", "1.01", table="strength"),
                        Figure("after 1,000 games (v4)", "1.02", table="strength")])
record("bench_sample", [Figure("after 800 games (v3)", "1.05", table="strength")], whole=True)
"""


def test_a_learning_curve_is_replaced_whole_by_a_new_run(tmp_path: Path) -> None:
    """A curve is one run's: the points of a new run replace the old run's, whose names differ."""
    _record(CURVE_ROWS, tmp_path)
    figures = json.loads((tmp_path / "bench_sample.json").read_text())["figures"]
    assert [(f["name"], f["figure"]) for f in figures] == [("after 800 games (v3)", "1.05")]


BASELINE_ROW = """
from bench.results import Figure, record
cells = ("5", "service 5.5 min, PPO 5.2 min", "0.61 [0.56, 0.66]", "0.70 [0.65, 0.74]",
         "0.40 [0.35, 0.45]", "0.66 [0.61, 0.70]", "0.75 [0.71, 0.79]")
record("bench_baselines", [Figure("service vs RLlib PPO at equal wall-clock, leduc_poker",
       "0.75 [0.71, 0.79]", "RLlib PPO, 5 min each", "0.5 = equal strength", "python -m x",
       table="baselines", headline="leduc: service vs PPO", cells=cells)])
"""


def test_a_baselines_row_is_recorded_and_rendered_cell_by_cell(tmp_path: Path) -> None:
    """bench_baselines' rows: one per game, the game then its cells; the headline in the README."""
    results = tmp_path / "docs" / "results"
    _record(BASELINE_ROW, results)
    figure = json.loads((results / "bench_baselines.json").read_text())["figures"][0]
    assert figure["table"] == "baselines" and len(figure["cells"]) == 7
    (tmp_path / "docs" / "results.md").write_text(_markers(*TABLES))
    (tmp_path / "README.md").write_text(_markers("headline"))
    assert _results(tmp_path).returncode == 0
    text = (tmp_path / "docs" / "results.md").read_text()
    table = text.split("<!-- results:baselines -->\n")[1].split("<!-- /results:baselines -->")[0]
    lines = table.splitlines()
    assert lines[0].startswith("| game | minutes per side |") and len(lines) == 3
    assert lines[2].startswith(
        "| leduc_poker | 5 | service 5.5 min, PPO 5.2 min | 0.61 [0.56, 0.66] | 0.70 [0.65, 0.74]"
        " | 0.40 [0.35, 0.45] | 0.66 [0.61, 0.70] | 0.75 [0.71, 0.79] | `python -m x` |"
    )
    assert lines[0].count("|") == lines[2].count("|")  # as many cells as columns
    assert "leduc_poker" not in text.split("<!-- results:strength -->")[1].split("<!-- /")[0]
    readme = (tmp_path / "README.md").read_text()
    assert "| leduc: service vs PPO | 0.75 [0.71, 0.79] | RLlib PPO, 5 min each |" in readme


def test_make_bench_runs_only_benches_that_need_no_arguments() -> None:
    """`make bench` (``python -m bench``) runs every bench outside ``STRENGTH`` with no
    arguments: one that requires an argument (a run, a cohort) must be a strength bench, run
    when named, or the bare command stops at its usage error."""
    import ast

    from bench.__main__ import STRENGTH

    root = Path(__file__).resolve().parents[2] / "bench"
    needs = set()
    for path in sorted(root.glob("bench_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.keyword) and node.arg == "required"):
                continue
            if isinstance(node.value, ast.Constant) and node.value.value is True:
                needs.add(path.stem)
    assert needs and needs <= set(STRENGTH), sorted(needs - set(STRENGTH))
