"""The fault corpus (``cases.yaml``), one test per case.

A case that works on a run directory gets its own copy of one small trained run (kuhn_poker,
``run=smoke``, no Ray, MLflow in the run's sqlite store) prepared once per test process; those
cases are split over two xdist groups so that under ``-n 2 --dist loadgroup`` each worker
prepares the run once. Every case is judged by :func:`fault_corpus.judge` (exit code, words,
one error line, no traceback, no hang, no process left) and
:func:`fault_checks.assert_nothing_lost`, then by its own post-conditions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fault_api import CALLS
from fault_checks import POSTS, assert_nothing_lost, run_posts, snapshot
from fault_corpus import SMOKE, Case, Context, judge, load_cases, run_command
from fault_mutations import MUTATIONS, apply_mutations

CASES = load_cases()


def _marks(index: int, case: Case) -> list[pytest.MarkDecorator]:
    return [pytest.mark.xdist_group(f"faults-{index % 2}")] if case.needs_run else []


@pytest.fixture(scope="session")
def prepared_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One trained run directory: 3 gate decisions, a promoted champion, shards, MLflow."""
    folder = tmp_path_factory.mktemp("prepared")
    ctx = Context(case=Case(id="prepare", kind="command"), tmp=folder, run=folder / "run")
    result = run_command(ctx, [*["train", *SMOKE], f"run.dir={ctx.run}"], timeout=240)
    assert result.returncode == 0 and not result.hung, result.stderr[-3000:]
    return ctx.run


def test_the_corpus_is_well_formed() -> None:
    """Every named mutation, post-condition and call exists; the corpus covers its areas."""
    for case in CASES:
        for step in case.mutation:
            assert step["name"] in MUTATIONS, f"{case.id}: unknown mutation {step['name']}"
        for item in case.post:
            assert item["name"] in POSTS, f"{case.id}: unknown post-condition {item['name']}"
        if case.kind == "api":
            assert case.args and case.args[0] in CALLS, f"{case.id}: unknown call {case.args[:1]}"
    areas = {c.area for c in CASES}
    assert areas >= {"config", "players", "shards", "checkpoints", "run-dirs", "resume",
                     "uris", "cli", "signals", "api"}, areas  # fmt: skip
    assert len(CASES) >= 60


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=_marks(i, c)) for i, c in enumerate(CASES)]
)
def test_case(case: Case, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if case.kind == "api":
        name, *pairs = case.args
        params = dict(p.split("=", 1) for p in pairs)
        problems = CALLS[name](**{k: _scalar(v) for k, v in params.items()})
        assert not problems, f"{case.id} ({case.waits_for or 'holds on main'}): {problems}"
        return
    ctx = Context(case=case, tmp=tmp_path, run=tmp_path / "run")
    if case.needs_run:
        ctx.prepared = request.getfixturevalue("prepared_run")
        shutil.copytree(ctx.prepared, ctx.run, symlinks=True)
    try:
        apply_mutations(ctx)
        before = snapshot(ctx.run)
        result = run_command(ctx, ctx.expand(case.args), timeout=case.timeout)
        problems = judge(case, result)
        assert not problems, f"{case.id} ({case.waits_for or 'holds on main'}): {problems}"
        if case.needs_run:
            assert_nothing_lost(before, ctx.run)
        run_posts(ctx, before)
    finally:
        restore = ctx.facts.get("restore")
        if restore:
            restore()


def _scalar(text: str) -> object:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("[") and text.endswith("]"):
        return [int(x) for x in text[1:-1].split(",") if x.strip()]
    return text
