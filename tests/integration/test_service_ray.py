"""The training service end to end on a real embedded Ray with real MLflow.

One Ray (2 CPUs, no dashboard) is started for the module; ``run_training`` joins it (``init_ray``
reuses an initialised Ray and leaves it running). ``run=smoke`` runs of Mexican Train 2p (ISMCTS),
Goofspiel (SM-MCTS) and Leduc poker are read back from disk and through ``MlflowClient``: at least
3 gate decisions and one promotion, every manifest entry's shard read and validated by the data
layer (nothing quarantined), the MLflow run's params, metric histories, Elo table + JSONL, plots,
and the registered model whose alias ``champion`` names the registry's champion. Then the bad
input of the issue through the CLI: each exits with status 2 and one line naming the problem.

The Mexican Train run creates its MLflow store as a user's run does; the others start from a copy
of an already migrated sqlite database (MLflow's schema migration costs ~10 s per new store).
Everything here shares one Ray: the module runs on one xdist worker (``--dist loadgroup``).
"""

from __future__ import annotations

import json
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray
from mlflow import MlflowClient

from omega_cluster.cli import main
from omega_cluster.cluster import init_ray
from omega_cluster.cluster.backend import registry_actor_name
from omega_cluster.config import load_settings
from omega_cluster.data import ShardStore, table_to_records
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.service import RunResult, run_training
from omega_cluster.tracking import CHAMPION_ALIAS

pytestmark = [
    pytest.mark.xdist_group("ray"),
    pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated"),
]

