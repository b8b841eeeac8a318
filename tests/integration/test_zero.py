"""The loop from nothing (``run=zero``) on Connect Four and tic-tac-toe (issue 37).

The presets resolve to AlphaZero's loop with no teacher anywhere (the network leaf, PUCT, root
noise, no warm start) and to fixed reference bots as anchors (OpenSpiel's MCTSBot, which the
registry builds for these games); a game without a rule-based player under another run preset
fails with lines naming the keys. A smoke-sized run of each preset trains in process (the
real self-play, Arrow shards, learner, gate and anchor games; only the sizes are smoke's), and
``bench/bench_zero.py`` benches the tic-tac-toe run's champions against the reference bots and
records the rows of ``docs/results.md``'s ``zero`` table (run as a command: tests do not import
``bench/``; into a temporary results directory).

A user's game (``examples/blind_war``, whose plugin has a rule-based player) under ``run=zero``
is rated against random alone, never its heuristic; a smoke-sized run of it is benched against
the references the bench chooses for a game without OpenSpiel's bots — random and the run's
untrained v0, paired by deal — into the ``zero_own`` table.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from omega_cluster.config import ConfigError, conf_dir, load_settings, to_yaml
from omega_cluster.config.load import _preset_game_name
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.players.registry import make_player
from omega_cluster.service import run_training
from omega_cluster.wiring import build_game, gate_service_config

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
GAMES = {"connect_four": "openspiel:connect_four", "tic_tac_toe": "openspiel:tic_tac_toe"}
REFERENCES = {"random", "openspiel_mcts:100", "openspiel_mcts:1000"}
USER_GAME = "blind_war:BlindWarGame"  # examples/blind_war: a rule-based player, no preset
# the smoke sizes (run=smoke's, and the games small enough that a run takes seconds)
SMOKE = ["cluster=inprocess", "model=small", "run.iterations=2", "run.games_per_iteration=8",
         "search.simulations=8", "gate.bench_simulations=8", "gate.max_games=40",
         "gate.anchor_games=2", "gate.anchor_network_games=4", "learner.batch_size=32",
         "learner.min_rows=16", "learner.steps_per_candidate=20", "cluster.concurrent_games=4",
         "cluster.games_per_chunk=4", "tracking.log_onnx=false", "run.progress=false"]  # fmt: skip


@pytest.mark.parametrize("preset", sorted(GAMES))
def test_the_zero_preset_is_alphazero_with_no_teacher(preset: str) -> None:
    s = load_settings(["run=zero", f"game={preset}"])
    assert s.game.name == GAMES[preset] and s.run.name == "zero"
    assert (s.search.leaf, s.search.selection) == ("network", "puct")
    assert s.search.dirichlet_fraction > 0 and s.search.temperature > 0
    assert 0 < s.search.temperature_moves < build_game(s).pyspiel_game.max_game_length()
    assert s.learner.warm_start_games == 0  # v0 is the fresh network
    assert s.gate.player == "network" and s.gate.opening_moves > 0
    assert set(s.gate.anchors) == REFERENCES
    elo = s.gate.anchors
    assert elo["random"] < elo["openspiel_mcts:100"] < elo["openspiel_mcts:1000"]
    game = build_game(s)
    for spec in s.gate.anchors:  # the registry builds the reference bots for this game
        assert make_player(spec, game).name.startswith(spec.split(":")[0])
    assert _preset_game_name(conf_dir(), preset) == GAMES[preset]


def test_a_game_without_a_teacher_under_the_default_run_names_the_keys() -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(["game=connect_four"])
    text = str(info.value)
    assert "search.leaf='heuristic_rollout'" in text and "learner.warm_start_games=2000" in text
    assert "set it to 0" in text and "Traceback" not in text


def test_the_zero_preset_on_a_users_game_rates_against_random_alone(blind_war: ModuleType) -> None:
    assert "heuristic" in blind_war.PLUGIN.players  # the game has one, and the run leaves it be
    s = load_settings(["run=zero", f"game.name={USER_GAME}"])
    assert (s.search.leaf, s.search.selection) == ("network", "puct")
    assert s.learner.warm_start_games == 0
    assert gate_service_config(s).anchors == {"random": 1000.0}  # not the game's own ladder
    # the OpenSpiel presets keep their reference bots beside it; a value replaces the mapping
    assert set(load_settings(["run=zero", "game=connect_four"]).gate.anchors) == REFERENCES
    assert load_settings(["run=zero", "game=connect_four", "gate.anchors={random:900}"]
                         ).gate.anchors == {"random": 900.0}  # fmt: skip


def _train(preset: str, root: Path, *overrides: str) -> Path:
    game = f"game.name={preset}" if ":" in preset else f"game={preset}"
    settings = load_settings(["run=zero", game, *SMOKE, f"run.dir={root}", *overrides])
    run_training(settings, config_yaml=to_yaml(settings), progress=False)
    return root


@pytest.fixture(scope="module")
def tic_tac_toe_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train("tic_tac_toe", tmp_path_factory.mktemp("zero") / "ttt")


def _check_run(root: Path, game: str) -> None:
    state = json.loads((root / "pipeline.json").read_text())
    assert state["game"] == game and state["decisions"] == 2 and state["games"] >= 16
    assert state["warm_start"] == {}  # no teacher
    registry = ModelRegistry(root, game=game)
    assert [v.version for v in registry.versions] == [0, 1, 2]
    # every champion was rated against the reference bots, as the network and as the search
    rated = {(r["anchor"], r["player"]) for r in state["anchor_slices"] if r["version"] == 0}
    assert rated == {(a, k) for a in REFERENCES for k in ("network", "search")}
    kinds = {r["player"] for r in state["ratings"] if r["version"] == 0}
    assert kinds == {"network", "search"}


def test_a_smoke_sized_tic_tac_toe_run_completes(tic_tac_toe_run: Path) -> None:
    _check_run(tic_tac_toe_run, "openspiel:tic_tac_toe")


def test_a_smoke_sized_connect_four_run_completes(tmp_path: Path) -> None:
    run = _train("connect_four", tmp_path / "c4", "tracking.enabled=false")  # MLflow: the other's
    _check_run(run, "openspiel:connect_four")


def _bench(*args: str, results: Path) -> str:
    paths = [str(ROOT), str(ROOT / "examples"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "OMEGA_RESULTS_DIR": str(results), "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run([sys.executable, "-m", "bench.bench_zero", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_bench_zero_records_the_champions_against_the_reference_bots(
    tic_tac_toe_run: Path, tmp_path: Path
) -> None:
    out = _bench("--run", str(tic_tac_toe_run), "--minutes", "0", "60", "--games", "2",
                 "--workers", "1", "--save", results=tmp_path)  # fmt: skip
    figures = json.loads((tmp_path / "bench_zero.json").read_text())["figures"]
    assert len(figures) == 4  # (0 and 60 minutes) x (search, network alone)
    champion = ModelRegistry(tic_tac_toe_run, game="openspiel:tic_tac_toe").champion
    assert champion is not None
    for f in figures:
        minutes, games, version, player, vs100, vs1000, perfect = f["cells"]
        assert f["table"] == "zero" and f["name"].endswith(", openspiel:tic_tac_toe")
        # at minute 0 the run had v0; by minute 60 its final champion
        assert version == ("v0" if minutes == "0" else f"v{champion.version}")
        assert int(games) == (0 if minutes == "0" else 16)
        assert player in ("search, 8 simulations", "network alone")
        for cell in (vs100, vs1000):  # score [Wilson interval] (W-D-L) over 2 games
            w, d, l = map(int, cell.rpartition("(")[2].rstrip(")").split("-"))
            assert w + d + l == 2
        assert perfect.endswith("in 2") and perfect.split()[0].isdigit()
    assert "vs openspiel_mcts:10000" in out and "champion v0" in out


def test_bench_zero_ladder_rates_the_presets_anchors(tmp_path: Path) -> None:
    out = _bench("--ladder", "tic_tac_toe", "--games", "2", results=tmp_path)
    assert "random: 1000 " in out and "openspiel_mcts:1000:" in out and "(preset: 1667)" in out
    assert not (tmp_path / "bench_zero.json").exists()  # the ladder records nothing


@pytest.fixture(scope="module")
def user_game_run(blind_war: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _train(USER_GAME, tmp_path_factory.mktemp("zero") / "bw", "tracking.enabled=false")


def test_bench_zero_pairs_a_users_games_champions_with_random_and_v0(
    user_game_run: Path, tmp_path: Path
) -> None:
    state = json.loads((user_game_run / "pipeline.json").read_text())
    assert {r["anchor"] for r in state["anchor_slices"]} == {"random"}  # the run's anchors
    out = _bench("--run", str(user_game_run), "--minutes", "0", "60", "--games", "4",
                 "--workers", "1", "--save", results=tmp_path)  # fmt: skip
    figures = json.loads((tmp_path / "bench_zero.json").read_text())["figures"]
    assert len(figures) == 4  # (0 and 60 minutes) x (search, network alone)
    champion = ModelRegistry(user_game_run, game="blind_war").champion
    assert champion is not None
    number = r"(-?[\d.]+|-?inf)"
    cell = re.compile(rf"{number} \[{number}, {number}\]; fair share {number} "
                      rf"\[{number}, {number}\] \(4 games\)")  # fmt: skip
    for f in figures:
        minutes, _, version, player, vs_random, vs_v0 = f["cells"]
        assert f["table"] == "zero_own" and f["name"].endswith(", blind_war:BlindWarGame")
        assert version == ("v0" if minutes == "0" else f"v{champion.version}")
        assert player in ("search, 8 simulations", "network alone")
        for text in (vs_random, vs_v0):  # score and fair share, each [95% by deal], 2 deals
            found = cell.fullmatch(text)
            assert found, text
            score, fair = float(found[1]), float(found[4])
            assert fair == pytest.approx(2 * score, abs=0.01)  # 2 players, no ties
        if (minutes, player) == ("0", "network alone"):
            # v0 against itself, greedy: each deal's two games are one game with the seats
            # swapped, so every deal scores exactly a half (the pairing, by deal)
            assert vs_v0 == "0.500 [0.500, 0.500]; fair share 1.00 [1.00, 1.00] (4 games)"
    assert "vs random " in out and "vs v0 " in out and "openspiel_mcts" not in out
