"""The ``omega-cluster`` command line, run in-process through ``main([...])`` and once as
``python -m omega_cluster``. Matches use ``HighCardGame`` from ``test_arena.py``, loaded by import
path (``game=test_arena:HighCardGame``) or registered under a name for the test's duration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omega_cluster.cli import main, parse_key_values, parse_value
from omega_cluster.games import registry as game_registry
from omega_cluster.games.api import ParamSpec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GAME = "game=test_arena:HighCardGame"


@pytest.fixture(autouse=True)
def _tests_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_arena_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "arena", GAME, "seats=random,ensign,random", "games=6", "seed=4", "quiet=true"
    )
    assert status == 0
    for needle in ("high_card", "3 players", "6 games", "seed 4", "random#1", "random#2", "ensign"):
        assert needle in out
    assert "fair share" in out


def test_players_default_to_the_seat_count_and_game_parameters_parse(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(
        capsys,
        "arena",
        GAME,
        "seats=random,random,random,random",
        "deck=9",
        "simultaneous=false",
        "games=4",
        "rotate=false",
        "progress=false",
    )
    assert status == 0
    assert "4 players" in out and "fixed seats" in out


def test_seats_default_to_random(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_arena import HighCardGame

    monkeypatch.setitem(game_registry._REGISTERED, "high_card", HighCardGame)
    status, out, _ = run(capsys, "arena", "game=high_card", "players=3", "games=3", "quiet=true")
    assert status == 0
    assert "random#3" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([GAME, "foo=1"], "unknown key 'foo'; arena keys: game, seats, games, seed"),
        ([GAME, "foo=1"], "parameters of test_arena:HighCardGame: players, deck, simultaneous"),
        ([GAME, "deck=99"], "deck=99 is above the maximum"),
        ([GAME, "seats=random,grandmaster"], "unknown player 'grandmaster'"),
        ([GAME, "seats=random,commander"], "does not support game 'high_card'"),
        ([GAME, "players=3", "seats=random,random"], "2 seats (random,random) for a 3-player game"),
        ([GAME, "games=0"], "games='0' must be an int >= 1"),
        ([GAME, "games=many"], "games='many' must be an int >= 1"),
        ([GAME, "rotate=maybe"], "rotate='maybe' must be true or false"),
        ([GAME, "games"], "expected key=value, got 'games'"),
        ([GAME, "seed=1", "seed=2"], "key 'seed' given twice"),
        (["seats=random,random"], "arena needs game=<name>; available games: "),
        (["game=no_such_game"], "unknown game 'no_such_game'"),
        (["game=no_such_module:Game"], "cannot import no_such_module"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, "arena", *argv, "quiet=true")
    assert status == 2
    assert message in err
    assert err.startswith("omega-cluster arena: error: ") and err.count("\n") == 1
    assert "Traceback" not in err and out == ""


def test_help_and_missing_command(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "arena" in out and "games" in out
    status, out, _ = run(capsys, "arena", "--help")
    assert status == 0 and "seats" in out and "example: omega-cluster arena" in out
    status, _, err = run(capsys)
    assert status == 2 and "usage: omega-cluster" in err
    status, _, err = run(capsys, "fly")
    assert status == 2 and "invalid choice" in err


def test_games_lists_games_and_parameters(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_arena import HighCardGame

    monkeypatch.setitem(game_registry._REGISTERED, "high_card", HighCardGame)
    status, out, _ = run(capsys, "games")
    assert status == 0
    for needle in ("high_card", "deck", "cards 0..deck-1", "kuhn_poker", "mexican_train"):
        assert needle in out


def test_value_parsing() -> None:
    assert parse_key_values(["a=1", "b = x=y"]) == {"a": "1", "b": "x=y"}
    assert parse_value("400") == 400 and parse_value("0.5") == 0.5
    assert parse_value("True") is True and parse_value("false") is False
    assert parse_value("none") is None and parse_value("points") == "points"
    assert parse_value("1,2,x") == (1, 2, "x")
    assert parse_value("007", ParamSpec("a", "a name", str)) == "007"
    assert parse_value("3", ParamSpec((1,), "a list", tuple)) == (3,)


def test_python_dash_m_runs_the_cli() -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-m", "omega_cluster", "arena", GAME, "games=4", "seed=1", "quiet=true"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "high_card" in done.stdout and "random#2" in done.stdout


def test_arena_and_play_seat_a_fixed_size_game(capsys: pytest.CaptureFixture[str]) -> None:
    # a game with no `players` parameter is not given one from the seat count
    rc = main(["arena", "game=openspiel:tic_tac_toe", "seats=random,random", "games=2",
               "progress=false"])  # fmt: skip
    assert rc == 0
    assert "random" in capsys.readouterr().out
    assert main(["arena", "game=openspiel:tic_tac_toe", "seats=random,random,random"]) == 2
    assert "3 seats" in capsys.readouterr().err
