"""The terminal table of ``omega-cluster play``: a person plays against any seats, line by line.

The loop is plain text in, rich text out, so it runs in any terminal (and in tmux, where the
tests drive it): :meth:`TableSession.advance` plays the bots and each of their moves is printed
as it is made; when a person's seat must act, the table as that seat sees it is drawn (Mexican
Train: the trains with their open ends, markers and open doubles, the own hand, hand sizes,
boneyard, scores and round; another game: its observation) with the legal moves by number and
name, and a prompt reads one line:

* a move number or a move's name plays it; a move that is not legal prints the game contract's
  message and nothing changes;
* ``?`` opens the advisor for the position (:func:`~omega_cluster.play.advisor.advise` with the
  table's champion when a seat holds one); ``??`` or ``?think`` lets the search think first
  (``?think 400``: that many simulations);
* ``help`` prints these commands (they are shown under every table too);
* ``q`` (or end of input) quits cleanly.

Round results are printed when a round ends, and the campaign's result at the end. Long lines
(the advisor's, an error's) are wrapped to the terminal at spaces only, so a number or a signed
term (``stranded_pips-9.2``) is never cut; trains read from the engine outwards with each tile
turned to match, and seats are named ``seat k`` on the board, in the moves and in the results.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from omega_cluster.errors import UserError, one_line
from omega_cluster.games.api import CHANCE
from omega_cluster.play.advisor import Champion, advise, champion_of
from omega_cluster.play.session import IllegalMove, MoveEvent, TableSession

__all__ = ["THINK", "TerminalTable"]

THINK = 100  # simulations of ``??`` / ``?think``
COMMANDS = "commands: ? advisor, ?? advisor after a search, help, q quit"
HELP = (
    "type a move's number or its name to play it\n"
    "  ?          the advisor: each move's policy, value and the heuristic's terms, and why\n"
    f"  ??         the advisor after a search of {THINK} simulations (?think N: N of them)\n"
    "  help       these commands\n"
    "  q          quit (the game is left unfinished)"
)
_TRAIN_TILES = 10  # tiles of a train the terminal shows (the newest; "…" before them)


_GLUE = re.compile(r"(?<=\S) (?=[+-]?\d)")  # "stranded_pips +0.40", "R² 1.00": a name, its value
_KEEP = "\ue000"  # a private-use character standing for a space no line may break at


def wrap(text: str, width: int) -> str:
    """``text`` with each line longer than ``width`` broken at spaces only, never inside a word,
    a number or a signed term, nor between a name and the number after it; the continuation is
    indented under the line's start."""
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()) + 4)
        filled = textwrap.fill(
            _GLUE.sub(_KEEP, line),
            width,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.append(filled.replace(_KEEP, " "))
    return "\n".join(out)


class TerminalTable:
    """The read-move-print loop around one :class:`TableSession` (module docstring)."""

    def __init__(
        self,
        session: TableSession,
        *,
        console: Console | None = None,
        read: Callable[[str], str] | None = None,
    ) -> None:
        self.session = session
        self.console = console or Console(highlight=False)
        self.read = read or self.console.input
        self.champion: Champion | None = next(
            (c for c in map(champion_of, session.players.values()) if c is not None), None
        )
        self._rounds_shown = 0

    def run(self) -> int:
        """Play to the end (or until the person quits); the exit status (0)."""
        s = self.session
        self.console.print(f"[bold]{s.game.spec.name}[/bold]: " + self._seat_line())
        self.console.print(HELP, markup=False)
        while True:
            self._show_events(s.advance())
            self._show_rounds()
            seat = s.waiting_for()
            if seat is None:
                self._show_result()
                return 0
            self._show_table(seat)
            if not self._turn(seat):
                self.console.print("bye (game left unfinished)")
                return 0

    def _turn(self, seat: int) -> bool:
        """Read lines until a legal move is played (True) or the person quits (False)."""
        while True:
            try:
                line = self.read(f"seat {seat}> ").strip()
            except EOFError:
                return False
            if line.lower() in ("q", "quit", "exit"):
                return False
            if not line or line.lower() == "help":
                self.console.print(HELP, markup=False)
                continue
            if line.startswith("?"):
                self._advise(seat, line)
                continue
            alone = len(self.session.state.current_players) == 1
            try:
                event = self.session.play(seat, line)
            except IllegalMove as err:
                self._print(one_line(err), style="red")
                continue
            if alone:  # a simultaneous move is shown with the others' when they are made
                self._show_events([event])
            return True

    def _advise(self, seat: int, line: str) -> None:
        words = line.split()
        think = 0
        if words[0] in ("??", "?think"):
            think = THINK
            if len(words) > 1 and words[1].isdigit() and int(words[1]) > 0:
                think = int(words[1])
        elif words[0] != "?" or len(words) > 1:
            self._print(f"unknown command {line!r}; {COMMANDS}", style="red")
            return
        s = self.session
        try:
            advice = advise(s.game, s.state, seat, champion=self.champion, think=think)
        except UserError as err:
            self._print(f"advisor: {one_line(err)}", style="red")
            return
        self._print(advice.text)

    def _print(self, text: str, style: str | None = None) -> None:
        """Plain text (no markup), wrapped to the console at spaces only (:func:`wrap`)."""
        wrapped = wrap(text, self.console.width)
        self.console.print(wrapped, style=style, markup=False, highlight=False, soft_wrap=True)

    # -- drawing ------------------------------------------------------------------------------
    def _seat_line(self) -> str:
        return ", ".join(f"seat {i} {spec}" for i, spec in enumerate(self.session.seats))

    def _who(self, seat: int) -> str:
        return "chance" if seat == CHANCE else f"seat {seat} ({self.session.seats[seat]})"

    def _show_events(self, events: list[MoveEvent]) -> None:
        for e in events:
            if not e.chance:  # a chance event may be a private deal: shown by no name
                mine = e.seat in self.session.humans
                line = Text(f"  {self._who(e.seat)}: {e.name}", style="bold" if mine else "cyan")
                self.console.print(line)

    def _show_table(self, seat: int) -> None:
        view = self.session.view(seat)
        if view.get("kind") == "dominoes":
            self._show_dominoes(view, seat)
        else:
            self.console.print(view["text"], markup=False)
        self.console.print(f"[bold]your moves (seat {seat})[/bold]")
        moves = Table(box=None, padding=(0, 1))
        moves.add_column("#", justify="right", style="bold cyan")
        moves.add_column("move")
        for number, _action, name in view["legal"]:
            moves.add_row(str(number), name)
        self.console.print(moves)
        self.console.print(f"[dim]{COMMANDS}[/dim]")

    def _show_dominoes(self, v: dict[str, Any], seat: int) -> None:
        """Mexican Train's view (its ``seat_view``): each train's tiles already turned to match,
        from the engine outwards; the newest :data:`_TRAIN_TILES` of a long train."""
        c = self.console
        c.rule(f"round {v['round']}/{v['rounds']}  engine {v['engine']}|{v['engine']}")
        trains = Table(box=None, padding=(0, 1))
        for column in ("train", "tiles from the engine", "open end", ""):
            trains.add_column(column)
        for t in v["trains"]:
            flags = " ".join(
                f for f, on in (("marker", t["marker"]), ("OPEN DOUBLE", t["open_double"])) if on
            )
            owner = f"{t['owner']} (you)" if t["slot"] == seat else t["owner"]
            shown = t["tiles"][-_TRAIN_TILES:]
            laid = ("… " if len(shown) < len(t["tiles"]) else "") + " ".join(shown)
            end = f"[bold]{t['open_end']}[/bold]"
            flags = f"[red]{flags}[/red]" if flags else ""
            trains.add_row(owner, laid or "-", end, flags)
        c.print(trains)
        sizes = "  ".join(f"seat {i}: {n}" for i, n in enumerate(v["hand_sizes"]))
        c.print(f"hand sizes  {sizes}   boneyard {v['boneyard']}", markup=False)
        c.print(f"scores      {'  '.join(map(str, v['scores']))} (pips, lowest wins)")
        c.print(f"[bold]your hand[/bold]   [bold yellow]{' '.join(v['hand'])}[/bold yellow]")

    def _show_rounds(self) -> None:
        results = getattr(self.session.state, "round_results", ())
        for r in results[self._rounds_shown :]:
            how = "blocked" if r.blocked else f"seat {r.went_out} went out"
            pips = ", ".join(f"seat {i}: {p}" for i, p in enumerate(r.pips))
            self.console.print(f"[bold]round {r.round_index + 1} over[/bold]: {how}; pips {pips}")
        self._rounds_shown = len(results)

    def _show_result(self) -> None:
        result = self.session.result() or {}
        table = Table(title="game over", box=None, padding=(0, 1))
        for column in ("seat", "player", "score", "win share"):
            table.add_column(column)
        for i, spec in enumerate(self.session.seats):
            score, share = result["scores"][i], result["win_shares"][i]
            table.add_row(str(i), spec, f"{score:g}", f"{share:.2f}")
        self.console.print(table)
