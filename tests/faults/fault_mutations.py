"""The named mutations of the fault corpus: what a case does to its copy of the prepared run
before its command runs (``cases.yaml`` names them; parameters are keyword arguments).

Each is ``mutation(ctx, **params)``: it changes files under ``ctx.run`` (or moves the run, or
arranges how the command is started), and notes in ``ctx.facts`` what a post-condition needs to
know (the shard it damaged, the original of a copy). Shard mutations that change values keep the
file well-formed and fix its manifest size and checksum, so that only the value checks of the
store can catch them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from fault_corpus import Context, run_command
from run_invariants import manifest_entries

MUTATIONS: dict[str, Callable[..., None]] = {}


def mutation(fn: Callable[..., None]) -> Callable[..., None]:
    MUTATIONS[fn.__name__] = fn
    return fn


def apply_mutations(ctx: Context) -> None:
    for step in ctx.case.mutation:
        params = {k: v for k, v in step.items() if k != "name"}
        MUTATIONS[step["name"]](ctx, **params)


def _store(ctx: Context) -> Path:
    return ctx.run / "shards"


def _entry(ctx: Context, which: str) -> tuple[Path, dict[str, Any]]:
    """The manifest file and entry of the first or last (by key) shard of the run."""
    entries, _ = manifest_entries(_store(ctx))
    entry = entries[0] if which == "first" else entries[-1]
    ctx.facts.setdefault("shards", []).append(Path(entry["shard_path"]).name)
    ctx.facts.setdefault("keys", []).append(entry["key"])
    return _store(ctx) / "manifest" / f"{entry['key']}.json", entry


def _file(ctx: Context, relative: str) -> Path:
    return Path(relative.format(run=ctx.run, champion=ctx.champion().relative_to(ctx.run)))


def _path(ctx: Context, relative: str) -> Path:
    path = _file(ctx, relative)
    return path if path.is_absolute() else ctx.run / path


# -- shards and manifest entries ---------------------------------------------------------------------
@mutation
def truncate_shard(ctx: Context, which: str = "first") -> None:
    _, entry = _entry(ctx, which)
    path = _store(ctx) / entry["shard_path"]
    path.write_bytes(path.read_bytes()[: entry["bytes"] // 2])


@mutation
def flip_shard_byte(ctx: Context, which: str = "first") -> None:
    """One byte changed in the middle: same size, another checksum."""
    _, entry = _entry(ctx, which)
    path = _store(ctx) / entry["shard_path"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


@mutation
def delete_shard_file(ctx: Context, which: str = "first") -> None:
    """An entry without its file."""
    _, entry = _entry(ctx, which)
    (_store(ctx) / entry["shard_path"]).unlink()


@mutation
def delete_manifest_entry(ctx: Context, which: str = "first") -> None:
    """A shard without its entry (an orphan): sound, and invisible until it is re-committed."""
    manifest, _ = _entry(ctx, which)
    manifest.unlink()


@mutation
def garbage_manifest_entry(ctx: Context, which: str = "first", text: str = "{not json") -> None:
    manifest, _ = _entry(ctx, which)
    manifest.write_text(text)


@mutation
def edit_manifest_entry(ctx: Context, which: str = "first", **values: Any) -> None:
    manifest, entry = _entry(ctx, which)
    manifest.write_text(json.dumps({**entry, **values}, indent=1))


@mutation
def far_future_key(ctx: Context, which: str = "last") -> None:
    """The entry re-keyed to sort after every real key (a writer whose clock runs far ahead)."""
    manifest, entry = _entry(ctx, which)
    key = "0" + "9" * 19 + entry["key"][20:]
    manifest.unlink()
    (manifest.parent / f"{key}.json").write_text(json.dumps({**entry, "key": key}, indent=1))
    ctx.facts["future_key"] = key


def _rewrite_shard(ctx: Context, which: str, change: Callable[[pa.Table], pa.Table]) -> None:
    """The shard's table changed by ``change``, written back whole, its entry's size and
    checksum fixed: a shard that passes every check but the values'."""
    manifest, entry = _entry(ctx, which)
    path = _store(ctx) / entry["shard_path"]
    table = change(pa.ipc.open_file(str(path)).read_all())
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    payload = sink.getvalue().to_pybytes()
    path.write_bytes(payload)
    fixed = {**entry, "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    manifest.write_text(json.dumps(fixed, indent=1))


def _replace(table: pa.Table, name: str, values: list[Any]) -> pa.Table:
    index = table.schema.get_field_index(name)
    return table.set_column(index, table.schema.field(index), pa.array(values, table[name].type))


@mutation
def shard_values(ctx: Context, column: str, value: str, which: str = "first") -> None:
    """Every value of ``column`` (a float or a list of floats) set to ``value`` (nan, inf, 2.5)."""
    number = float(value)

    def change(table: pa.Table) -> pa.Table:
        rows = table[column].to_pylist()
        return _replace(table, column, [None if r is None else
                                        [number] * len(r) if isinstance(r, list) else number
                                        for r in rows])  # fmt: skip

    _rewrite_shard(ctx, which, change)


@mutation
def policy_targets(ctx: Context, how: str, which: str = "first") -> None:
    """Policy targets that do not sum to 1 (``how=double``) or leave [0, 1] (``how=negative``:
    +1 on the first action, -1 on the second, the sum still 1)."""

    def bad(target: list[float]) -> list[float]:
        if how == "double":
            return [2 * p for p in target]
        return [target[0] + 1.0, target[1] - 1.0, *target[2:]]

    def change(table: pa.Table) -> pa.Table:
        rows = table["policy_target"].to_pylist()
        return _replace(table, "policy_target",
                        [r if r is None or len(r) < 2 else bad(r) for r in rows])  # fmt: skip

    _rewrite_shard(ctx, which, change)


@mutation
def temp_file(
    ctx: Context, name: str = ".01796000000000000000-chunk00000099-000001.arrow.tmp"
) -> None:
    """Debris of a writer that died mid-upload, dated an hour back."""
    path = _store(ctx) / "shards" / name
    path.write_bytes(b"half a shard")
    old = path.stat().st_mtime - 3600
    os.utime(path, (old, old))


# -- files of the run ----------------------------------------------------------------------------------
@mutation
def truncate(ctx: Context, file: str, keep: float = 0.5) -> None:
    path = _path(ctx, file)
    path.write_bytes(path.read_bytes()[: int(path.stat().st_size * keep)])


@mutation
def write(ctx: Context, file: str, text: str) -> None:
    """A file of the run (or of the case's folder: ``{tmp}/...``) overwritten with ``text``."""
    path = Path(file.format(tmp=ctx.tmp)) if file.startswith("{tmp}") else _path(ctx, file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@mutation
def delete(ctx: Context, path: str) -> None:
    target = _path(ctx, path)
    shutil.rmtree(target) if target.is_dir() else target.unlink()


@mutation
def edit_json(ctx: Context, file: str, set: dict[str, Any] | None = None,
              add: dict[str, int] | None = None) -> None:  # fmt: skip
    """Top-level keys of a JSON file set to values, or numbers moved by ``add``."""
    path = _path(ctx, file)
    data = json.loads(path.read_text())
    data.update(set or {})
    for key, delta in (add or {}).items():
        data[key] += delta
    path.write_text(json.dumps(data, indent=1))


# -- the run directory -------------------------------------------------------------------------------
def digest_tree(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``root``."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


@mutation
def copy_run(ctx: Context) -> None:
    """The command works on a copy; the original must come out untouched."""
    copy = ctx.tmp / "copied" / "run"
    shutil.copytree(ctx.run, copy, symlinks=True)
    ctx.facts["original"] = ctx.run
    ctx.facts["original_digest"] = digest_tree(ctx.run)
    ctx.run = copy


@mutation
def move_run(ctx: Context) -> None:
    target = ctx.tmp / "moved" / "run"
    target.parent.mkdir(parents=True)
    shutil.move(ctx.run, target)
    ctx.facts["original"] = ctx.run
    ctx.run = target


@mutation
def read_only(ctx: Context) -> None:
    """The run directory read-only: by permissions, or for root (whom permissions do not stop)
    by running the command in a mount namespace where the directory is a read-only bind mount."""
    subprocess.run(["chmod", "-R", "a-w", str(ctx.run)], check=True)
    ctx.facts["restore"] = lambda: subprocess.run(["chmod", "-R", "u+w", str(ctx.run)], check=True)
    if os.geteuid() != 0:
        return
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
    touch = f"touch '{ctx.run}/probe' 2>/dev/null; echo mounted"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", script, str(ctx.run), "sh", "-c", touch],
                           capture_output=True, text=True)  # fmt: skip
    if "mounted" not in probe.stdout or (ctx.run / "probe").exists():
        raise RuntimeError(
            "running as root without mount namespaces: cannot make a directory read-only"
        )
    ctx.wrapper = ["unshare", "-m", "sh", "-c", script, str(ctx.run)]


# -- the driver killed or interrupted ------------------------------------------------------------------
@mutation
def interrupt_driver(ctx: Context, args: list[str], signum: str = "SIGKILL",
                     timeout: float = 90.0) -> None:  # fmt: skip
    """Run ``args`` and send it ``signum`` once it has written a shard more than the run had."""
    count = len(manifest_entries(_store(ctx))[0])

    def wrote_one() -> bool:
        return len(list((_store(ctx) / "manifest").glob("*.json"))) > count

    sig = signal.Signals[signum]
    result = run_command(ctx, ctx.expand(args), timeout=timeout, signal_when=(wrote_one, sig))
    ctx.facts["interrupted"] = result
    if result.hung:
        raise AssertionError(f"after {signum} the driver did not stop within {timeout:.0f} s")
    if "Traceback (most recent call last)" in result.output and sig != signal.SIGKILL:
        raise AssertionError(
            f"after {signum} the driver printed a traceback: {result.stderr[-800:]}"
        )
    ctx.facts["python"] = sys.executable
