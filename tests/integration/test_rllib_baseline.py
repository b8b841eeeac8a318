"""The RLlib PPO league baseline (omega_cluster/cluster/rllib_baseline.py) on a real local Ray:
the policy mapping, frozen snapshots that only change when taken, a checkpoint at the end, and
the command's wall-clock limit kept (between iterations, and by stopping an iteration the limit
comes in) with its progress lines."""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import ray
import torch
from cluster_helpers import fresh_ray
from mlflow.tracking import MlflowClient
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from safetensors.numpy import load_file

from omega_cluster.cli import main
from omega_cluster.cluster import rllib_baseline
from omega_cluster.cluster.rllib_baseline import (
    export_policy,
    iterate,
    league_mapping,
    train_league,
)
from omega_cluster.cluster.rllib_env import MAIN_POLICY, GameMultiAgentEnv, ppo_config
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import make_player
from omega_cluster.players.rllib import POLICY_WEIGHTS
from omega_cluster.tracking import default_tracking_uri

pytestmark = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    with fresh_ray():
        yield


def test_the_mapping_puts_main_at_one_seat_and_is_stable() -> None:
    mapping = league_mapping(num_players=4, size=3)
    seen_main_seats = set()
    for i in range(40):
        episode = SimpleNamespace(id_=f"episode-{i}")
        modules = [mapping(f"player_{s}", episode) for s in range(4)]
        assert modules == [mapping(f"player_{s}", episode) for s in range(4)]
        assert modules.count(MAIN_POLICY) == 1
        assert set(modules) - {MAIN_POLICY} <= {"league_0", "league_1", "league_2"}
        seen_main_seats.add(modules.index(MAIN_POLICY))
    assert seen_main_seats == {0, 1, 2, 3}


def _flat(state: dict, keys: list[str]) -> np.ndarray:
    return np.concatenate([np.asarray(state[k]).ravel() for k in keys])


