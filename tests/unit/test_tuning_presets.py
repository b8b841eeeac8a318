"""The tuner on Mexican Train: compiled games equal the played ones, the preset round trip and
its provenance, the Commander's presets from JSON files, the command line with MLflow."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from omega_cluster.cli import main
from omega_cluster.eval.arena import play_game
from omega_cluster.eval.tuning import (
    LOG_FILE,
    PRESET_FILE,
    TuneConfig,
    Tuner,
    generation_jobs,
    job_context,
    load_preset,
    play_job,
)
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.mexican_train.officers.weights import CommanderWeights, available_presets
from omega_cluster.players.registry import make_player

MT = (("players", 4), ("rounds", 1))


def test_compiled_games_score_as_the_played_games() -> None:
    game, target = job_context("mexican_train", MT, "commander")
    other = tuple(v * (1.5 if i % 2 else 0.5) for i, v in enumerate(target.defaults()))
    jobs = generation_jobs("mexican_train", MT, "commander", players=4,
                           candidates=[other, target.defaults()], pool=[target.defaults(), other],
                           generation=0, seed=2, deals=6)  # fmt: skip
    for job in jobs:
        players = [target.build(game, target.as_dict(w)) for w in job.seats]
        rngs = [random.Random(derive_seed(job.deal_seed, "player", 0, s)) for s in range(4)]
        record = play_game(game, players, seed=job.deal_seed, rngs=rngs)
        assert play_job(job) == pytest.approx(4 * record.win_shares[job.focus])


def test_preset_round_trip_and_provenance(tmp_path: Path) -> None:
    config = TuneConfig("mexican_train", dict(MT), "commander", generations=1, population=3,
                        deals=2, pool=2, seed=4)  # fmt: skip
    tuner = Tuner(config, tmp_path, command="omega-cluster tune ...", run_id="abc123")
    tuner.run()
    path = tuner.write_preset()
    data = json.loads(path.read_text())
    prov = data["provenance"]
    assert prov["mlflow_run_id"] == "abc123" and prov["seed"] == 4
    assert prov["generations"] == 1 and prov["population"] == 3 and prov["deals"] == 2
    assert "derive_seed(seed, 'tune-deal'" in prov["deal_seeds"]
    assert prov["command"] == "omega-cluster tune ..."
    assert prov["fitness"]["last_generation_best"] == max(tuner.history[0].fitness)
    weights = load_preset(path, tuner.target)
    assert weights == tuner.target.as_dict(tuner.mean_weights())
    # the Commander plays it by path, as a spec argument too
    loaded = CommanderWeights.preset(str(path))
    assert {k: getattr(loaded, k) for k in weights} == weights
    game, _ = job_context("mexican_train", MT, "commander")
    player = make_player(f"commander:weights={path}", game)
    assert player.weights == loaded  # type: ignore[attr-defined]
    assert load_preset(path, "commander") == weights
    with pytest.raises(ValueError, match="tuned for target 'commander', not 'hand'"):
        load_preset(path, "hand")


def test_unknown_preset_lists_the_presets_and_a_foreign_preset_is_refused(tmp_path: Path) -> None:
    assert CommanderWeights.preset("default") == CommanderWeights()
    assert available_presets()[0] == "default"
    with pytest.raises(
        ValueError, match="unknown CommanderWeights preset 'tuned_9p'; allowed: default"
    ):
        CommanderWeights.preset("tuned_9p")
    other = tmp_path / "hand.json"
    other.write_text(json.dumps({"target": "hand", "weights": {"tiles": -1.0}}))
    with pytest.raises(ValueError, match="holds 'hand' weights"):
        CommanderWeights.preset(str(other))
    with pytest.raises(ValueError, match="unknown CommanderWeights key"):
        CommanderWeights.preset(_write(tmp_path / "bad.json", {"bogus": 1.0}))


def _write(path: Path, weights: dict[str, float]) -> str:
    path.write_text(json.dumps({"target": "commander", "weights": weights}))
    return str(path)


def test_cli_tunes_resumes_and_logs_to_mlflow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t"
    args = ["tune", "game=mexican_train", "players=2", "rounds=1", "target=commander",
            "population=3", "deals=4", "pool=2", "seed=1", f"out={out}"]  # fmt: skip
    assert main([*args, "generations=1"]) == 0
    assert main([*args, "generations=2"]) == 0  # resumes after generation 0
    assert "resuming" in capsys.readouterr().err
    log = json.loads((out / LOG_FILE).read_text())
    assert len(log["generations"]) == 2
    preset = json.loads((out / PRESET_FILE).read_text())
    run_id = preset["provenance"]["mlflow_run_id"]
    assert run_id == log["run_id"] and (out / "tuning.png").stat().st_size > 1000

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{out.resolve()}/mlflow.db")
    history = client.get_metric_history(run_id, "best_fitness")
    assert sorted(m.step for m in history) == [0, 1]
    assert client.get_run(run_id).data.params["population"] == "3"
    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert {"tuning.png", "preset.json", "tuning.json"} <= artifacts


def test_cli_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["tune", "game=mexican_train", "players=2", f"out={tmp_path}"]
    assert main([*base, "target=nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "unknown target 'nope'" in err and "commander" in err
    assert main([*base, "target=commander", "cluster=moon"]) == 2
    assert "cluster='moon'" in capsys.readouterr().err
    assert main([*base, "target=commander", "population=1"]) == 2
    assert "population='1' must be an int >= 2" in capsys.readouterr().err
    assert main(["tune", "game=mexican_train", "target=commander"]) == 2
    assert "needs out=" in capsys.readouterr().err
    assert not (tmp_path / LOG_FILE).exists()
