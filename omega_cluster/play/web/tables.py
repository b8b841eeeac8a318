"""The tables the web server keeps: one :class:`~omega_cluster.play.session.TableSession` each,
behind a lock, with what the page needs to draw it.

A table is made from JSON (``{"game": "kuhn_poker", "params": {...}, "seats": "you,random",
"seed": 3}``); ``players`` defaults to the number of seats when the game has that parameter, as
``omega-cluster arena`` does. What goes back to the page is the person's view only
(:meth:`TableSession.view`: never another seat's hidden hand), the moves made so far with chance
outcomes unnamed (a deal is private), and the result at the end, with the full position
(``render()``) shown only then. A move goes through :meth:`TableSession.play`: an illegal one
raises :class:`~omega_cluster.play.session.IllegalMove` and changes nothing.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.games.registry import game_parameters, make_game
from omega_cluster.play.advisor import advise, load_champion
from omega_cluster.play.session import MoveEvent, TableSession, jsonable
from omega_cluster.players.registry import PlayerSpec

__all__ = ["MAX_TABLES", "BadRequest", "Table", "Tables", "new_session"]

MAX_TABLES = 64  # tables kept; the oldest goes when a new one would pass this
_MAX_SEED = 2**31


class BadRequest(UserError, ValueError):
    """A request the server cannot act on (the message says why, on one line)."""


def _seats(value: Any) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise BadRequest(f"seats must be player specs separated by commas, got {value!r}")
    return [s.strip() for s in value]


def new_session(body: Any) -> TableSession:
    """A :class:`TableSession` from a new-table request (module docstring)."""
    if not isinstance(body, dict):
        raise BadRequest("a new table is a JSON object: {game, params, seats, seed}")
    unknown = sorted(set(body) - {"game", "params", "seats", "seed"})
    if unknown:
        raise BadRequest(
            f"unknown field(s) {', '.join(unknown)}; fields: game, params, seats, seed"
        )
    name = body.get("game")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"game must be a game name, got {name!r}")
    params = dict(body.get("params") or {})
    seats = _seats(body.get("seats", "you"))
    name, parameters = game_parameters(name, params)
    if "players" in parameters and "players" not in params:
        params["players"] = len(seats)
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}
    seed = body.get("seed")
    if seed is None:
        seed = secrets.randbelow(_MAX_SEED)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BadRequest(f"seed must be an int >= 0, got {seed!r}")
    return TableSession(make_game(name, **params), seats, seed=seed)


@dataclass
class Table:
    """One table: its session, a lock (requests run in threads) and its champion, loaded once
    when the advisor is first asked (the first ``champion:`` or ``network:`` seat)."""

    id: str
    session: TableSession
    lock: threading.Lock = field(default_factory=threading.Lock)
    champion: Any = None
    champion_note: str | None = None
    _champion_loaded: bool = False

    def seat_shown(self) -> int:
        """The seat whose view the page shows: the person who acts now, else the first person
        (seat 0 at a table of bots only)."""
        s = self.session
        waiting = s.waiting_for()
        return waiting if waiting is not None else (s.humans[0] if s.humans else 0)

    def payload(self, seat: int | None = None) -> dict[str, Any]:
        """What the page draws (module docstring)."""
        s = self.session
        shown = self.seat_shown() if seat is None else _seat(s, seat)
        if seat is not None and s.humans and shown not in s.humans:
            raise BadRequest(f"seat {shown} is not a person's seat (people sit at {s.humans})")
        over = s.is_over()
        return {
            "id": self.id,
            "game": s.game.spec.name,
            "params": jsonable(dict(s.game.params)),
            "seed": s.seed,
            "seats": list(s.seats),
            "humans": list(s.humans),
            "waiting_for": s.waiting_for(),
            "seat": shown,
            "view": s.view(shown),
            "events": [event_dict(s, e) for e in s.events],
            "over": over,
            "result": s.result(),
            "final": s.state.render() if over else None,
        }

    def move(self, seat: Any, move: Any) -> list[MoveEvent]:
        """The person's move, then the bots' until a person acts again (IllegalMove: nothing
        changes)."""
        s = self.session
        if seat is None:
            seat = s.waiting_for()
            if seat is None:
                raise BadRequest(
                    "no person acts now" + (" (the game is over)" if s.is_over() else "")
                )
        if isinstance(move, bool) or not isinstance(move, (int, str)):
            raise BadRequest(f"move must be a move number or name, got {move!r}")
        made = [s.play(_seat(s, seat), move)]
        return made + s.advance()

    def advice(self, think: int) -> dict[str, Any]:
        """The advisor for the person who acts now, with the table's champion (if any)."""
        s = self.session
        seat = s.waiting_for()
        if seat is None:
            raise BadRequest("no person acts now: the advisor answers for the person to move")
        if not self._champion_loaded:
            spec = next(
                (x for x in s.seats if PlayerSpec.parse(x).name in ("champion", "network")), None
            )
            if spec is None:
                self.champion_note = "no champion at this table: the game's named terms only"
            else:
                self.champion = load_champion(s.game, spec)
            self._champion_loaded = True
        out = advise(s.game, s.state, seat, champion=self.champion, think=think).as_dict()
        out["note"] = self.champion_note
        return out


def _seat(session: TableSession, seat: Any) -> int:
    n = session.game.num_players
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise BadRequest(f"seat must be an int in 0..{n - 1}, got {seat!r}")
    return seat


def event_dict(session: TableSession, event: MoveEvent) -> dict[str, Any]:
    """A move for the page: the seat, its player spec and the move's name; a chance outcome is
    only "chance" (its action may be a private deal)."""
    if event.chance:
        return {"seat": None, "player": "chance", "name": "chance", "chance": True}
    return {
        "seat": event.seat,
        "player": session.seats[event.seat],
        "action": event.action,
        "name": event.name,
        "chance": False,
    }


class Tables:
    """The server's tables by id (at most :data:`MAX_TABLES`, the oldest dropped first)."""

    def __init__(self) -> None:
        self._tables: OrderedDict[str, Table] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, body: Any) -> Table:
        session = new_session(body)
        table = Table(secrets.token_hex(6), session)
        with table.lock:
            session.advance()
        with self._lock:
            self._tables[table.id] = table
            while len(self._tables) > MAX_TABLES:
                self._tables.popitem(last=False)
        return table

    def get(self, table_id: str) -> Table | None:
        with self._lock:
            return self._tables.get(table_id)