RAY_CPUS = 2


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[None]:
    """One embedded Ray for the module (the service joins it instead of starting its own)."""
    if ray.is_initialized():  # another module's Ray (same xdist group): start this one fresh
        ray.shutdown()
    ray.init(num_cpus=RAY_CPUS, include_dashboard=False, logging_level="WARNING")
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty MLflow sqlite store with its schema migrated, to copy into a run directory."""
    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


def _train(root: Path, *overrides: str) -> RunResult:
    result = run_training(load_settings(["run=smoke", *overrides, f"run.dir={root}"]))
    assert ray.is_initialized()  # the module's Ray was joined, not shut down
    _wait_for_free_cpus()  # the run's actors were killed: their CPUs are back
    return result


def _wait_for_free_cpus(timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while ray.available_resources().get("CPU", 0.0) < RAY_CPUS:
        assert time.monotonic() < deadline, f"actors left behind: {ray.available_resources()}"
        time.sleep(0.2)


@pytest.fixture(scope="module")
def mexican_train(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return _train(tmp_path_factory.mktemp("mt") / "run", "game=mexican_train")


@pytest.fixture(scope="module")
def goofspiel(tmp_path_factory: pytest.TempPathFactory, migrated_db: Path) -> RunResult:
    root = tmp_path_factory.mktemp("goof") / "run"
    root.mkdir()
    shutil.copy(migrated_db, root / "mlflow.db")  # the default store's place
    return _train(root, "game=goofspiel")


@pytest.fixture(scope="module")
def leduc_poker(tmp_path_factory: pytest.TempPathFactory, migrated_db: Path) -> RunResult:
    root = tmp_path_factory.mktemp("leduc") / "run"
    root.mkdir()
    shutil.copy(migrated_db, root / "mlflow.db")
    # run.seed=1: a smoke run checks the promotion path, which needs a gate that promotes; after
    # 60 steps on 16 games whether a candidate wins its 20 gate games is close to chance (seed 0
    # promotes none of its 3 candidates, seeds 1 and 2 two each)
    return _train(root, "game=leduc_poker", "run.seed=1")


def _client(result: RunResult) -> MlflowClient:
    assert result.tracking_uri == f"sqlite:///{result.run_dir}/mlflow.db"  # the default store
    return MlflowClient(tracking_uri=result.tracking_uri, registry_uri=result.tracking_uri)


def check_run(result: RunResult, game: str) -> ModelRegistry:
    """What every smoke run must show on disk (decisions, promotions, shards, registry)."""
    st = result.state
    assert result.reason == f"{st.decisions} gate decisions"
    assert st.decisions >= 3 and st.promotions >= 1, st.elo_log
    store = ShardStore(result.run_dir / "shards")
    entries = store.entries()
    assert len(entries) == st.shards >= 1
    assert len({e.writer_id for e in entries}) == len(entries)  # one shard per chunk
    for entry in entries:  # the data layer checks each shard (schema, hash) as it reads it
        records = table_to_records(store.read(entry))
        assert len(records) == entry.rows and {r.game for r in records} == {game}
    assert store.quarantined() == []
    assert sum(e.rows for e in entries) == st.records
    registry = ModelRegistry(result.run_dir, game=game)
    assert sum(v.status == "champion" for v in registry.versions) == 1
    promoted = [r for r in st.elo_log if r["promoted"] and r["verdict"] == "promote"]
    assert len(promoted) == st.promotions and all(r["score"] > 0.5 for r in promoted)
    assert registry.champion is not None and registry.champion.version == promoted[-1]["version"]
    return registry


def check_champion_alias(result: RunResult, game: str, registry: ModelRegistry) -> Any:
    client = _client(result)
    version = client.get_model_version_by_alias(f"omega-{game}", CHAMPION_ALIAS)
    assert registry.champion is not None
    assert version.tags["omega.version"] == str(registry.champion.version)
    assert version.run_id == result.mlflow_run_id
    return version


def test_mexican_train_smoke_run_on_ray(mexican_train: RunResult, tmp_path: Path) -> None:
    result = mexican_train
    registry = check_run(result, "mexican_train")
    st = result.state
    client = _client(result)
    run = client.get_run(result.mlflow_run_id)
    assert run.info.status == "FINISHED"
    params = run.data.params
    assert params["search.simulations"] == "16" and params["run.name"] == "smoke"
    assert params["game.name"] == "mexican_train" and params["game.params.players"] == "2"
    assert run.data.tags["omega.game"] == "mexican_train" and run.data.tags["git.sha"]
    assert run.data.tags["selfplay.search_path"] == "compiled"  # the actors ran the fast path
    history = {
        key: [m.value for m in client.get_metric_history(run.info.run_id, key)]
        for key in ("selfplay/games_per_s", "learner/loss", "gate/score", "champion_elo")
    }
    games_per_s = history["selfplay/games_per_s"]
    assert len(games_per_s) == st.shards and min(games_per_s) > 0  # one point per chunk
    assert len(history["learner/loss"]) == st.decisions
    gate_rows = [r for r in st.elo_log if r["verdict"] != "initial"]
    assert history["gate/score"] == pytest.approx([r["score"] for r in gate_rows])
    assert len(history["champion_elo"]) == st.promotions
    # the Elo log: an MLflow table and the JSONL, one row per gate decision
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "elo")}
    assert {"elo/elo_log.json", "elo/elo_log.jsonl"} <= artifacts
    local = client.download_artifacts(run.info.run_id, "elo/elo_log.json", str(tmp_path))
    table = json.loads(Path(local).read_text())
    columns = table["columns"]
    chain = [row for row in table["data"] if row[columns.index("rating")] is None]
    assert len(chain) == st.decisions and "elo" in columns
    versions = [row[columns.index("version")] for row in chain]
    assert versions == [r["version"] for r in gate_rows]
    # beside them, the anchored ratings of v0 and of each promoted champion, network and search
    rated = [row for row in table["data"] if row[columns.index("rating")] == "anchored"]
    assert len(rated) == 2 * (st.promotions + 1) == len(st.ratings)
    rating = client.get_metric_history(run.info.run_id, "rating/points/search")
    assert len(rating) == st.promotions + 1
    jsonl = [
        json.loads(line) for line in (result.run_dir / "elo_log.jsonl").read_text().splitlines()
    ]
    assert [r["version"] for r in jsonl if "rating" not in r] == versions
    plots = {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    assert {"plots/rating.png", "plots/slices.png", "plots/losses.png"} <= plots
    config = {a.path for a in client.list_artifacts(run.info.run_id, "config")}
    assert "config/config.yaml" in config
    # the registered champion: alias on the registry's champion, one model version per promotion
    check_champion_alias(result, "mexican_train", registry)
    assert len(client.search_model_versions("name='omega-mexican_train'")) == st.promotions


@pytest.mark.parametrize("game", ["goofspiel", "leduc_poker"])
def test_smoke_run_of_other_games_on_ray(game: str, request: pytest.FixtureRequest) -> None:
    result: RunResult = request.getfixturevalue(game)
    registry = check_run(result, game)
    client = _client(result)
    run = client.get_run(result.mlflow_run_id)
    assert run.info.status == "FINISHED" and run.data.params["game.name"] == game
    scores = client.get_metric_history(run.info.run_id, "gate/score")
    assert len(scores) == result.state.decisions
    assert "plots/rating.png" in {a.path for a in client.list_artifacts(run.info.run_id, "plots")}
    check_champion_alias(result, game, registry)


def test_init_ray_joins_the_running_ray() -> None:
    settings = load_settings(["run=smoke", "cluster.self_play_actors=2"])
    assert init_ray(settings) is False  # joined: the caller must not shut it down
    assert ray.is_initialized()


def test_runs_whose_directories_share_a_name_get_their_own_registry_actor(tmp_path: Path) -> None:
    """RayBackend reaches the run's registry by actor name with get_if_exists: the name was once
    the directory's base name, so a run in b/run on a cluster where a/run was running got a/run's
    registry (another game's champion). Checked here on the name: a full RayBackend pair costs
    ten actor processes."""
    a, b = tmp_path / "a" / "run", tmp_path / "b" / "run"
    assert registry_actor_name(a) != registry_actor_name(b)
    assert registry_actor_name(a) == registry_actor_name(tmp_path / "a" / ".." / "a" / "run")


# -- bad input: exit status 2 and one line naming the problem ---------------------------------


def _train_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["train", *args])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("omega-cluster train: error:")]
    assert len(lines) == 1, err
    return status, lines[0]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "search.simulatons=3",
            "unknown key 'search.simulatons' (did you mean 'search.simulations'?)",
        ),
        ("search.simulations=many", "search.simulations='many' has the wrong type; expected int"),
        ("game=chess", "unknown option 'chess' of config group 'game'"),
        ("game.name=chess", "game.name='chess' is not a registered game; allowed:"),
    ],
)
def test_a_wrong_config_fails_at_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, override: str, expected: str
) -> None:
    status, line = _train_cli(capsys, "run=smoke", override, f"run.dir={tmp_path / 'run'}")
    assert status == 2
    assert expected in line
    assert not (tmp_path / "run").exists()  # nothing started


def test_more_actors_than_cluster_cpus_fails_at_start(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, migrated_db: Path
) -> None:
    root = tmp_path / "run"
    root.mkdir()
    shutil.copy(migrated_db, root / "mlflow.db")
    status, line = _train_cli(capsys, "run=smoke", "cluster.self_play_actors=64", f"run.dir={root}")
    assert status == 2
    assert "cluster.self_play_actors=64 is more than the cluster's 2 CPUs" in line
    assert not (root / "pipeline.json").exists()  # no pipeline was built
    assert ray.is_initialized()


def test_an_unreachable_mlflow_server_fails_within_seconds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    status, line = _train_cli(capsys, "run=smoke", f"tracking.uri={uri}", f"run.dir={tmp_path}")
    assert time.monotonic() - started < 15.0  # MLflow's own client would retry for minutes
    assert status == 2
    assert f"MLflow tracking server '{uri}' is unreachable" in line
    assert not (tmp_path / "pipeline.json").exists()


def test_a_run_directory_of_another_game_fails_at_start(
    capsys: pytest.CaptureFixture[str], mexican_train: RunResult
) -> None:
    before = (mexican_train.run_dir / "pipeline.json").read_text()
    status, line = _train_cli(capsys, "run=smoke", "game=goofspiel",
                              f"run.dir={mexican_train.run_dir}")  # fmt: skip
    assert status == 2
    assert "is a run of game 'mexican_train', not 'goofspiel'" in line
    assert (mexican_train.run_dir / "pipeline.json").read_text() == before
