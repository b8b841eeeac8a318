"""A run's recorded games, position by position: what the game viewer (``omega-cluster serve``)
shows.

Self-play writes one record per decision (:class:`omega_cluster.data.Record`): the game and its
parameters, the seed and every action before the decision, the acting seat, the search's visit
distribution over the legal moves, the move played and the value targets. :class:`RunGames` reads
a run's shard store through :mod:`omega_cluster.data` (the manifest, then each shard, checked as
the learner checks it) and gives

* :meth:`RunGames.games`: one :class:`GameSummary` per game id (game, parameters, seed, number of
  recorded decisions, the champion version that played it, the final returns);
* :meth:`RunGames.replay`: one game's :class:`Position` list, each rebuilt from the record's seed
  and history with ``Game.replay`` (so a record that no longer replays is an error naming the
  step, not a wrong picture), with the recorded policy beside every legal move.

Each position carries the acting seat's view (:func:`~omega_cluster.play.session.seat_view`:
what the table draws, so the viewer draws a decision as the seat that made it saw it) and the
state's ``render()``, every hand shown: a finished self-play game has no person at its table to
hide anything from. A game id not in the shards raises
:class:`UnknownGameId`, one line naming the run. The index is rebuilt when the manifest has new
entries (a run still training), never otherwise.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from omega_cluster.data import CorruptShardError, Record, ShardStore, table_to_records
from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, State
from omega_cluster.games.errors import GameError
from omega_cluster.games.registry import make_game
from omega_cluster.play.session import seat_view

__all__ = ["GameSummary", "NoShardsError", "Position", "RunGames", "UnknownGameId", "store_uri"]

_SUMMARY_COLUMNS = ("game_id", "game", "game_params", "game_seed", "num_players",
                    "champion_version", "returns")  # fmt: skip


class UnknownGameId(UserError, KeyError):
    """A game id the run's shards do not hold."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class NoShardsError(UserError, FileNotFoundError):
    """A directory that holds no shard store (not a run, or a run that wrote nothing yet)."""


