"""The fault corpus (``cases.yaml``), one test per case.

A case that works on a run directory gets its own copy of a small trained run (kuhn_poker,
``run=smoke``, no Ray; one copy without MLflow, one tracked in the run's sqlite store, each
prepared once per test process: ``conftest.py``). Those cases are split over two xdist groups so
that under ``-n 2 --dist loadgroup`` each worker prepares as few runs as it can
(:func:`_params`). Every case is judged by :func:`fault_corpus.judge` (exit code, words, one
error line, no traceback, no hang, no process left) and :func:`fault_checks.assert_nothing_lost`,
then by its own post-conditions.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fault_api import CALLS
from fault_checks import POSTS, assert_nothing_lost, run_posts, snapshot
from fault_corpus import Case, Context, judge, load_cases, run_command
from fault_mutations import MUTATIONS, apply_mutations

CASES = load_cases()


def _params() -> list[object]:
    """One pytest param per case. The cases on a run directory go to two xdist groups: those on
    the tracked run (the slowest) all to one, so only one worker prepares that run, and two in
    three of the others to the other group."""
    params, untracked = [], 0
    for case in CASES:
        marks = []
        if case.needs_run:
            group = 1 if case.tracked or untracked % 3 == 2 else 0
            untracked += not case.tracked
            marks = [pytest.mark.xdist_group(f"faults-{group}")]
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


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


@pytest.mark.parametrize("case", _params())
def test_case(case: Case, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    if case.kind == "api":
        name, *pairs = case.args
        params = dict(p.split("=", 1) for p in pairs)
        problems = CALLS[name](**{k: _scalar(v) for k, v in params.items()})
        assert not problems, f"{case.id}: {problems}"
        return
    ctx = Context(case=case, tmp=tmp_path, run=tmp_path / "run")
    if case.needs_run:
        fixture = "prepared_tracked_run" if case.tracked else "prepared_run"
        ctx.prepared = request.getfixturevalue(fixture)
        shutil.copytree(ctx.prepared, ctx.run, symlinks=True)
    try:
        apply_mutations(ctx)
        before = snapshot(ctx.run)
        result = run_command(ctx, ctx.expand(case.args), timeout=case.timeout)
        problems = judge(case, result)
        assert not problems, f"{case.id}: {problems}"
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
