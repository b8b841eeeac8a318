"""The checks of the fault corpus: the no-loss invariant every case keeps, and the named
post-conditions a case lists (``post:`` in ``cases.yaml``) when its correct recovery is a
command that succeeds.

*Nothing already written is lost*: :func:`snapshot` records, just before the command, what the run
holds — shard files, the shards that have manifest entries, checkpoints, registry versions, gate
decisions — and :func:`assert_nothing_lost` checks afterwards that each is still there, or, for a
shard and its entry, moved to ``quarantine/`` with a reason file that names it (quarantine moves,
it never deletes).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from fault_corpus import Context, has_words
from fault_mutations import digest_tree
from run_invariants import check_run, manifest_entries, quarantined_files


@dataclass(frozen=True)
class Snapshot:
    shard_files: frozenset[str]  # names in shards/shards/ (temporary files aside)
    committed: dict[str, str]  # shard file name -> its manifest key, for parseable entries
    manifest_files: frozenset[str]  # names in shards/manifest/
    models: dict[str, frozenset[str]]  # models/v<k> -> its files
    versions: frozenset[int]  # registry.json versions
    decisions: int  # pipeline.json decisions
    config: bytes | None  # config.yaml


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def snapshot(run: Path) -> Snapshot:
    store = run / "shards"
    shard_dir, manifest_dir = store / "shards", store / "manifest"
    entries, _ = manifest_entries(store) if manifest_dir.is_dir() else ([], [])
    models = run / "models"
    registry = _json(run / "registry.json")
    state = _json(run / "pipeline.json")
    return Snapshot(
        shard_files=frozenset(p.name for p in shard_dir.glob("*") if not p.name.startswith("."))
        if shard_dir.is_dir() else frozenset(),
        committed={Path(e["shard_path"]).name: e.get("key", "") for e in entries},
        manifest_files=frozenset(p.name for p in manifest_dir.glob("*.json")),
        models={p.name: frozenset(f.name for f in p.iterdir())
                for p in models.glob("v*") if p.is_dir()} if models.is_dir() else {},
        versions=frozenset(v["version"] for v in registry["versions"])
        if isinstance(registry, dict) and isinstance(registry.get("versions"), list) else frozenset(),
        decisions=state.get("decisions", 0) if isinstance(state, dict) else 0,
        config=(run / "config.yaml").read_bytes() if (run / "config.yaml").is_file() else None,
    )  # fmt: skip


def _reasons(store: Path) -> str:
    folder = store / "quarantine"
    return "\n".join(p.read_text() for p in folder.glob("*.reason.json")) if folder.is_dir() else ""


def assert_nothing_lost(before: Snapshot, run: Path) -> None:
    """Module docstring; raises AssertionError naming what went missing."""
    after = snapshot(run)
    store = run / "shards"
    quarantine = quarantined_files(store)
    reasons = _reasons(store)
    lost = [f"shards/{n}" for n in sorted(before.shard_files - after.shard_files - quarantine)]
    for name, key in sorted(before.committed.items()):
        if name in after.committed:
            continue
        moved = {name, f"{key}.json.manifest.json"} & quarantine  # the shard or its entry
        if not moved or (name not in reasons and key not in reasons):
            lost.append(
                f"the manifest entry of {name} (not re-committed, not quarantined with a reason)"
            )
    shard_of = {key: shard for shard, key in before.committed.items()}
    for name in sorted(before.manifest_files - after.manifest_files):
        moved = {name, f"{name}.manifest.json"} & quarantine
        rekeyed = shard_of.get(name[:-5]) in after.committed
        if not moved and not rekeyed:
            lost.append(f"manifest/{name}")
    for version, files in sorted(before.models.items()):
        if not files <= after.models.get(version, frozenset()):
            lost.append(
                f"models/{version}/{sorted(files - after.models.get(version, frozenset()))}"
            )
    lost += [f"registry version v{v}" for v in sorted(before.versions - after.versions)]
    if after.decisions < before.decisions:
        lost.append(f"gate decisions: {before.decisions} before, {after.decisions} after")
    assert not lost, f"lost what was written: {lost}"


# -- post-conditions ----------------------------------------------------------------------------------
POSTS: dict[str, Callable[..., None]] = {}


def post(fn: Callable[..., None]) -> Callable[..., None]:
    POSTS[fn.__name__] = fn
    return fn


def run_posts(ctx: Context, before: Snapshot) -> None:
    for item in ctx.case.post:
        params = {k: v for k, v in item.items() if k != "name"}
        POSTS[item["name"]](ctx, before, **params)


def _state(ctx: Context) -> dict[str, Any]:
    state = _json(ctx.run / "pipeline.json")
    assert isinstance(state, dict), "pipeline.json is missing or unreadable after the command"
    return state


@post
def decisions(ctx: Context, before: Snapshot, equal: int) -> None:
    """The run continued to (and stopped at) ``equal`` gate decisions."""
    got = _state(ctx).get("decisions")
    assert got == equal, f"pipeline.json has {got} gate decisions, expected {equal}"


@post
def quarantined(ctx: Context, before: Snapshot, words: list[str], count: int = 1) -> None:
    """At least ``count`` reason files in quarantine/; one holds ``words`` (``a|b``: either)."""
    folder = ctx.run / "shards" / "quarantine"
    notes = [p.read_text() for p in folder.glob("*.reason.json")] if folder.is_dir() else []
    assert len(notes) >= count, f"{len(notes)} items quarantined, expected >= {count}"
    assert any(not has_words(n, words) for n in notes), (
        f"no quarantine reason holds {words}: {notes}"
    )


@post
def recommitted(ctx: Context, before: Snapshot) -> None:
    """The shard whose entry was lost is visible again: an entry names it."""
    after = snapshot(ctx.run)
    missing = [s for s in ctx.facts["shards"] if s not in after.committed]
    assert not missing, f"orphan shard(s) {missing} were not re-committed"


@post
def said(ctx: Context, before: Snapshot, words: list[str]) -> None:
    """The command's output (stdout and stderr) holds ``words``."""
    missing = has_words(ctx.results[-1].output, words)
    assert not missing, f"the output lacks {missing}"


