"""Resuming a run, as a user does it: tiny Kuhn poker runs in this process (``cluster=inprocess``)
tracked in a real MLflow sqlite store inside the run directory.

* a copied run directory resumed elsewhere is independent: the original's files (config, state,
  registry, plots, Elo log, MLflow store and artifacts) stay byte-identical, the copy reads and
  writes its own champions and artifacts; a moved run resumes;
* the saved ``config.yaml`` is the truth: an override that changes what was trained is refused
  (exit 2, one line naming the keys with both values, nothing rewritten), a resume without the
  preset keeps the saved settings, a safe override (more iterations, another tracking store) is
  applied and recorded;
* counters are recomputed from the manifest (a shard written just before the driver was killed);
* every counter a run reports (pipeline.json, the summary line, MLflow) is the live manifest's
  after a shard is quarantined, for each way a shard can fail its checks;
* an MLflow run left RUNNING by a dead driver is marked KILLED, then resumed (by its run id,
  through the CLI), then FINISHED.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from mlflow import MlflowClient

from omega_cluster.cli import main
from omega_cluster.config import ConfigError, load_settings, to_yaml
from omega_cluster.data import SCHEMA_VERSION, ShardStore, store_totals, validate_table
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.pipeline.driver import LocalBackend, Pipeline, RunPaths
from omega_cluster.service import RunResult, run_training
from omega_cluster.tracking import STATUS_HISTORY_TAG

pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")

TINY = ["run=smoke", "game=kuhn_poker", "cluster=inprocess", "run.progress=false",
        "run.iterations=1", "gate.anchor_games=0", "tracking.log_onnx=false"]  # fmt: skip


def _train(overrides: list[str]) -> RunResult:
    settings = load_settings(overrides)
    return run_training(settings, config_yaml=to_yaml(settings), progress=False)


def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}  # fmt: skip


def _client(root: Path) -> MlflowClient:
    uri = f"sqlite:///{root}/mlflow.db"
    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def _state(root: Path) -> dict[str, Any]:
    return dict(json.loads((root / "pipeline.json").read_text()))


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty MLflow sqlite store, schema migrated (seconds), to copy where a store goes."""
    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory, migrated_db: Path) -> Path:
    """One finished tiny run (one gate decision) with its own MLflow store; tests copy it."""
    root = tmp_path_factory.mktemp("trained") / "run"
    root.mkdir()
    shutil.copy(migrated_db, root / "mlflow.db")
    result = _train([*TINY, f"run.dir={root}"])
    assert result.state.decisions == 1 and result.mlflow_run_id
    return root


def _with_store(where: Path, migrated_db: Path) -> Path:
    """A new directory holding a copy of the migrated MLflow store."""
    where.mkdir()
    shutil.copy(migrated_db, where / "mlflow.db")
    return where


def _copy(trained: Path, where: Path) -> Path:
    shutil.copytree(trained, where)
    return where


def test_a_copied_run_is_independent_and_a_moved_run_resumes(trained: Path, tmp_path: Path) -> None:
    original = _copy(trained, tmp_path / "original")
    _train([*TINY, f"run.dir={original}", "run.iterations=1"])  # settled where it is now
    before = _hashes(original)
    run_id = _state(original)["mlflow_run_id"]
    copy = _copy(original, tmp_path / "copy")
    _client(copy).update_run(run_id, status="RUNNING")  # as if copied from a live run
    result = _train([f"run.resume={copy}", "run.iterations=2"])
    assert result.state.decisions == 2 and result.run_dir == copy
    assert _hashes(original) == before  # not one byte of the original changed

    registry = ModelRegistry(copy, game="kuhn_poker")
    assert all(Path(v.uri).is_relative_to(copy) for v in registry.versions)
    stored = json.loads((copy / "registry.json").read_text())["versions"]
    assert [row["uri"] for row in stored] == [f"models/v{v.version}" for v in registry.versions]
    client = _client(copy)  # the copy's own store: a new MLflow run, linked to the original's
    run = client.get_run(str(result.mlflow_run_id))
    assert result.mlflow_run_id != run_id and run.data.tags["omega.resumed_from"] == run_id
    assert run.info.artifact_uri.startswith((copy / "mlartifacts").as_uri())
    assert run.data.tags["omega.relocated_from"] == (original / "mlartifacts").as_uri()
    assert run.data.tags["omega.run_dir"] == str(copy)
    old = client.get_run(run_id)  # the copied old run reads its copied artifacts, and ended
    assert old.info.artifact_uri.startswith((copy / "mlartifacts").as_uri())
    assert old.info.status == "KILLED"
    last = json.loads(old.data.tags[STATUS_HISTORY_TAG])[-1]
    assert last[1:] == ["KILLED", f"copied; continued as {result.mlflow_run_id}"]
    config = copy / "mlartifacts" / run.info.run_id / "artifacts" / "config" / "config.yaml"
    assert config.read_text() == (copy / "config.yaml").read_text()
    assert "iterations: 2" in config.read_text()
    state = _state(copy)
    assert state["root"] == str(copy) and state["resumes"][-1]["moved_from"] == str(original)
    assert state["mlflow_run_id"] == run.info.run_id

    moved = tmp_path / "moved"
    copy.rename(moved)
    again = _train([f"run.resume={moved}", "run.iterations=3"])
    assert again.state.decisions == 3
    assert not copy.exists()  # nothing was written where the run used to be
    assert all(Path(v.uri).is_relative_to(moved) for v in ModelRegistry(moved, game="kuhn_poker")
               .versions)  # fmt: skip
    run = _client(moved).get_run(str(again.mlflow_run_id))
    assert run.info.status == "FINISHED"
    assert run.data.tags["omega.resumed_from"] == result.mlflow_run_id
    assert run.info.artifact_uri.startswith((moved / "mlartifacts").as_uri())
    assert _hashes(original) == before


