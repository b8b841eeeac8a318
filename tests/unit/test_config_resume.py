"""``load_settings`` on resume (omega_cluster.config.resume): the saved ``config.yaml`` of the run
directory is the base; only the keys the overrides set explicitly apply; a change outside
``SAFE_ON_RESUME`` is refused naming the key with its saved and new values; no run is trained
here (the saved config is written by ``to_yaml``, as the service writes it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omega_cluster.config import (
    SAFE_ON_RESUME,
    ConfigError,
    load_settings,
    resume_changes,
    to_yaml,
)

TRAINED = ["run=smoke", "game=leduc_poker", "game.params.players=3", "search.simulations=24",
           "cluster=inprocess", "run.iterations=2"]  # fmt: skip


@pytest.fixture
def run(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    root.mkdir()
    (root / "config.yaml").write_text(to_yaml(load_settings([*TRAINED, f"run.dir={root}"])))
    return root


def test_the_saved_config_is_the_base(run: Path) -> None:
    saved = load_settings([*TRAINED, f"run.dir={run}"])
    resumed = load_settings([f"run.resume={run}"])  # no preset, no game: the run's own
    assert resumed.game == saved.game and resumed.game.params["players"] == 3
    assert (resumed.search, resumed.model, resumed.gate) == (saved.search, saved.model, saved.gate)
    assert resumed.run.name == "smoke" and resumed.run.resume == str(run)
    # the same preset again, or a key set to its saved value, changes nothing
    again = load_settings([f"run.resume={run}", "run=smoke", "search.simulations=24",
                           "game=leduc_poker", "game.params.players=3"])  # fmt: skip
    assert again.search == saved.search and again.game == saved.game


def test_safe_overrides_apply_and_are_the_only_changes(run: Path) -> None:
    resumed = load_settings([f"run.resume={run}", "run.iterations=9", "cluster.self_play_actors=3",
                             "tracking.enabled=false"])  # fmt: skip
    assert (resumed.run.iterations, resumed.cluster.self_play_actors) == (9, 3)
    saved = load_settings([*TRAINED, f"run.dir={run}"])
    changes = resume_changes(saved, resumed)
    assert changes == {
        "cluster.self_play_actors": ("1", "3"),
        "run.iterations": ("2", "9"),
        "run.resume": ("null", str(run)),
        "tracking.enabled": ("true", "false"),
    }
    assert set(changes) <= set(SAFE_ON_RESUME)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("model=default", "model.hidden_size 32 -> 128"),
        ("search.simulations=99", "search.simulations 24 -> 99"),
        ("game.params.players=2", "game.params.players 3 -> 2"),
        ("~game.params.players", "game.params.players 3 -> (not set)"),
        ("tracking.experiment=other", "tracking.experiment omega_cluster -> other"),
        ("run=default", "run.games_per_iteration 16 -> 256"),
        ("run.seed=5", "run.seed 0 -> 5"),
    ],
)
def test_a_change_of_what_was_trained_is_refused(run: Path, override: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings([f"run.resume={run}", override])
    message = str(info.value)
    assert expected in message and str(run) in message and "\n" not in message


def test_a_broken_saved_config_names_the_file(run: Path) -> None:
    (run / "config.yaml").write_text("model:\n  hidden_size: many\n")
    with pytest.raises(ConfigError, match=r"saved configuration .*config.yaml.*hidden_size"):
        load_settings([f"run.resume={run}"])
    (run / "config.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError, match="config.yaml is not a mapping"):
        load_settings([f"run.resume={run}"])


def test_a_directory_without_a_saved_config_composes_as_before(tmp_path: Path) -> None:
    settings = load_settings(["run=smoke", "game=kuhn_poker", f"run.resume={tmp_path}"])
    assert settings.game.name == "kuhn_poker" and settings.run.resume == str(tmp_path)
