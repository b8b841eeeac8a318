"""``omega-cluster release`` on a real run: a tiny Kuhn poker training (in this process, tracked in
the run's own MLflow sqlite store, one promotion, anchored ratings) released into ``tmp_path``.

* the folder holds the checkpoint as ``network:`` loads it (safetensors, read by safetensors' own
  loader; the run's metadata; no optimizer state, nothing pickled), an ONNX model that agrees with
  torch, and a card with the run's settings, code version, ratings, the strength file's rows (or
  "no strength file") and the overrides that compose the run's config again;
* ``network:<released dir>`` plays an arena match;
* a different release already in ``out`` is refused in one line unless ``force=true``; the same
  release made again replaces it. (Bad keys, a missing run, an unknown version: the table of
  ``tests/unit/test_cli_errors.py``.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from omega_cluster.cli import main
from omega_cluster.config import load_settings, to_yaml
from omega_cluster.games.registry import make_game
from omega_cluster.model import encode_batch, encoder_from_info, random_positions, verify_onnx
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.release import NO_STRENGTH, read_run
from omega_cluster.service import run_training

pytestmark = pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")

TINY = ["run=smoke", "game=kuhn_poker", "cluster=inprocess", "run.progress=false",
        "run.iterations=1", "gate.margin=-1.0", "gate.require_no_worse_slice=false",
        "gate.anchor_games=4", "tracking.log_onnx=false"]  # fmt: skip
ROWS = [
    {"opponent": "heuristic", "players": 2, "games": 400, "statistic": "win rate",
     "value": 0.61, "low": 0.56, "high": 0.66, "command": "python -m bench champion --games=400",
     "seed": 7},
    {"opponent": "random", "players": 2, "games": 200, "statistic": "mean chips",
     "value": 0.4, "low": None, "high": None, "command": "", "seed": "os-entropy"},
]  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished tiny run: v0, and v1 promoted (gate margin -1) with its anchored ratings."""
    root = tmp_path_factory.mktemp("release") / "run"
    settings = load_settings([*TINY, f"run.dir={root}"])
    result = run_training(settings, config_yaml=to_yaml(settings), progress=False)
    assert result.state.promotions == 1
    return root


def _release(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(["release", *argv, "verify=16"])
    out, err = capsys.readouterr()
    return status, err if status else out


def test_a_release_holds_the_checkpoint_onnx_and_card(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strength = tmp_path / "strength.json"
    strength.write_text(json.dumps({"rows": ROWS, "note": "paired deals, seats rotated"}))
    out = tmp_path / "models" / "kuhn_poker"
    status, said = _release(capsys, f"run={run_dir}", f"out={out}", f"strength={strength}")
    assert status == 0, said
    assert f"released v1 of {run_dir}" in said and f"seat it as network:{out}" in said
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "model.safetensors",
            "metadata.json",
            "model.onnx",
            "encoder.json",
            "ONNX.md",
            "MODEL_CARD.md",
            "release.json",
        ]
    )  # no optimizer state, no pickle, nothing left of the writing
    source = run_dir / "models" / "v1"
    with safe_open(str(out / "model.safetensors"), framework="pt") as f:
        keys = set(f.keys())
    loaded = load_checkpoint(out, expected_game="kuhn_poker")
    assert keys == set(loaded.model.state_dict()) and loaded.optimizer_state is None
    assert (out / "metadata.json").read_text() == (source / "metadata.json").read_text()
    assert loaded.metadata.version == 1
    game = make_game("kuhn_poker")
    encoder = encoder_from_info(game, loaded.metadata.encoder)
    batch = encode_batch(encoder, random_positions(game, 32, seed=3))
    assert verify_onnx(loaded.model, out / "model.onnx", *batch) < 1e-4
    identity = json.loads((out / "release.json").read_text())
    assert identity["version"] == 1 and identity["weights_sha256"] == loaded.metadata.weights_sha256
    card = (out / "MODEL_CARD.md").read_text()
    record = read_run(run_dir)
    sha = record.code_version["git.sha"]
    assert len(sha) == 40 and f"`{sha}`" in card  # the code version the run's MLflow run tagged
    assert record.reproducible and "compose the run's resolved `config.yaml` exactly" in card
    assert load_settings(list(record.overrides)).run.iterations == 1
    assert "omega-cluster train game.name=kuhn_poker " in card and "run.iterations=1" in card
    assert f"omega-cluster release run={run_dir} out={out} strength={strength}" in card
    assert "| heuristic | 2 | 400 | win rate | 0.61 | [0.56, 0.66] | 7 |" in card
    assert "| random | 2 | 200 | mean chips | 0.4 | — | os-entropy | — |" in card
    assert "paired deals, seats rotated" in card and NO_STRENGTH not in card
    assert "| chips | network |" in card and "| chips | search |" in card  # anchored ratings
    assert "leaf `random`" in card and "simulations per move | 16" in card
    assert f"network:{out}" in card


def test_network_seats_a_release_and_the_card_says_when_no_strength_was_given(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "released"
    status, said = _release(capsys, f"run={run_dir}", f"out={out}")
    assert status == 0, said
    assert (
        f"## Strength\n\n{NO_STRENGTH} to the release command"
        in (out / "MODEL_CARD.md").read_text()
    )
    status = main(["arena", "game=kuhn_poker", f"seats=network:{out},random", "games=4",
                   "quiet=true"])  # fmt: skip
    table, err = capsys.readouterr()
    assert status == 0, err
    assert "kuhn_poker · 2 players · 4 games" in table


def test_a_different_release_is_replaced_only_when_forced(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "released"
    assert _release(capsys, f"run={run_dir}", "version=0", f"out={out}")[0] == 0
    before = (out / "release.json").read_text()
    status, err = _release(capsys, f"run={run_dir}", f"out={out}")
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err
    assert lines[0].startswith(f"omega-cluster release: error: out={out} holds a different release")
    assert "give force=true to replace it" in lines[0]
    assert (out / "release.json").read_text() == before  # untouched
    assert _release(capsys, f"run={run_dir}", "version=0", f"out={out}")[0] == 0  # the same one
    assert _release(capsys, f"run={run_dir}", f"out={out}", "force=true")[0] == 0
    assert json.loads((out / "release.json").read_text())["version"] == 1
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp dir left
