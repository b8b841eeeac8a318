"""The released network at a table, and the strength file of a release's card.

* ``omega`` (Mexican Train's short name for the released network) resolves the repository's
  ``models/mexican_train`` from the package's location, or the folder ``omega:<dir>`` names; a
  missing folder is one line saying how to make it (the repository need not hold a release);
* ``omega:<dir>`` and ``network:<dir>`` seat the network alone at the play/serve table
  (:class:`TableSession`, which both use);
* a strength file of the wrong shape is one line naming the file, the row and the field; its rows
  render as a markdown table.

The checkpoint is an untrained Mexican Train ``models/v0`` made with the model API (no training).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_helpers import champion_run

from omega_cluster.errors import UserError
from omega_cluster.games.mexican_train.release import (
    RELEASE_DIR,
    ReleaseMissingError,
    released_model_dir,
)
from omega_cluster.games.registry import make_game
from omega_cluster.play.session import TableSession
from omega_cluster.players.registry import available_players, make_player
from omega_cluster.release import ReleaseError, read_strength, strength_markdown

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mt_run")
    champion_run(root, ["run=smoke", "game=mexican_train", "cluster=inprocess"])
    return root / "models" / "v0"


def test_omega_looks_in_the_repository_models_folder() -> None:
    assert RELEASE_DIR == ROOT / "models" / "mexican_train"
    assert "omega" in available_players("mexican_train")
    assert "omega" not in available_players("kuhn_poker")


def test_a_missing_release_is_one_line_naming_the_release_command(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ReleaseMissingError) as caught:
        released_model_dir(missing)
    message = str(caught.value)
    assert "\n" not in message and f"no released Mexican Train network at {missing}" in message
    assert f"omega-cluster release run=<run dir> out={missing}" in message
    with pytest.raises(UserError, match="no released Mexican Train network"):
        make_player(f"omega:{missing}", make_game("mexican_train"))


def test_omega_and_network_seat_the_network_alone(checkpoint: Path) -> None:
    assert released_model_dir(checkpoint) == checkpoint
    game = make_game("mexican_train", players=2)
    omega = make_player(f"omega:{checkpoint}", game)
    assert omega.name == f"omega:{checkpoint}"
    session = TableSession(game, [f"omega:{checkpoint}", f"network:{checkpoint}"], seed=0)
    made = session.advance()
    assert session.is_over() and {e.seat for e in made if not e.chance} == {0, 1}


def _strength(tmp_path: Path, rows: object) -> Path:
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"rows": rows}))
    return path


ROW = {"opponent": "commander", "players": 4, "games": 200, "statistic": "win rate",
       "value": 0.31, "low": 0.27, "high": 0.35, "command": "python -m bench champion",
       "seed": 11}  # fmt: skip


def test_a_strength_file_renders_as_a_table(tmp_path: Path) -> None:
    table = read_strength(_strength(tmp_path, [ROW]))
    assert strength_markdown(table.rows).splitlines()[2] == (
        "| commander | 4 | 200 | win rate | 0.31 | [0.27, 0.35] | 11 | `python -m bench champion` |"
    )


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([{**ROW, "games": "many"}], "row 0: games must be int, got 'many'"),
        ([ROW, {k: v for k, v in ROW.items() if k != "seed"}], "row 1: missing seed; fields:"),
        ([{**ROW, "elo": 3}], "row 0: unknown elo"),
        ([{**ROW, "players": 0}], "row 0: players must be >= 1"),
        ("not a list", 'expected a JSON object {"rows": [...]}'),
    ],
)
def test_a_bad_strength_file_is_one_line(tmp_path: Path, rows: object, words: str) -> None:
    path = _strength(tmp_path, rows)
    with pytest.raises(ReleaseError) as caught:
        read_strength(path)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"strength={path}: ") and words in str(caught.value)