def test_two_iterations_snapshot_main_into_the_league_and_save(
    ray_cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[tuple[str, np.ndarray, np.ndarray]] = []
    snapshot = rllib_baseline._snapshot

    def watch(algo, slot):  # type: ignore[no-untyped-def]
        # the env runner's module is the inference-only part (no value head): compare its keys
        keys = sorted(
            k
            for k, v in algo.get_module(slot).get_state().items()
            if k.endswith(("weight", "bias"))
        )
        before = _flat(algo.get_module(slot).get_state(), keys)
        snapshot(algo, slot)
        main = _flat(algo.learner_group.get_weights([MAIN_POLICY])[MAIN_POLICY], keys)
        taken.append((slot, before, main))
        np.testing.assert_array_equal(_flat(algo.get_module(slot).get_state(), keys), main)

    monkeypatch.setattr(rllib_baseline, "_snapshot", watch)
    seen: list[dict[str, float]] = []
    result = train_league(
        "leduc_poker", None, minutes=5, out=tmp_path / "ppo", league=2, snapshot_every=1,
        max_iterations=2, on_iteration=seen.append,
        train_batch_size=64, minibatch_size=32, num_epochs=1,
    )  # fmt: skip
    assert result.iterations == 2 and result.snapshots == 2 and len(seen) == 2
    assert result.stopped == "2 iterations, as asked"
    assert [slot for slot, _, _ in taken] == ["league_0", "league_1", "league_0", "league_1"]
    initial = taken[0][2]
    # league_1 kept the initial main until its snapshot: the learner never trained it
    np.testing.assert_array_equal(taken[3][1], initial)
    # main learned between the two snapshots
    assert not np.array_equal(taken[2][2], initial)
    assert all(np.isfinite(m["total_loss"]) for m in seen)
    # main and at least one league slot played (episode ids are random: which slots, varies)
    assert all(m["modules_played"] >= 2 for m in seen)
    assert result.checkpoint is not None and (result.checkpoint / "learner_group").is_dir()
    # the exported policy is RLlib's main module, layer for layer: the same logits
    module = RLModule.from_checkpoint(
        result.checkpoint / "learner_group" / "learner" / "rl_module" / MAIN_POLICY
    )
    player = make_player(f"rllib:{tmp_path / 'ppo'}", make_game("leduc_poker"))
    env = GameMultiAgentEnv({"game": "leduc_poker"})
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        ((agent, o),) = obs.items()
        batch = {Columns.OBS: {k: torch.as_tensor(v[None]) for k, v in o.items()}}
        with torch.no_grad():
            theirs = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0].numpy()
        state, seat = env.table.state, int(agent.rpartition("_")[2])
        legal = list(state.legal_actions(seat))
        ours = player.logits(state, seat)
        np.testing.assert_allclose(ours[legal], theirs[legal], rtol=1e-5, atol=1e-5)
        assert player.act(state, seat, random.Random(seed)) in legal


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["nope"], "unknown baseline 'nope'; baselines: rllib_ppo"),
        (["rllib_ppo", "game=kuhn_poker"], "baseline rllib_ppo needs minutes=<m> and out=<dir>"),
        (["rllib_ppo", "game=kuhn_poker", "minutes=0", "out=x"], "minutes='0' must be a number"),
        (["rllib_ppo", "game=kuhn_poker", "minutes=1", "out=x", "seats=3"], "seats"),
    ],
)
def test_bad_baseline_input_is_one_line_before_ray_starts(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    was_running = ray.is_initialized()
    assert main(["baseline", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0], err
    assert ray.is_initialized() == was_running


def test_the_baseline_command_keeps_its_limit_logs_to_mlflow_and_saves(
    ray_cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ppo-kuhn"
    # minutes=0.6, from the command's start: its imports and RLlib's build take part of it
    limit = 0.6 * 60
    argv = ["baseline", "rllib_ppo", "game=kuhn_poker", "minutes=0.6", f"out={out}",
            "batch=64", "league=2", "snapshot_every=1"]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 0, capsys.readouterr().err
    ran = time.monotonic() - started
    # iterations take a second or two: the last one ends near the limit, then the saving
    assert ran < limit + 20.0, ran
    printed = capsys.readouterr()
    line = printed.out.strip().splitlines()[-1]
    assert line.startswith("rllib_ppo on kuhn_poker: ") and "checkpoint" in line
    # off a terminal, the progress is one line per event on stderr
    progress = printed.err.strip().splitlines()
    assert "limit 0.6 min: starting Ray and building RLlib's PPO" in progress[0], progress
    assert any("] built in " in p for p in progress), progress
    iterations = [p for p in progress if "] iteration " in p]
    assert len(iterations) >= 1 and "s left)" in iterations[0], progress
    assert "stopped: " in progress[-1] and "limit" in progress[-1], progress
    assert (out / "checkpoint" / "learner_group").is_dir()
    store = MlflowClient(default_tracking_uri(out))
    (run,) = store.search_runs([store.get_experiment_by_name("baselines").experiment_id])
    assert run.info.status == "FINISHED"
    assert run.data.tags["checkpoint"] == str(out / "checkpoint")
    assert run.data.params["league"] == "2"
    history = store.get_metric_history(run.info.run_id, "total_loss")
    assert len(history) == len(iterations) and all(np.isfinite(p.value) for p in history)
    # the policy plays in the arena by its spec, and refuses another game in one line
    arena = ["arena", "game=kuhn_poker", f"seats=rllib:{out},random", "games=20"]
    assert main(arena) == 0, capsys.readouterr().err
    assert main(["arena", "game=leduc_poker", f"seats=rllib:{out}:greedy,random", "games=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the policy plays kuhn_poker" in err[0], err
    assert "not leduc_poker" in err[0], err


def test_a_limit_that_comes_during_an_iteration_stops_it(
    ray_cluster: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one iteration of 10^6 steps takes many minutes; the limit (36 s from the command's start,
    # its imports and RLlib's build included) comes during the first one
    out = tmp_path / "ppo-long"
    argv = ["baseline", "rllib_ppo", "game=kuhn_poker", "minutes=0.6", f"out={out}",
            "batch=1000000", "league=1"]  # fmt: skip
    started = time.monotonic()
    assert main(argv) == 1
    ran = time.monotonic() - started
    assert ran < 0.6 * 60 + 10.0, ran
    err = capsys.readouterr().err.strip().splitlines()
    assert "into iteration 1 and stopped it; nothing was trained" in err[-2], err
    assert err[-1].startswith("baseline rllib_ppo: minutes=0.6 ran out before the first PPO "
                              "iteration ended"), err  # fmt: skip
    assert "give it more minutes= or a smaller batch=" in err[-1]
    assert not (out / "checkpoint").exists() and not (out / "policy").exists()
    store = MlflowClient(default_tracking_uri(out))
    (run,) = store.search_runs([store.get_experiment_by_name("baselines").experiment_id])
    assert run.info.status == "FAILED"


def test_an_iteration_stopped_by_the_limit_puts_main_back_and_still_saves(
    ray_cluster: None, tmp_path: Path
) -> None:
    config = ppo_config("kuhn_poker", train_batch_size=64, minibatch_size=32, num_epochs=1)
    algo = config.build_algo()
    try:
        keys = sorted(k for k in algo.get_module(MAIN_POLICY).get_state() if k.endswith("weight"))
        before = algo.learner_group.get_weights([MAIN_POLICY])[MAIN_POLICY]
        first = iterate(algo, time.monotonic() + 600.0, {})  # far from the limit: a whole one
        assert first is not None and first["training_iteration"] == 1
        trained = algo.learner_group.get_weights([MAIN_POLICY])[MAIN_POLICY]
        assert not np.array_equal(_flat(trained, keys), _flat(before, keys))
        started = time.monotonic()
        # the limit 50 ms away comes during the iteration: main goes back to the weights given
        assert iterate(algo, started + 0.05, before) is None
        assert time.monotonic() - started < 5.0
        learner = algo.learner_group.get_weights([MAIN_POLICY])[MAIN_POLICY]
        np.testing.assert_array_equal(_flat(learner, keys), _flat(before, keys))
        runner = algo.get_module(MAIN_POLICY).get_state()
        np.testing.assert_array_equal(_flat(runner, keys), _flat(before, keys))
        # what train_league does next: the checkpoint and the policy, of those weights
        assert (Path(algo.save_to_path(str(tmp_path / "checkpoint"))) / "learner_group").is_dir()
        policy = export_policy(algo, tmp_path / "policy", "kuhn_poker", {})
        exported = load_file(str(policy / POLICY_WEIGHTS))
        assert exported and all(
            any(np.array_equal(t, np.asarray(w)) for w in before.values())
            for t in exported.values()
        )
    finally:
        algo.stop()


def test_without_rllib_the_baseline_says_which_extra_to_install(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "omega_cluster.cluster.rllib_baseline", None)
    argv = ["baseline", "rllib_ppo", "game=kuhn_poker", "minutes=1", f"out={tmp_path}"]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "needs RLlib" in line and "omega_cluster[interop]" in line
