"""The terminal table's loop in one process: a person who always plays move 0 reaches the end of
a two-round campaign and sees each round's result and the final table; end of input quits."""

from __future__ import annotations

import io

from rich.console import Console

from omega_cluster.games.registry import make_game
from omega_cluster.play.session import TableSession
from omega_cluster.play.terminal import TerminalTable


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
    assert "type a move number or name" in text  # an empty line shows the help
