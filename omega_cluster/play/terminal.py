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
* ``q`` (or end of input) quits cleanly.

Round results are printed when a round ends, and the campaign's result at the end.
"""

from __future__ import annotations

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
HELP = "type a move number or name; ? advisor, ?? advisor with search, q quit"


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
            if not line:
                self.console.print(HELP)
                continue
            if line.startswith("?"):
                self._advise(seat, line)
                continue
            alone = len(self.session.state.current_players) == 1
            try:
                event = self.session.play(seat, line)
            except IllegalMove as err:
                self.console.print(f"[red]{one_line(err)}[/red]", soft_wrap=True)
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
            self.console.print(f"[red]unknown command {line!r}[/red]; {HELP}")
            return
        s = self.session
        try:
            advice = advise(s.game, s.state, seat, champion=self.champion, think=think)
        except UserError as err:
            self.console.print(f"[red]advisor: {one_line(err)}[/red]")
            return
        self.console.print(advice.text, markup=False, soft_wrap=True)

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
        if "trains" in view:
            self._show_mexican_train(view, seat)
        else:
            self.console.print(view["text"], markup=False)
        self.console.print(f"[bold]your moves (seat {seat})[/bold]")
        moves = Table(box=None, padding=(0, 1))
        moves.add_column("#", justify="right", style="bold cyan")
        moves.add_column("move")
        for number, _action, name in view["legal"]:
            moves.add_row(str(number), name)
        self.console.print(moves)

    def _show_mexican_train(self, v: dict[str, Any], seat: int) -> None:
        c = self.console
        c.rule(f"round {v['round']}/{v['rounds']}  engine {v['engine']}|{v['engine']}")
        trains = Table(box=None, padding=(0, 1))
        for column in ("train", "tiles", "open end", ""):
            trains.add_column(column)
        for t in v["trains"]:
            flags = " ".join(
                f for f, on in (("marker", t["marker"]), ("OPEN DOUBLE", t["open_double"])) if on
            )
            owner = f"{t['owner']} (you)" if t["slot"] == seat else t["owner"]
            end = f"[bold]{t['open_end']}[/bold]"
            flags = f"[red]{flags}[/red]" if flags else ""
            trains.add_row(owner, " ".join(t["tiles"][-8:]) or "-", end, flags)
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