def test_a_copy_tracked_in_a_shared_store_gets_its_own_mlflow_run(
    tmp_path: Path, migrated_db: Path
) -> None:
    shared = _with_store(tmp_path / "store", migrated_db)
    uri = f"sqlite:///{shared}/mlflow.db"
    original = tmp_path / "original"
    first = _train([*TINY, f"run.dir={original}", f"tracking.uri={uri}"])
    client = MlflowClient(uri)
    old = client.get_run(str(first.mlflow_run_id))
    assert old.info.artifact_uri.startswith((shared / "mlartifacts").as_uri())  # not in the run
    client.update_run(str(first.mlflow_run_id), status="RUNNING")  # the original still runs
    before, store_before = _hashes(original), _hashes(shared / "mlartifacts")
    copy = _copy(original, tmp_path / "copy")
    result = _train([f"run.resume={copy}", "run.iterations=2"])  # the saved tracking.uri
    assert result.tracking_uri == uri and result.mlflow_run_id != first.mlflow_run_id
    new = client.get_run(str(result.mlflow_run_id))
    assert new.data.tags["omega.resumed_from"] == first.mlflow_run_id
    assert new.data.tags["omega.resumed_from_dir"] == str(original)
    assert client.get_run(str(first.mlflow_run_id)).info.status == "RUNNING"  # not the copy's
    assert _hashes(original) == before
    after = _hashes(shared / "mlartifacts")
    assert {k: v for k, v in after.items() if k in store_before} == store_before  # old run intact
    assert any(k.startswith(str(result.mlflow_run_id)) for k in after)


