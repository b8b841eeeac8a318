"""``champion:<run>:<sims>:leaf=<leaf>``: a run's checkpoint searched with another leaf (the
critic's value, a rollout), whatever its gate played — what ``bench/bench_leaf.py`` contrasts;
and ``bench/bench_value.py`` on a smoke scale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench import bench_value
from omega_cluster.games import make_game
from omega_cluster.model.inference import CriticEvaluator
from omega_cluster.players import make_player
from omega_cluster.players.registry import PlayerSpecError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kuhn_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A smoke kuhn_poker run whose network has a critic (its gate plays the greedy network)."""
    run = tmp_path_factory.mktemp("champion_leaf") / "run"
    command = [sys.executable, "-m", "omega_cluster", "train", "run=smoke", "game=kuhn_poker",
               "cluster=inprocess", "model.critic=true", "run.iterations=1",
               "run.progress=false", "tracking.enabled=false", f"run.dir={run}"]  # fmt: skip
    subprocess.run(command, check=True, cwd=ROOT, capture_output=True, timeout=300)
    return run


def test_the_champion_searches_with_the_leaf_it_is_given(kuhn_run: Path) -> None:
    game = make_game("kuhn_poker")
    critic = make_player(f"champion:{kuhn_run}:16:leaf=critic", game)
    assert isinstance(critic.search.evaluator, CriticEvaluator)  # type: ignore[attr-defined]
    assert critic.name.endswith(":16:leaf=critic")
    rollout = make_player(f"champion:{kuhn_run}:16:leaf=random", game)
    assert not isinstance(rollout.search.evaluator, CriticEvaluator)  # type: ignore[attr-defined]
    state = game.new_initial_state(3)
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    p = state.current_players[0]
    assert critic.act(state, p, np.random.default_rng(0)) in state.legal_actions(p)


def test_a_leaf_the_run_cannot_serve_is_one_clear_error(kuhn_run: Path) -> None:
    with pytest.raises(PlayerSpecError, match="leaf") as err:
        make_player(f"champion:{kuhn_run}:16:leaf=no_such_leaf", make_game("kuhn_poker"))
    assert "\n" not in str(err.value)


def test_bench_value_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench_value.main(["--players", "2", "--games", "12", "--heldout", "6", "--steps", "50"])
    out = capsys.readouterr().out
    for lever in bench_value.LEVERS:
        assert f"{lever.name}: best held-out value loss" in out
    assert bench_value.COUNTS_MODEL in out and "yard=0" in out
