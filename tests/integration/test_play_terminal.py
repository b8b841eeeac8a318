"""``omega-cluster play`` driven in a real terminal: tmux runs the command, the test types into it
(``send-keys``) and reads the screen (``capture-pane``).

One game of Mexican Train (one round, four seats: a person and three officers): the table shows
the person's hand and the trains; a move typed by number is played and the bots' answers are
printed; a number out of range and a real move that is not legal print their message and the
table stays as it was; ``?`` opens the advisor (``??`` with a search); the commands are on the
screen and ``help`` prints them; ``q`` quits with status 0. Bad command lines
(unknown game, bad seat spec, the wrong number of seats) are one line on stderr, status 2.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from omega_cluster.play.terminal import COMMANDS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit"))
from train_helpers import champion_run

ROOT = Path(__file__).resolve().parents[2]
TMUX = shutil.which("tmux") or "/usr/bin/tmux"
COMMAND = [sys.executable, "-m", "omega_cluster", "play", "game=mexican_train", "players=4",
           "seats=you,commander,commander,lieutenant", "rounds=1", "seed=2"]  # fmt: skip
TIMEOUT_S = 60.0


class Screen:
    """One tmux session running a command; ``type`` sends a line, ``wait_for`` polls the screen."""

    def __init__(self, name: str, command: list[str]) -> None:
        self.name = name
        env = f"PYTHONPATH={ROOT} COLUMNS=120"
        shell = f"cd {ROOT} && {env} {' '.join(command)}; echo EXITED rc=$?; sleep 60"
        subprocess.run(
            [TMUX, "new-session", "-d", "-s", name, "-x", "120", "-y", "50", shell], check=True
        )

    def text(self) -> str:
        out = subprocess.run(
            [TMUX, "capture-pane", "-p", "-J", "-S", "-2000", "-t", self.name],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        return out.stdout

    def wait_for(self, words: str, *, after: int = 0) -> str:
        """The screen once ``words`` appears past character ``after`` (fails after a minute)."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            screen = self.text()
            if words in screen[after:]:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{words!r} never appeared; the screen:\n{self.text()}")

    def type(self, line: str) -> int:
        """Send ``line`` and Enter; the screen's length before it (for ``wait_for(after=)``)."""
        before = len(self.text().rstrip())
        subprocess.run([TMUX, "send-keys", "-t", self.name, "-l", line], check=True)
        subprocess.run([TMUX, "send-keys", "-t", self.name, "Enter"], check=True)
        return before

    def close(self) -> None:
        subprocess.run([TMUX, "kill-session", "-t", self.name], check=False, capture_output=True)


def _kuhn_run(root: Path) -> Path:
    """A run directory with one champion (untrained weights), for kuhn_poker."""
    champion_run(root, ["run=smoke", "game=kuhn_poker", "cluster=inprocess"])
    return root


@pytest.fixture
def screen() -> Iterator[Screen]:
    s = Screen(f"omega-play-{os.getpid()}", COMMAND)
    try:
        yield s
    finally:
        s.close()


def _last_table(text: str) -> str:
    """The last table drawn (from its last 'round' rule on)."""
    return text[text.rindex("round 1/1") :]


def test_a_person_plays_a_move_sees_errors_asks_the_advisor_and_quits(screen: Screen) -> None:
    first = screen.wait_for("seat 0> ")
    assert "your hand" in first and "Mexican" in first and "boneyard 30" in first
    assert "your moves (seat 0)" in first and " 0  " in first
    assert COMMANDS in first  # the commands are on the screen, not hidden
    before = screen.type("0")
    shown = screen.wait_for("seat 3 (lieutenant):", after=before)
    assert "seat 0 (you):" in shown[before:] and "seat 1 (commander):" in shown[before:]
    shown = screen.wait_for("seat 0> ", after=before)
    table = _last_table(shown)
    assert "hand sizes  seat 0: 14" in table  # the tile left the hand

    before = screen.type("99")
    shown = screen.wait_for("no move number 99", after=before)
    assert "legal moves: 0=" in shown[before:]
    before = screen.type("0|0 on Mexican train")  # a real move, not legal here
    shown = screen.wait_for("illegal action", after=before)
    assert _last_table(shown).count("seat 0> ") == 3  # no new table: nothing changed
    assert "hand sizes  seat 0: 14" in _last_table(shown)

    before = screen.type("?")
    shown = screen.wait_for("why: ", after=before)
    assert "advisor for seat 0" in shown[before:] and "score" in shown[before:]
    before = screen.type("??")  # the advisor with a search: visit shares and Q
    shown = screen.wait_for("why: ", after=before)
    assert "visits" in shown[before:] and " Q " in shown[before:]

    before = screen.type("help")  # a command, not a move
    shown = screen.wait_for("q          quit", after=before)
    assert "no move is named" not in shown[before:]

    before = screen.type("q")
    shown = screen.wait_for("EXITED rc=0", after=before)
    assert "bye" in shown[before:] and "Traceback" not in shown


def test_the_advisor_shows_the_champion_of_the_table(tmp_path: Path) -> None:
    run = _kuhn_run(tmp_path / "kuhn")
    command = [*COMMAND[:4], "game=kuhn_poker", f"seats=you,champion:{run}"]
    s = Screen(f"omega-play-k{os.getpid()}", command)
    try:
        s.wait_for("seat 0> ")
        before = s.type("?")
        shown = s.wait_for("why: ", after=before)
        assert "champion champion:kuhn" in shown[before:] and " p 0." in shown[before:]
        assert "(network)" in shown[before:]  # the explanation fits the network's logits
        before = s.type("q")
        s.wait_for("EXITED rc=0", after=before)
    finally:
        s.close()


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (["game=nogame", "seats=you"], "unknown game 'nogame'"),
        (["game=mexican_train", "seats=you,bogus,commander,commander"], "unknown player 'bogus'"),
        (["game=mexican_train", "players=4", "seats=you,commander"], "2 seats (you,commander)"),
    ],
)
def test_bad_command_lines_are_one_line_and_status_2(settings: list[str], words: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "omega_cluster", "play", *settings],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("omega-cluster play:")
