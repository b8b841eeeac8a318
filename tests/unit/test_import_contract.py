"""The import contract of ``make lint`` fails on a wrong import and holds without it.

The test copies ``omega_cluster/`` and ``pyproject.toml`` (where the contract lives) to a temporary
directory, adds one deliberately wrong import to one module of the copy, and runs the real
``lint-imports`` on that copy and on an untouched one, for the contract that forbids the import.
The injected import must show up as a broken import, and be the only difference from the untouched
copy. Two contracts that hold on the tree (games/ layered inside, mlflow only in
tracking.py) must go from kept to broken.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

# (file of the copy, line appended to it, contract id, the import the report must name)
INJECTED = [
    # the bottom layer reaching up into training
    ("games/api.py", "import omega_cluster.train.losses", "layers", "omega_cluster.train.losses"),
    # ray outside cluster/
    ("data/shards.py", "import ray", "ray", "ray"),
    # a generic layer naming a game's package instead of asking its plugin
    (
        "players/registry.py",
        "import omega_cluster.games.kuhn_poker",
        "game-packages",
        "omega_cluster.games.kuhn_poker",
    ),
    # the games contract importing a game that implements it
    (
        "games/player.py",
        "import omega_cluster.games.goofspiel",
        "games",
        "omega_cluster.games.goofspiel",
    ),
    # mlflow outside tracking.py
    ("model/network.py", "import mlflow", "mlflow", "mlflow"),
]
KEPT_ON_THE_TREE = ("games", "mlflow")

pytestmark = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="import-linter is not installed (the dev extra has it)"
)


def _copy(dest: Path, rel: str | None = None, line: str = "") -> Path:
    shutil.copytree(
        ROOT / "omega_cluster",
        dest / "omega_cluster",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    if rel is not None:
        path = dest / "omega_cluster" / rel
        path.write_text(path.read_text() + f"\n{line}  # deliberately wrong\n")
    return dest


def _lint(tree: Path, contract: str) -> tuple[int, set[tuple[str, str]]]:
    """The exit status of one contract on ``tree`` and the imports its report names."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "1000", "NO_COLOR": "1"}
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract, "pyproject.toml"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Contracts:" in proc.stdout, proc.stdout + proc.stderr
    edges = set(re.findall(r"(omega_cluster\.[\w.]+) -> ([\w.]+) \(l\.", proc.stdout))
    return proc.returncode, edges


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(tmp_path_factory.mktemp("clean"))


@pytest.mark.parametrize(
    ("rel", "line", "contract", "imported"), INJECTED, ids=[c for _, _, c, _ in INJECTED]
)
def test_a_wrong_import_breaks_its_contract(
    clean: Path, tmp_path: Path, rel: str, line: str, contract: str, imported: str
) -> None:
    clean_rc, clean_edges = _lint(clean, contract)
    wrong_rc, wrong_edges = _lint(_copy(tmp_path, rel, line), contract)
    importer = "omega_cluster." + rel.removesuffix(".py").replace("/", ".")
    assert wrong_rc != 0
    assert wrong_edges - clean_edges == {(importer, imported)}
    if contract in KEPT_ON_THE_TREE:
        assert clean_rc == 0 and not clean_edges
