"""The web table and game viewer: a Starlette app, a JSON API under ``/api`` and plain pages.

Pages (``static/``, plain HTML and JavaScript, nothing to build): ``/`` the table — start a game
(game, parameters, one player spec or ``you`` per seat), see what the person's seat may see,
click a legal move, watch the other seats' moves, ask the advisor; ``/replay`` the game viewer —
pick a run and a game id, step through its positions with the recorded visit distribution and
the advisor beside each, the run's ratings and plots linked.

API (JSON; every error is ``{"error": "<one line>"}``):

=========================================== ==================================================
``GET  /api/games``                         the games and their parameters, the player names
``POST /api/tables``                        a new table ``{game, params, seats, seed}``
``GET  /api/tables/{id}[?seat=k]``          the table as the person (or seat ``k``) sees it
``POST /api/tables/{id}/move``              ``{seat, move}``: a number or a name; then the bots
``GET  /api/tables/{id}/advice[?think=n]``  the advisor for the person to move
``GET  /api/runs``                          the runs: game, plots, ratings
``GET  /api/runs/{run}/games``              the run's recorded games
``GET  /api/runs/{run}/games/{game_id}``    every position of one game
``GET  /api/runs/{run}/games/{game_id}/advice?step=i[&think=n]``  the advisor at one position
``GET  /api/runs/{run}/ratings``            anchored ratings and the gate's Elo log
``GET  /runs/{run}/plots/{file}.png``       the run's plots
=========================================== ==================================================

An expected error (a :class:`~omega_cluster.errors.UserError`: an unknown game or player spec,
an illegal move, a malformed request) answers 400 and changes nothing; an unknown table, run or
game id answers 404. The handlers are plain functions run in Starlette's thread pool: a bot's move or the advisor's search does not stall other requests.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from omega_cluster.errors import UserError, one_line
from omega_cluster.games.registry import available_games, game_class
from omega_cluster.play.advisor import advise
from omega_cluster.play.replay import UnknownGameId
from omega_cluster.play.web.runs import RunCatalogue, UnknownRun
from omega_cluster.play.web.tables import BadRequest, Table, Tables
from omega_cluster.players.registry import available_players

__all__ = ["STATIC", "create_app"]

STATIC = Path(__file__).parent / "static"
_MAX_THINK = 2000  # simulations the advisor may be asked for per request


class NotFound(UserError, LookupError):
    """An unknown table id."""


def _error(status: int, err: BaseException) -> JSONResponse:
    return JSONResponse({"error": one_line(err)}, status_code=status)


def _answer(handler: Callable[[Request, Any], Any]) -> Callable[[Request], Awaitable[Response]]:
    """A handler run in the thread pool with the request and its JSON body (None for a GET);
    its result as JSON; expected errors as one line: 404 for what is not there, 400 for the
    rest (a bug is no expected error: it keeps its traceback, answers 500)."""

    async def endpoint(request: Request) -> Response:
        try:
            body = _json_body(await request.body()) if request.method == "POST" else None
            result = await run_in_threadpool(handler, request, body)
        except (UnknownGameId, UnknownRun, NotFound) as err:
            return _error(404, err)
        except UserError as err:
            return _error(400, err)
        return result if isinstance(result, Response) else JSONResponse(result)

    return endpoint


def _json_body(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BadRequest(f"the request body is not JSON: {one_line(err)}") from None


def _int_query(request: Request, key: str, default: int | None, high: int) -> int | None:
    text = request.query_params.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"{key} must be an int, got {text!r}") from None
    if not 0 <= value <= high:
        raise BadRequest(f"{key} must be in 0..{high}, got {value}")
    return value


def _games(request: Request, body: Any) -> dict[str, Any]:
    out = []
    for name in available_games():
        try:
            factory = game_class(name)
        except Exception:  # a game whose optional dependency is missing: not offered
            continue
        params = getattr(factory, "parameters", {})
        out.append(
            {
                "name": name,
                "parameters": {
                    k: {"default": p.default, "doc": p.doc, "allowed": p.describe()}
                    for k, p in params.items()
                },
            }
        )
    return {"games": json.loads(json.dumps(out, default=str)), "players": available_players()}


class _Handlers:
    """The API's handlers over one app's tables and runs (each takes the request and its body)."""

    def __init__(self, tables: Tables, catalogue: RunCatalogue) -> None:
        self.tables = tables
        self.catalogue = catalogue

    def _table(self, request: Request) -> Table:
        found = self.tables.get(request.path_params["table"])
        if found is None:
            name = request.path_params["table"]
            raise NotFound(f"no table {name!r} (start one: POST /api/tables)")
        return found

    def new_table(self, request: Request, body: Any) -> Any:
        made = self.tables.create(body)
        with made.lock:
            return made.payload()

    def get_table(self, request: Request, body: Any) -> Any:
        found = self._table(request)
        seat = _int_query(request, "seat", None, 64)
        with found.lock:
            return found.payload(seat)

    def move(self, request: Request, body: Any) -> Any:
        found = self._table(request)
        if not isinstance(body, dict) or "move" not in body:
            raise BadRequest('a move is a JSON object {"seat": k, "move": number or name}')
        with found.lock:
            found.move(body.get("seat"), body["move"])
            return found.payload()

    def table_advice(self, request: Request, body: Any) -> Any:
        found = self._table(request)
        think = _int_query(request, "think", 0, _MAX_THINK) or 0
        with found.lock:
            return found.advice(think)

    def run_list(self, request: Request, body: Any) -> Any:
        runs = self.catalogue.runs().items()
        return {"runs": [self.catalogue.describe(n, p) for n, p in runs]}

    def run_games(self, request: Request, body: Any) -> Any:
        run = request.path_params["run"]
        games = self.catalogue.games(run).games()
        return {"run": run, "games": [g.as_dict() for g in games]}

    def replay(self, request: Request, body: Any) -> Any:
        run, game_id = request.path_params["run"], request.path_params["game_id"]
        games = self.catalogue.games(run)
        positions = games.replay(game_id)
        return {"run": run, "game": games.summary(game_id).as_dict(),
                "positions": [p.as_dict() for p in positions]}  # fmt: skip

    def replay_advice(self, request: Request, body: Any) -> Any:
        run, game_id = request.path_params["run"], request.path_params["game_id"]
        step = _int_query(request, "step", None, 1_000_000)
        if step is None:
            raise BadRequest("step is required: the decision index of the position")
        think = _int_query(request, "think", 0, _MAX_THINK) or 0
        game, state, record = self.catalogue.games(run).state_at(game_id, step)
        champion, note = self.catalogue.champion(run, game)
        out = advise(game, state, record.player, champion=champion, think=think).as_dict()
        out["note"] = note
        return out

    def ratings(self, request: Request, body: Any) -> Any:
        return self.catalogue.ratings(request.path_params["run"])

    def plot(self, request: Request, body: Any) -> Any:
        path = self.catalogue.plot(request.path_params["run"], request.path_params["file"])
        return FileResponse(path, media_type="image/png")


def _page(name: str) -> Callable[[Request], Response]:
    return lambda request: FileResponse(STATIC / name, media_type="text/html")


def create_app(runs: str | Path | None = None) -> Starlette:
    """The app; ``runs``: a run directory or a folder of them for the game viewer (None: none)."""
    h = _Handlers(Tables(), RunCatalogue(runs))
    api = [
        ("/api/games", _games, "GET"),
        ("/api/tables", h.new_table, "POST"),
        ("/api/tables/{table}", h.get_table, "GET"),
        ("/api/tables/{table}/move", h.move, "POST"),
        ("/api/tables/{table}/advice", h.table_advice, "GET"),
        ("/api/runs", h.run_list, "GET"),
        ("/api/runs/{run}/games", h.run_games, "GET"),
        ("/api/runs/{run}/games/{game_id}", h.replay, "GET"),
        ("/api/runs/{run}/games/{game_id}/advice", h.replay_advice, "GET"),
        ("/api/runs/{run}/ratings", h.ratings, "GET"),
        ("/runs/{run}/plots/{file}", h.plot, "GET"),
    ]
    routes: list[BaseRoute] = [Route(path, _answer(fn), methods=[m]) for path, fn, m in api]
    routes += [
        Route("/", _page("index.html"), methods=["GET"]),
        Route("/replay", _page("replay.html"), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.state.tables = h.tables  # what a test (or an embedding program) may look at
    app.state.runs = h.catalogue
    return app
