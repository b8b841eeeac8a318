"""A game of your own trains end to end, as a new user runs it (issue 19, "bring your own game").

``examples/blind_war/`` is a user's game: nothing in ``omega_cluster`` names it. The test runs
the commands of its docstring in subprocesses, from a temporary directory (so nothing but
``PYTHONPATH`` finds the game), on an embedded Ray that the CLI starts itself::

    PYTHONPATH=examples omega-cluster train run=smoke game.name=blind_war:BlindWarGame ...
    PYTHONPATH=examples omega-cluster arena game=blind_war:BlindWarGame seats=champion:<run>,...

and reads back what the run must show: shards of ``blind_war`` records that the data layer
validates, candidates, at least one promotion on merit (the gate is the default one), the MLflow
run with its params and metric histories and the registered champion (through the real MLflow
store), then the champion at an arena table against the random player.

The overrides: 5 cards a hand (the default 3 leave so few decisions that a trained network and
the untrained one often play every deal alike and tie at 0.5), anchors ``[random]`` only (the
smoke run stays short), everything else ``run=smoke``. Seeded: the run promotes v1 at 0.70 and v3
at 0.60 here. ~25 s on 2 free cores. Last, ``examples/race_to_n.py`` (a bare ``Game``, no
plugin) trains one iteration in process on the generic encoder, ~15 s.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow import MlflowClient

from omega_cluster.data import ShardStore, table_to_records
from omega_cluster.tracking import CHAMPION_ALIAS

pytestmark = [
    pytest.mark.xdist_group("ray"),
    pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated"),
]

ROOT = Path(__file__).resolve().parents[2]
GAME = "blind_war:BlindWarGame"
TRAIN = ["run=smoke", f"game.name={GAME}", "+game.params.hand=5",
         "gate.anchors={random:1000}", "cluster.num_cpus=2", "run.progress=false"]  # fmt: skip
TIMEOUT_S = 300


def _omega(cwd: Path, *args: str) -> str:
    """``PYTHONPATH=examples omega-cluster <args>`` (the examples' absolute path: cwd is elsewhere)."""
    paths = [str(ROOT / "examples"), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run([sys.executable, "-m", "omega_cluster", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)  # fmt: skip
    assert done.returncode == 0, f"omega-cluster {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The run directory and the MLflow run id of one smoke run of the user's game."""
    cwd = tmp_path_factory.mktemp("user")
    root = cwd / "run"
    out = _omega(cwd, "train", *TRAIN, f"run.dir={root}")
    found = re.search(r"^MLflow run (\w+) at sqlite:", out, re.MULTILINE)
    assert "3 gate decisions" in out and found, out
    return root, found.group(1)


@pytest.fixture(scope="module")
def run_dir(trained: tuple[Path, str]) -> Path:
    return trained[0]


def test_the_run_writes_shards_candidates_and_a_promotion(run_dir: Path) -> None:
    state = json.loads((run_dir / "pipeline.json").read_text())
    assert state["game"] == "blind_war" and state["decisions"] == 3
    store = ShardStore(run_dir / "shards")
    entries = store.entries()
    assert len(entries) == state["shards"] >= 1 and store.quarantined() == []
    for entry in entries:  # the data layer checks each shard (schema, hash) as it reads it
        records = table_to_records(store.read(entry))
        assert len(records) == entry.rows and {r.game for r in records} == {"blind_war"}
        assert {r.params()["hand"] for r in records} == {5}
    assert sum(e.rows for e in entries) == state["records"]
    registry = json.loads((run_dir / "registry.json").read_text())
    assert registry["game"] == "blind_war"
    versions = registry["versions"]
    assert [v["version"] for v in versions] == [0, 1, 2, 3]  # the initial model + 3 candidates
    assert all(
        (run_dir / v["uri"] / "metadata.json").is_file() for v in versions
    )  # relative to the run
    promoted = [r for r in state["elo_log"] if r["verdict"] == "promote"]
    assert len(promoted) == state["promotions"] >= 1 and all(r["score"] > 0.5 for r in promoted)
    champion = [v for v in versions if v["status"] == "champion"]
    assert len(champion) == 1 and champion[0]["version"] == promoted[-1]["version"]
    metadata = json.loads((run_dir / champion[0]["uri"] / "metadata.json").read_text())
    assert metadata["encoder"]["name"] == "blind_war"  # the plugin's encoder, not the generic one


def test_the_mlflow_run_has_params_metrics_and_the_champion(trained: tuple[Path, str]) -> None:
    run_dir, run_id = trained
    uri = f"sqlite:///{run_dir}/mlflow.db"  # the default store, read with MLflow's own client
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED"
    assert run.data.params["game.name"] == GAME and run.data.params["game.params.hand"] == "5"
    assert run.data.tags["omega.game"] == "blind_war"
    state = json.loads((run_dir / "pipeline.json").read_text())

    def history(key: str) -> list[float]:
        return [m.value for m in client.get_metric_history(run.info.run_id, key)]

    assert len(history("gate/score")) == state["decisions"]
    assert len(history("learner/loss")) == state["decisions"]
    assert len(history("selfplay/games_per_s")) == state["shards"]
    assert len(history("champion_elo")) == state["promotions"]
    champion = client.get_model_version_by_alias("omega-blind_war_BlindWarGame", CHAMPION_ALIAS)
    registry = json.loads((run_dir / "registry.json").read_text())
    (best,) = [v for v in registry["versions"] if v["status"] == "champion"]
    assert champion.tags["omega.version"] == str(best["version"])
    assert champion.run_id == run.info.run_id


def test_the_champion_plays_in_the_arena(run_dir: Path, tmp_path: Path) -> None:
    seats = f"seats=champion:{run_dir},random"
    out = _omega(tmp_path, "arena", f"game={GAME}", "hand=5", seats, "games=40", "progress=false")
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in out.splitlines() if line.startswith("│")}  # fmt: skip
    wins = {name.split(":")[0]: int(count) for name, count in rows.items()}
    assert wins["champion"] + wins["random"] == 40
    assert wins["champion"] > wins["random"]  # a trained champion beats random play


def test_a_game_without_an_encoder_trains_on_the_generic_one(tmp_path: Path) -> None:
    """``examples/race_to_n.py``: one module, no plugin. The generic encoder reads its
    fixed-length observation; a fresh process rebuilds that encoder from the checkpoint."""
    root = tmp_path / "run"
    out = _omega(tmp_path, "train", "run=smoke", "run.iterations=1", "cluster=inprocess",
                 "game.name=race_to_n:RaceGame", "gate.anchors={random:1000}",
                 "run.progress=false", f"run.dir={root}")  # fmt: skip
    assert "1 gate decisions" in out
    metadata = json.loads((root / "models" / "v1" / "metadata.json").read_text())
    assert metadata["game"] == "race_to_n" and metadata["encoder"]["name"] == "generic"
    assert metadata["encoder"]["observation_size"] == 2 + 4  # seat one-hot + 4 numbers
    seats = f"seats=network:{root / 'models' / 'v1'},random"
    out = _omega(tmp_path, "arena", "game=race_to_n:RaceGame", seats, "games=10", "progress=false")
    assert "network:" in out
