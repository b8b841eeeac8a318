"""What used to hang, now a clear error within seconds or a prompt stop (real Ray, real files).

* Bad values that can be checked before Ray starts fail in one line, exit 2, in seconds, and Ray
  never starts: a shard store pyarrow cannot open (it used to kill every actor while the driver
  resubmitted forever), a tracking URI scheme MLflow has no store for, a cluster address where
  no Ray answers (host:port, and ``auto`` resolved through ``RAY_ADDRESS``; Ray used to retry for
  minutes).
* A self-play actor that stays dead (its process SIGKILLed with ``cluster.max_restarts=0``)
  stops the run after a bounded number of tries with back-off: exit 2 and one line naming the
  actor and its last error; what was written is kept.
* A SIGINT while a chunk is in flight stops the run after that chunk: no further chunk starts
  (the sync driver used to play the rest of its iteration first), and the chunk not played is
  given back for the resume.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import ray
from cluster_helpers import free_ports
from train_process import find_process, pipeline_state, start_train, wait_for

from omega_cluster.cli import main
from omega_cluster.data import ShardStore
from omega_cluster.pipeline.retries import MAX_FAILURES

pytestmark = pytest.mark.xdist_group("ray")

FAIL_FAST_S = 30.0  # generous for a loaded 2-core machine: each case takes well under a second


def _bad_value_cases() -> list[tuple[list[str], dict[str, str], str]]:
    (port,) = free_ports(1)  # nothing listens there
    return [
        (["run.shard_store=foo://x"], {},
         "run.shard_store=foo://x: the shard store cannot be used: Unrecognized filesystem type"),
        (["tracking.enabled=true", "tracking.uri=foo://user:secret@host/db"], {},
         "tracking URI 'foo://host/db': MLflow has no tracking store for scheme 'foo'"),
        ([f"cluster.address=127.0.0.1:{port}"], {},
         f"cluster.address=127.0.0.1:{port}: no Ray cluster answers there"),
        (["cluster.address=auto"], {"RAY_ADDRESS": f"127.0.0.1:{port}"},
         "cluster.address=auto (resolved to "),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(4), ids=["store", "tracking", "address", "auto"])
def test_bad_values_fail_before_ray_starts(
    case: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    overrides, env, expected = _bad_value_cases()[case]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if ray.is_initialized():  # another module's Ray: this test must see that none starts
        ray.shutdown()
    started = time.monotonic()
    status = main(["train", "run=smoke", "game=kuhn_poker", "tracking.enabled=false",
                   "run.progress=false", f"run.dir={tmp_path / 'run'}", *overrides])  # fmt: skip
    seconds = time.monotonic() - started
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], err
    assert "secret" not in err and "Traceback" not in err
    assert seconds < FAIL_FAST_S, f"took {seconds:.1f} s"
    assert not ray.is_initialized()


def test_a_self_play_actor_that_stays_dead_stops_the_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    proc = start_train(run, "cluster.max_restarts=0", "run.iterations=50")
    try:
        actor = wait_for("a self-play actor", lambda: find_process(proc.pid, "ray::SelfPlayActor"),
                         proc)  # fmt: skip
        os.kill(actor, signal.SIGKILL)  # Ray may not restart it: every chunk it gets fails
        killed = time.monotonic()
        out, err = proc.communicate(timeout=240)
    finally:
        proc.kill()
    seconds = time.monotonic() - killed
    errors = [line for line in err.splitlines() if line.startswith("omega-cluster train: error:")]
    assert proc.returncode == 2, f"{proc.returncode}\n{out}\n{err}"
    assert len(errors) == 1, err
    assert f"self-play actor 0 failed {MAX_FAILURES} times in a row" in errors[0]
    assert "the last error: " in errors[0] and f"run.resume={run}" in errors[0]
    assert "Traceback" not in err
    assert seconds < 120, f"took {seconds:.0f} s to stop"  # the back-offs add up to ~16 s
    state = pipeline_state(run)
    assert state is not None  # saved; every shard it counts is in the store
    assert len(ShardStore(run / "shards").entries()) >= state["shards"]


def test_a_sigint_during_a_chunk_stops_the_run_after_that_chunk(tmp_path: Path) -> None:
    run = tmp_path / "run"
    # one actor, two long chunks per iteration (64 games of 1,000 simulations a move each:
    # seconds a chunk, where 8 games of 400 took under half of one)
    proc = start_train(run, "search.simulations=1000", "run.games_per_iteration=128",
                       "cluster.games_per_chunk=64", "run.iterations=5")  # fmt: skip
    try:
        # the actor is in play_chunk (Ray titles a worker by the call it runs): the chunk has
        # started, not only been handed out (next_chunk is saved before any actor is free)
        wait_for("the first chunk in flight",
                 lambda: find_process(proc.pid, "ray::SelfPlayActor.play_chunk"), proc)  # fmt: skip
        state = pipeline_state(run)
        assert state is not None and state["shards"] == 0, state
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
    finally:
        proc.kill()
    assert proc.returncode == 0, f"{proc.returncode}\n{out}\n{err}"
    assert "SIGINT: stopping after the chunks in flight" in out
    state = pipeline_state(run)
    assert state is not None
    assert state["shards"] == 1 and state["decisions"] == 0, state  # the chunk in flight, no more
    assert state["next_chunk"] == 1, state  # the chunk never started is given back
    assert len(ShardStore(run / "shards").entries()) == 1
