"""The terminal table's loop in one process: a person who always plays move 0 reaches the end of
a two-round campaign and sees each round's result and the final table; end of input quits. The
commands are shown and ``help`` is one of them, not a move; trains read from the engine outwards
with each tile turned to match; a seat has one name on the board and in the moves; the advisor's
lines wrap at spaces, never inside a number."""

from __future__ import annotations

import io
import itertools
import re

from rich.console import Console

from omega_cluster.games.registry import make_game
from omega_cluster.play.advisor import advise
from omega_cluster.play.session import TableSession
from omega_cluster.play.terminal import COMMANDS, TerminalTable, wrap


def _table(seats: list[str], lines: list[str] | None, **params: object) -> tuple[int, str]:
    game = make_game("mexican_train", players=len(seats), **params)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None)
    feed = iter(lines) if lines is not None else None

    def read(prompt: str) -> str:
        console.print(prompt, end="")
        if feed is None:
            return "0"
        line = next(feed, None)
        if line is None:
            raise EOFError
        return line

    status = TerminalTable(TableSession(game, seats, seed=4), console=console, read=read).run()
    return status, out.getvalue()


def test_a_campaign_shows_round_results_and_the_final_table() -> None:
    status, text = _table(["you", "commander", "lieutenant"], None, rounds=2)
    assert status == 0
    assert "round 1 over" in text and "round 2 over" in text and "game over" in text
    assert "win share" in text and text.count("round 2/2") >= 1


def test_end_of_input_quits_and_a_bad_advisor_command_is_refused() -> None:
    status, text = _table(["you", "commander"], ["?x", ""], rounds=1)
    assert status == 0 and "unknown command '?x'" in text and "bye" in text
    assert "type a move's number or its name" in text  # an empty line shows the help


def test_the_commands_are_shown_and_help_is_a_command_not_a_move() -> None:
    status, text = _table(["you", "commander"], ["help"], rounds=1)
    assert status == 0 and text.count(COMMANDS) >= 1  # under the table's moves
    assert "q          quit" in text and "??         the advisor after a search" in text
    after = text[text.index("seat 0> ") :]
    assert "q          quit" in after  # help printed when asked, not played
    assert "no move is named" not in text and "illegal" not in text


def test_trains_read_from_the_engine_outwards_and_seats_have_one_name() -> None:
    status, text = _table(["you", "commander", "lieutenant"], None, rounds=2)
    assert status == 0
    long_chains = 0
    for line in text.splitlines():
        if not re.match(r" (seat \d|Mexican) ", line):
            continue  # the rows of the trains' tables
        tiles = [tuple(map(int, t.split("|"))) for t in re.findall(r"\b\d+\|\d+\b", line)]
        for (_, far), (near, _) in itertools.pairwise(tiles):
            assert near == far, line  # each tile turned to match the one before it
        long_chains += len(tiles) >= 3
    assert long_chains >= 5
    assert "seat 0 (you)" in text and "on seat 1's train" in text  # board and moves alike
    assert not re.search(r"player \d", text)


def test_the_advisor_wraps_at_spaces_never_inside_a_number() -> None:
    game = make_game("mexican_train", players=4, double_set=9, rounds=1)
    session = TableSession(game, ["you", "commander", "commander", "commander"], seed=5)
    session.advance()
    session.play(0, 0)
    session.advance()  # a position with a few moves to compare
    out = io.StringIO()
    console = Console(file=out, width=60, color_system=None)
    feed = iter(["?"])

    def read(prompt: str) -> str:
        line = next(feed, None)
        if line is None:
            raise EOFError
        return line

    TerminalTable(session, console=console, read=read).run()  # ? then end of input
    text = out.getvalue()
    advice = advise(game, session.state, 0).text
    why = next(line for line in advice.splitlines() if line.startswith("why: "))
    assert len(why) > 60  # a line that must be wrapped
    shown = text[text.index("advisor for seat 0") :]
    assert all(len(line) <= 60 for line in shown.splitlines())
    numbers = re.findall(r"[+-]?\d+\.\d+", advice)
    assert re.findall(r"[+-]?\d+\.\d+", shown[: shown.index("bye")]) == numbers
    for term, value in re.findall(r"(\w+) ([+-]\d+\.\d+)", why):
        assert f"{term} {value}" in shown  # a term stays beside its value


def test_wrap_breaks_only_at_spaces() -> None:
    line = "why: a over b: hand_flexibility +6.00, stranded_pips-9.25 x; gap +1.70, R² 1.00"
    for width in range(28, len(line)):  # the longest unit: "hand_flexibility +6.00," indented
        wrapped = wrap(line, width).splitlines()
        assert len(wrapped) > 1 and all(len(w) <= width for w in wrapped)
        assert " ".join(w.strip() for w in wrapped) == line
        for unit in ("stranded_pips-9.25", "hand_flexibility +6.00", "gap +1.70", "R² 1.00"):
            assert unit in "\n".join(wrapped)  # never cut, nor a name from its value