@dataclass(frozen=True)
class GameSummary:
    """One recorded game: what the viewer's list shows."""

    game_id: str
    game: str
    params: dict[str, Any]
    seed: int
    players: int
    decisions: int  # recorded decisions (one record each)
    champion_version: int
    returns: tuple[float, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Position:
    """One recorded decision, rebuilt: who acts, the moves with the recorded policy, the move
    played, the value targets and the picture of the position."""

    step: int  # the record's decision index
    seat: int  # the acting seat
    history: tuple[Any, ...]  # every action before the decision (chance included)
    moves: tuple[dict[str, Any], ...]  # {action, name, policy}: policy is the visit share or None
    action: int
    action_name: str
    returns: tuple[float, ...]  # final returns: the value target
    round_outcome: tuple[float, ...] | None  # this round's outcome (per-round value target)
    root_value: tuple[float, ...] | None  # the search's value of the position, per seat
    policy_weight: float  # 0: a fast search whose visits were not trained on
    text: str  # render(): every hand
    view: dict[str, Any]  # the acting seat's view, as the table draws it

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def store_uri(run_dir: Path) -> str:
    """Where a run keeps its shards: ``run.shard_store`` of its config, else ``<run>/shards``."""
    config = run_dir / "config.yaml"
    if config.is_file():
        try:
            data = yaml.safe_load(config.read_text()) or {}
        except (OSError, yaml.YAMLError) as err:
            raise NoShardsError(f"{config}: cannot read the run's config: {err}") from None
        uri = (data.get("run") or {}).get("shard_store") if isinstance(data, dict) else None
        if uri:
            return str(uri)
    return str(run_dir / "shards")


class RunGames:
    """The recorded games of one run (module docstring). Safe to share between threads."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        uri = store_uri(self.run_dir)
        if "://" not in uri and not (Path(uri) / "manifest").is_dir():
            raise NoShardsError(f"run {self.run_dir}: no shard store at {uri} (no manifest/)")
        self.store = ShardStore(uri)
        self._lock = threading.Lock()
        self._names: tuple[str, ...] = ()
        self._games: dict[str, GameSummary] = {}
        self._where: dict[str, list[str]] = {}  # game id -> manifest keys of its shards
        self._games_cache: dict[tuple[str, tuple[Any, ...]], Game] = {}

    def games(self) -> list[GameSummary]:
        """Every recorded game, in the manifest's order (re-read when new shards came)."""
        with self._lock:
            self._refresh()
            return list(self._games.values())

    def summary(self, game_id: str) -> GameSummary:
        with self._lock:
            self._refresh()
            found = self._games.get(game_id)
        if found is None:
            example = next(iter(self._games), None)
            hint = f" (e.g. {example})" if example else " (it holds none)"
            raise UnknownGameId(
                f"game id {game_id!r} is not in the shards of run {self.run_dir}: "
                f"{len(self._games)} games{hint}"
            )
        return found

    def replay(self, game_id: str) -> list[Position]:
        """Every recorded decision of ``game_id``, in order, rebuilt from seed and history."""
        summary = self.summary(game_id)
        records = sorted(self._records(game_id), key=lambda r: r.decision_index)
        game = self._game(summary.game, summary.params)
        out, state = [], None
        for record in records:
            state = _advance(game, state, record)
            out.append(position(game, record, state))
        return out

    def state_at(self, game_id: str, step: int) -> tuple[Game, State, Record]:
        """The game, the rebuilt state and the record of decision ``step`` of ``game_id``."""
        summary = self.summary(game_id)
        for record in self._records(game_id):
            if record.decision_index == step:
                game = self._game(summary.game, summary.params)
                return game, game.replay(record.game_seed, record.history), record
        raise UnknownGameId(
            f"game {game_id} of run {self.run_dir} has no decision {step} "
            f"(0..{summary.decisions - 1})"
        )

    # -- reading --------------------------------------------------------------------------
    def _refresh(self) -> None:
        names = tuple(self.store.entry_names())
        if names == self._names:
            return
        games: dict[str, dict[str, Any]] = {}
        where: dict[str, list[str]] = {}
        for entry in self.store.entries():
            try:
                table = self.store.read(entry)
            except CorruptShardError:  # quarantined by the store: not a game of this run
                continue
            for row in table.select(list(_SUMMARY_COLUMNS)).to_pylist():
                gid = row["game_id"]
                if gid not in games:
                    games[gid] = dict(row, decisions=0)
                games[gid]["decisions"] += 1
                keys = where.setdefault(gid, [])
                if not keys or keys[-1] != entry.key:
                    keys.append(entry.key)
        self._games = {gid: _summary(row) for gid, row in games.items()}
        self._where = where
        self._names = names

    def _records(self, game_id: str) -> Iterable[Record]:
        for key in self._where.get(game_id, ()):
            entry = self.store.entry(key)
            if entry is None:
                continue
            try:
                table = self.store.read(entry)
            except CorruptShardError:
                continue
            yield from (r for r in table_to_records(table) if r.game_id == game_id)

    def _game(self, name: str, params: dict[str, Any]) -> Game:
        key = (name, tuple(sorted((k, repr(v)) for k, v in params.items())))
        if key not in self._games_cache:
            self._games_cache[key] = make_game(name, **_tuples(params))
        return self._games_cache[key]


def _summary(row: dict[str, Any]) -> GameSummary:
    return GameSummary(
        game_id=row["game_id"],
        game=row["game"],
        params=json.loads(row["game_params"]),
        seed=int(row["game_seed"]),
        players=int(row["num_players"]),
        decisions=int(row["decisions"]),
        champion_version=int(row["champion_version"]),
        returns=tuple(float(x) for x in row["returns"]),
    )


def _tuples(params: dict[str, Any]) -> dict[str, Any]:
    """JSON turns a tuple parameter into a list; the games take tuples."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


def _advance(game: Game, state: State | None, record: Record) -> State:
    """The record's position: the previous one played on when its history continues that one's
    (a game's records in order), else ``Game.replay`` from the seed. A step the rules refuse
    falls back on ``Game.replay``, whose error names the step."""
    history = record.history
    done = 0 if state is None else len(state.history)
    if state is None or done > len(history) or tuple(state.history) != tuple(history[:done]):
        return game.replay(record.game_seed, history)
    state = state.clone()
    try:
        for entry in history[done:]:
            if isinstance(entry, tuple):
                state.apply_joint_action(entry)
            else:
                state.apply_action(entry)
    except GameError:
        return game.replay(record.game_seed, history)
    return state


def position(game: Game, record: Record, state: State | None = None) -> Position:
    """One record as a :class:`Position`; ``state``: its position if already rebuilt (else
    ``Game.replay`` from the record's seed and history)."""
    if state is None:
        state = game.replay(record.game_seed, record.history)
    policy = record.policy_target
    moves = tuple(
        {
            "action": int(a),
            "name": game.describe_action(int(a)),
            "policy": None if policy is None else round(float(policy[i]), 4),
        }
        for i, a in enumerate(record.legal_actions)
    )

    def floats(values: Any) -> tuple[float, ...] | None:
        return None if values is None else tuple(round(float(v), 4) for v in values)

    return Position(
        step=record.decision_index,
        seat=record.player,
        history=tuple(list(h) if isinstance(h, tuple) else h for h in record.history),
        moves=moves,
        action=record.action,
        action_name=game.describe_action(record.action),
        returns=floats(record.returns) or (),
        round_outcome=floats(record.round_outcome),
        root_value=floats(record.root_value),
        policy_weight=record.policy_weight,
        text=state.render(),
        view=seat_view(state, record.player),
    )
