"""The fault tests' shared fixtures: small trained run directories, prepared once per test process."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_corpus import SMOKE, UNTRACKED, Case, Context, run_command


def _prepare(folder: Path, overrides: tuple[str, ...]) -> Path:
    ctx = Context(
        Case(id="prepare", kind="command", area="prepare"), tmp=folder, run=folder / "run"
    )
    result = run_command(ctx, ["train", *overrides, f"run.dir={ctx.run}"], timeout=240)
    assert result.returncode == 0 and not result.hung, result.stderr[-3000:]
    return ctx.run


@pytest.fixture(scope="session")
def prepared_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trained run (3 gate decisions, a promoted champion, shards), MLflow off."""
    return _prepare(tmp_path_factory.mktemp("prepared"), UNTRACKED)


@pytest.fixture(scope="session")
def prepared_tracked_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run tracked in MLflow (a sqlite store in the run directory)."""
    return _prepare(tmp_path_factory.mktemp("prepared-tracked"), SMOKE)
