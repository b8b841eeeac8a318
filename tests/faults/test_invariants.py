"""The run invariants (``run_invariants.py``) hold on a sound run and catch each way of breaking
them: a game in two shards, a chunk written twice, a half-visible shard, a counter off, a
promotion without a won gate. A check that cannot fail would let the corpus and the soak pass
whatever happened."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from run_invariants import INVARIANTS, check_run, manifest_entries

pytestmark = pytest.mark.xdist_group("faults-0")


def _edit(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _twice(run: Path) -> None:
    """The first shard committed a second time under another key, by the same writer."""
    entry = manifest_entries(run / "shards")[0][0]
    copy = run / "shards" / "shards" / ("copy-" + Path(entry["shard_path"]).name)
    shutil.copy(run / "shards" / entry["shard_path"], copy)
    key = entry["key"][:-6] + "999999"
    twin = {**entry, "key": key, "shard_path": f"shards/{copy.name}"}
    (run / "shards" / "manifest" / f"{key}.json").write_text(json.dumps(twin))


def _half_visible(run: Path) -> None:
    entry = manifest_entries(run / "shards")[0][0]
    (run / "shards" / entry["shard_path"]).unlink()


def _counter(run: Path) -> None:
    _edit(run / "pipeline.json", lambda d: d.update(records=d["records"] + 1))


def _unearned(run: Path) -> None:
    """A rejected candidate marked champion, the real champion retired."""

    def change(registry: dict) -> None:
        for version in registry["versions"]:
            if version["status"] == "champion":
                version["status"] = "retired"
        registry["versions"][-1]["status"] = "champion"

    _edit(run / "registry.json", change)


def test_a_sound_run_holds_every_invariant(prepared_run: Path) -> None:
    assert check_run(prepared_run) == {name: [] for name in INVARIANTS}


@pytest.mark.parametrize(
    ("breakage", "broken"),
    [
        (_twice, {"games_once", "chunks_once", "counters"}),
        (_half_visible, {"no_half_visible", "games_once", "counters"}),
        (_counter, {"counters"}),
        (_unearned, {"champion_chain"}),
    ],
    ids=["game-twice", "half-visible", "counter", "unearned-promotion"],
)
def test_each_breakage_is_caught(
    prepared_run: Path, tmp_path: Path, breakage: Callable[[Path], None], broken: set[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(prepared_run, run)
    breakage(run)
    problems = check_run(run)
    assert {name for name, found in problems.items() if found} == broken, problems