@post
def invariants(ctx: Context, before: Snapshot) -> None:
    """Every invariant of run_invariants.check_run holds."""
    broken = {k: v for k, v in check_run(ctx.run).items() if v}
    assert not broken, f"run invariants broken: {broken}"


@post
def learner_consumed_new_shards(ctx: Context, before: Snapshot) -> None:
    """The last candidate was trained on every shard written after the resume: its replay
    position moved past all of them (the learner's rows_seen grew by at least their rows)."""
    registry = _json(ctx.run / "registry.json")
    seen = [v["metrics"].get("rows_seen", 0) for v in registry["versions"] if v.get("metrics")]
    new_rows = sum(int(e["rows"]) for e in manifest_entries(ctx.run / "shards")[0]
                   if Path(e["shard_path"]).name not in before.shard_files)  # fmt: skip
    prepared = _json(ctx.prepared / "registry.json") if ctx.prepared else None
    start = (
        max(v["metrics"].get("rows_seen", 0) for v in prepared["versions"] if v.get("metrics"))
        if prepared
        else 0
    )
    assert new_rows > 0, "no shard was written after the resume"
    assert seen and seen[-1] >= start + new_rows, (
        f"the learner saw {seen[-1] - start:.0f} new rows of the {new_rows} written after the resume"
    )


@post
def original_untouched(ctx: Context, before: Snapshot) -> None:
    """The original of a copied run: every file byte-identical, no file added."""
    original: Path = ctx.facts["original"]
    now = digest_tree(original)
    was = ctx.facts["original_digest"]
    changed = sorted(k for k in was if now.get(k) != was[k])
    added = sorted(set(now) - set(was))
    assert not changed and not added, f"the original changed: {changed[:5]}, added {added[:5]}"


# pipeline.json's provenance: where the run was created, the MLflow store it was tracked in and
# the log of resumes (read only to detect a copy or a move, never to read or write run data)
_PROVENANCE = frozenset({"root", "tracking_uri", "resumes"})


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for k, v in node.items() if k not in _PROVENANCE for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _is_path(text: str) -> bool:
    """An absolute path on this machine: its first component exists (``/tmp/...``), unlike a
    base64 field that happens to start with ``/`` (a packed replay position, an RNG state)."""
    parts = Path(text).parts
    return text.startswith("/") and len(parts) > 1 and Path("/", parts[1]).exists()


@post
def independent(ctx: Context, before: Snapshot) -> None:
    """A copied or moved run names no path outside itself in its own records (registry,
    pipeline state, learner and checkpoint metadata): paths inside a run are relative to it."""
    files = [ctx.run / "registry.json", ctx.run / "pipeline.json", *ctx.run.glob("learner/*.json"),
             *ctx.run.glob("models/*/metadata.json")]  # fmt: skip
    outside = []
    for f in files:
        data = _json(f)
        for text in _strings(data):
            path = text.removeprefix("file://")
            if _is_path(path) and not path.startswith(str(ctx.run)):
                outside.append(f"{f.relative_to(ctx.run)}: {text}")
    assert not outside, f"the run names paths outside itself: {outside[:3]}"


@post
def config_unchanged(ctx: Context, before: Snapshot) -> None:
    now = (ctx.run / "config.yaml").read_bytes() if (ctx.run / "config.yaml").is_file() else None
    assert now == before.config, "config.yaml was rewritten by a command that was refused"


@post
def config_says(ctx: Context, before: Snapshot, key: str, value: Any) -> None:
    """config.yaml holds ``key`` (dotted) = ``value``."""
    node: Any = yaml.safe_load((ctx.run / "config.yaml").read_text())
    for part in key.split("."):
        node = node[part]
    assert node == value, f"config.yaml says {key}={node!r}, expected {value!r}"


@post
def mlflow_status(ctx: Context, before: Snapshot, status: str = "FINISHED") -> None:
    """The run's MLflow run (pipeline.json's id, in the run's own sqlite store) has ``status``."""
    run_id = _state(ctx).get("mlflow_run_id")
    with sqlite3.connect(ctx.run / "mlflow.db") as db:
        row = db.execute("SELECT status FROM runs WHERE run_uuid = ?", (run_id,)).fetchone()
    assert row is not None, f"MLflow run {run_id} is not in the run's store"
    assert row[0] == status, f"MLflow run {run_id} is {row[0]}, expected {status}"


@post
def interrupted_cleanly(ctx: Context, before: Snapshot, exits: list[int]) -> None:
    """The interrupted first command stopped by itself with one of ``exits`` and no traceback."""
    result = ctx.facts["interrupted"]
    assert result.returncode in exits, (
        f"the interrupted driver exited {result.returncode}, expected {exits}"
    )
    assert not result.leftovers, f"the interrupted driver left processes: {result.leftovers}"