def test_an_override_that_changes_what_was_trained_is_refused(
    trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(trained, tmp_path / "run")
    before = _hashes(run)
    status = main(["train", f"run.resume={run}", "model=default"])
    lines = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert status == 2 and len(lines) == 1, lines
    assert "model.hidden_size 32 -> 128" in lines[0] and "model.num_layers 1 -> 2" in lines[0]
    assert _hashes(run) == before  # config.yaml and the state are not rewritten
    with pytest.raises(ConfigError, match=r"search.simulations 16 -> 99"):
        load_settings([f"run.resume={run}", "search.simulations=99"])
    # a caller that builds its own settings for the same directory meets the same check
    other = load_settings([*TINY, "model=default", f"run.dir={run}"])
    with pytest.raises(ConfigError, match="model.hidden_size 32 -> 128"):
        run_training(other, config_yaml=to_yaml(other), progress=False)
    assert _hashes(run) == before


def test_a_resume_keeps_the_saved_settings_and_records_safe_changes(
    trained: Path, tmp_path: Path, migrated_db: Path
) -> None:
    run = _copy(trained, tmp_path / "run")
    saved = load_settings([*TINY, f"run.dir={run}"])
    bare = load_settings([f"run.resume={run}"])  # no preset: the run's own, not the defaults
    assert (bare.game, bare.model, bare.search, bare.learner) == (
        saved.game, saved.model, saved.search, saved.learner)  # fmt: skip
    assert bare.run.name == "smoke" and bare.model.hidden_size == 32

    elsewhere = tmp_path / "store"
    elsewhere.mkdir()
    shutil.copy(migrated_db, elsewhere / "mlflow.db")
    uri = f"sqlite:///{elsewhere}/mlflow.db"
    old_id = _state(run)["mlflow_run_id"]
    result = _train([f"run.resume={run}", "run.iterations=2", f"tracking.uri={uri}"])
    assert result.state.decisions == 2 and result.tracking_uri == uri
    entry = _state(run)["resumes"][-1]
    assert entry["changes"]["run.iterations"] == ["1", "2"]
    assert entry["changes"]["tracking.uri"] == ["null", uri]
    assert "a new MLflow run continuing" in entry["mlflow"]
    new = MlflowClient(uri).get_run(str(result.mlflow_run_id))
    assert new.data.tags["omega.resumed_from"] == old_id  # another store: a new run, linked
    assert "iterations: 2" in (run / "config.yaml").read_text()
    assert "hidden_size: 32" in (run / "config.yaml").read_text()


def test_counters_are_recomputed_from_the_manifest(trained: Path, tmp_path: Path) -> None:
    run = _copy(trained, tmp_path / "run")
    settings = load_settings([f"run.resume={run}", "tracking.enabled=false", "run.iterations=2"])
    paths = RunPaths(run)
    first = Pipeline(settings, paths, LocalBackend)
    # a driver killed after its chunk's shard was committed, before it saved its counters
    chunk = first.state.next_chunk
    first.state.next_chunk += 1
    first.state.save(paths.state)
    report = first.backend.selfplay[0].play_chunk(first.champion_weights(), chunk, 4)
    assert report.shard and report.games == 4
    stale = _state(run)
    store = ShardStore(str(run / "shards"))
    totals = store_totals(store)
    assert totals.shards == stale["shards"] + 1 and totals.games == stale["games"] + 4

    resumed = Pipeline(settings, paths, LocalBackend)
    state = resumed.state
    assert (state.shards, state.records, state.games) == (
        totals.shards, totals.records, totals.games)  # fmt: skip
    final = resumed.run()
    tables = [store.read(e) for e in store.entries()]
    games = sum(len(pc.unique(t.column("game_id"))) for t in tables)
    assert (final.games, final.records, final.shards) == (
        games, sum(t.num_rows for t in tables), len(tables))  # fmt: skip


def test_a_run_left_running_by_a_dead_driver_is_marked_killed_then_resumed(
    tmp_path: Path, migrated_db: Path
) -> None:
    run = tmp_path / "run"  # trained here: resuming it continues its MLflow run
    run.mkdir()
    shutil.copy(migrated_db, run / "mlflow.db")
    run_id = _train([*TINY, f"run.dir={run}"]).mlflow_run_id
    assert run_id is not None
    client = _client(run)
    client.update_run(run_id, status="RUNNING")  # what a SIGKILLed driver leaves behind
    # resumed by its MLflow run id, through the CLI: the run directory comes from the run's tag
    uri = f"sqlite:///{run}/mlflow.db"
    assert main(["train", f"run.resume={run_id}", f"tracking.uri={uri}", "run.iterations=2"]) == 0
    assert _state(run)["decisions"] == 2 and _state(run)["mlflow_run_id"] == run_id
    mlflow_run = client.get_run(run_id)
    assert mlflow_run.info.status == "FINISHED"
    tags = mlflow_run.data.tags
    history = [(status, note) for _, status, note in json.loads(tags[STATUS_HISTORY_TAG])]
    assert history == [
        ("RUNNING", "started"),
        ("FINISHED", "ended"),
        ("KILLED", "found RUNNING on resume: its driver died"),
        ("RUNNING", "resume 1"),
        ("FINISHED", "ended"),
    ]
    assert tags["omega.killed_detected"] and tags["omega.resumes"] == "1"


# -- every counter a run reports is the manifest's, after every kind of quarantine ---------------
def _rewrite(store: Path, entry: dict[str, Any], table: pa.Table) -> None:
    """The shard rewritten with ``table``, its entry's size and checksum fixed: only the
    validator's read finds what is wrong with it."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as ipc:
        ipc.write_table(table)
    payload = sink.getvalue().to_pybytes()
    (store / entry["shard_path"]).write_bytes(payload)
    _edit(store, entry, bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())


def _edit(store: Path, entry: dict[str, Any], **values: Any) -> None:
    (store / "manifest" / f"{entry['key']}.json").write_text(json.dumps({**entry, **values}))


def _table(store: Path, entry: dict[str, Any]) -> pa.Table:
    return pa.ipc.open_file(str(store / entry["shard_path"])).read_all()


def _corrupt(store: Path, kind: str) -> None:
    entry = json.loads(sorted((store / "manifest").glob("*.json"))[0].read_text())
    path = store / entry["shard_path"]
    if kind == "checksum":  # a flipped byte, the size unchanged
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    elif kind == "non-finite":
        table = _table(store, entry)
        i = table.schema.get_field_index("weight")
        nan = pa.array([float("nan")] * table.num_rows, pa.float32())
        _rewrite(store, entry, table.set_column(i, table.schema.field(i), nan))
    elif kind == "truncated":
        path.write_bytes(path.read_bytes()[: entry["bytes"] // 2])
    elif kind == "wrong-schema":  # a column missing
        table = _table(store, entry)
        _rewrite(store, entry, table.drop_columns(["root_value"]))
    elif kind == "schema-version":
        _edit(store, entry, schema_version=1)
    elif kind == "row-count":
        _edit(store, entry, rows=entry["rows"] + 1)
    elif kind == "missing":
        path.unlink()
    elif kind == "unreadable-entry":
        (store / "manifest" / f"{entry['key']}.json").write_text("{not json")
    elif kind == "duplicate-games":  # a copy of the shard under another key
        key = entry["key"].replace("-chunk", "-copy", 1)
        copy = f"shards/{key}.arrow"
        shutil.copy(path, store / copy)
        _edit(store, {**entry, "key": key}, shard_path=copy, created_unix=time.time())


def _recount(store: Path) -> tuple[int, int, int]:
    """(shards, records, games) of the live manifest entries, each checked whole here (size,
    checksum, rows, schema and values) without the service's reader."""
    shards = records = 0
    games: set[str] = set()
    for manifest in sorted((store / "manifest").glob("*.json")):
        entry = json.loads(manifest.read_text())
        payload = (store / entry["shard_path"]).read_bytes()
        assert len(payload) == entry["bytes"], manifest.name
        assert hashlib.sha256(payload).hexdigest() == entry["sha256"], manifest.name
        table = pa.ipc.open_file(pa.BufferReader(payload)).read_all()
        validate_table(table)
        assert table.num_rows == entry["rows"] and entry["schema_version"] == SCHEMA_VERSION
        ids = set(table.column("game_id").to_pylist())
        assert not ids & games, f"{manifest.name} holds games another live shard holds"
        shards, records, games = shards + 1, records + table.num_rows, games | ids
    return shards, records, len(games)


KINDS = ["checksum", "non-finite", "truncated", "wrong-schema", "schema-version", "row-count",
         "missing", "unreadable-entry", "duplicate-games"]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_every_reported_counter_is_the_manifests_after_a_quarantine(
    trained: Path, tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copy(trained, tmp_path / "run")
    store = run / "shards"
    _corrupt(store, kind)
    assert main(["train", *TINY, f"run.resume={run}", "run.iterations=2"]) == 0
    summary = next(line for line in capsys.readouterr().out.splitlines()
                   if line.startswith(f"run {run}"))  # fmt: skip
    assert len(list((store / "quarantine").glob("*.reason.json"))) == 1  # the damaged one
    shards, records, games = _recount(store)
    state = _state(run)
    assert (state["shards"], state["records"], state["games"]) == (shards, records, games)
    assert f"{games} games, {records} records, {shards} shards" in summary
    metrics = _client(run).get_run(state["mlflow_run_id"]).data.metrics
    assert (metrics["selfplay/shards_total"], metrics["selfplay/records_total"],
            metrics["selfplay/games_total"]) == (shards, records, games)  # fmt: skip


def _games_per_table(store: Path) -> dict[int, int]:
    """Distinct games of the live shards per player count, read here from the shards."""
    games: dict[int, set[str]] = {}
    for manifest in sorted((store / "manifest").glob("*.json")):
        entry = json.loads(manifest.read_text())
        table = pa.ipc.open_file(pa.BufferReader((store / entry["shard_path"]).read_bytes()))
        columns = table.read_all().select(["num_players", "game_id"]).to_pydict()
        for players, game in zip(columns["num_players"], columns["game_id"], strict=True):
            games.setdefault(players, set()).add(game)
    return {players: len(ids) for players, ids in games.items()}


def test_the_per_table_counts_are_the_manifests_after_a_quarantine(
    migrated_db: Path, tmp_path: Path
) -> None:
    run = _with_store(tmp_path / "run", migrated_db)
    fleet = [*TINY, "game=mexican_train", "game.fleet={2: 1, 3: 1}", f"run.dir={run}"]
    _train(fleet)
    store = run / "shards"
    before = _games_per_table(store)
    assert set(before) == {2, 3}
    _corrupt(store, "checksum")
    result = _train([f"run.resume={run}", "run.iterations=2"])
    assert result.state.decisions == 2
    assert len(list((store / "quarantine").glob("*.reason.json"))) == 1  # the damaged one
    after = _games_per_table(store)
    state = _state(run)
    by_players = {int(re.match(r"players=(\d+)", k)[1]): v for k, v in state["tables"].items()}  # type: ignore[index]
    assert by_players == after and sum(after.values()) == state["games"]
    metrics = _client(run).get_run(state["mlflow_run_id"]).data.metrics
    logged = {int(re.search(r"players_?(\d+)", k)[1]): v for k, v in metrics.items()  # type: ignore[index]
              if k.startswith("selfplay/slice/") and k.endswith("/games_total")}  # fmt: skip
    assert logged == after
