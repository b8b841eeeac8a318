"""One game at a table where any seat may be a person: :class:`TableSession`.

A seat is a player spec (:func:`omega_cluster.players.registry.make_player`: ``commander``,
``champion:<run>``, ``ismcts:commander_rollout:200`` …) or ``you``, a person; several seats may be
people. :meth:`TableSession.advance` plays chance and the bots until a person must act (or the
game ends) and returns what happened as :class:`MoveEvent` records, so a table can show the other
seats' moves as they come. A person's move is given by its number (the 0-based index in
:meth:`TableSession.legal`) or by its name (``describe_action``, case and spacing ignored). A move
of the game that is not legal now raises :class:`IllegalMove` with the game contract's own
message (:class:`~omega_cluster.games.api.IllegalActionError`); a number out of range or a name
no move has, a message listing the legal moves by number. Either way the state is unchanged.

:meth:`TableSession.view` is what one seat may see, JSON-able, and never more: the game's own
picture (its plugin's ``seat_view`` hook: Mexican Train's dominoes, ``kind: "dominoes"``; the card
games' rows of cards, ``kind: "cards"``, :mod:`omega_cluster.games.picture`), else the fields of
its ``observation(seat)`` (the contract's "everything this player may know"), with the full
``render()`` as ``board`` only for a game without hidden information (it shows every hand).

At a simultaneous node (Goofspiel) each person's choice is held until every person acting there
has chosen; then the bots choose and the joint move is applied. The randomness of chance and of
each bot seat comes from ``seed`` as the arena derives it, so a session replays exactly.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from omega_cluster.errors import UserError
from omega_cluster.games.api import CHANCE, Game, IllegalActionError, State
from omega_cluster.games.chance import derive_seed, sample_chance
from omega_cluster.games.player import Player
from omega_cluster.games.seat_view import jsonable, seat_view
from omega_cluster.players.registry import PlayerSpecError, make_player

__all__ = ["HUMAN", "IllegalMove", "MoveEvent", "TableSession", "jsonable", "seat_view"]

HUMAN = "you"
"""The seat spec of a person."""

_MAX_STEPS = 100_000  # a bot loop that never reaches a person or the end is a bug: stop


class IllegalMove(UserError, ValueError):
    """A move a person gave that is not legal now (the message says why and lists the legal ones)."""


@dataclass(frozen=True)
class MoveEvent:
    """One move made at the table: who (``CHANCE`` for chance), which action and its name.

    A chance event's action may be a private deal (Kuhn's cards), so its name is only
    ``"chance"``; a table shows the name, never a chance event's action."""

    seat: int
    action: int
    name: str
    chance: bool

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class TableSession:
    """One game of ``game`` with ``seats`` (one spec per seat; ``you`` is a person)."""

    def __init__(self, game: Game, seats: Sequence[str], *, seed: int = 0) -> None:
        seats = tuple(str(s).strip() for s in seats)
        if len(seats) != game.num_players:
            raise PlayerSpecError(
                f"{len(seats)} seats ({','.join(seats)}) for a {game.num_players}-player "
                f"{game.spec.name}; give one player spec (or {HUMAN}) per seat"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UserError(f"seed must be an int >= 0, got {seed!r}")
        self.game = game
        self.seats = seats
        self.seed = seed
        self.humans: tuple[int, ...] = tuple(i for i, s in enumerate(seats) if s.lower() == HUMAN)
        self.players: dict[int, Player] = {
            i: make_player(spec, game) for i, spec in enumerate(seats) if i not in self.humans
        }
        self.state: State = game.new_initial_state(seed)
        self.events: list[MoveEvent] = []
        self._chance_rng = random.Random(derive_seed(seed, "chance"))
        self._rngs = [random.Random(derive_seed(seed, "player", 0, s)) for s in range(len(seats))]
        self._pending: dict[int, int] = {}  # people's choices at a simultaneous node

    # -- who acts ---------------------------------------------------------------------------
    def waiting_for(self) -> int | None:
        """The person's seat that must act now (None: a bot or chance acts, or the game is over)."""
        for p in self.state.current_players:
            if p in self.humans and p not in self._pending:
                return p
        return None

    def is_over(self) -> bool:
        return self.state.is_terminal()

    def advance(self) -> list[MoveEvent]:
        """Play chance and the bots until a person must act or the game ends; the moves made."""
        made: list[MoveEvent] = []
        for _ in range(_MAX_STEPS):
            acting = self.state.current_players
            if not acting or self.waiting_for() is not None:
                return made
            if acting == (CHANCE,):
                action = sample_chance(self.state.chance_outcomes(), self._chance_rng.random())
                made.append(self._event(CHANCE, action))
                self.state.apply_action(action)
                continue
            joint = tuple(self._choice(p) for p in acting)
            made.extend(self._event(p, a) for p, a in zip(acting, joint, strict=True))
            if len(acting) == 1:
                self.state.apply_action(joint[0])
            else:
                self.state.apply_joint_action(joint)
            self._pending.clear()
        raise RuntimeError(f"{self.game.spec.name}: no person acted within {_MAX_STEPS} moves")

    def _choice(self, seat: int) -> int:
        if seat in self._pending:
            return self._pending[seat]
        return int(self.players[seat].act(self.state, seat, self._rngs[seat]))

    def _event(self, seat: int, action: int) -> MoveEvent:
        name = "chance" if seat == CHANCE else self.game.describe_action(action)
        event = MoveEvent(seat, int(action), name, seat == CHANCE)
        self.events.append(event)
        return event

    # -- a person's move --------------------------------------------------------------------
    def legal(self, seat: int) -> list[tuple[int, str]]:
        """``seat``'s legal moves now as ``(action, name)``; the list index is the move number."""
        if seat not in self.state.current_players:
            return []
        return [(int(a), self.game.describe_action(a)) for a in self.state.legal_actions(seat)]

    def play(self, seat: int, move: int | str) -> MoveEvent:
        """The person at ``seat`` plays ``move`` (its number in :meth:`legal` or its name); the
        bots are not moved (call :meth:`advance`). Illegal: :class:`IllegalMove`, nothing changes."""
        waiting = self.waiting_for()
        if seat not in self.humans:
            raise IllegalMove(f"seat {seat} is not a person's seat (people sit at {self.humans})")
        if waiting is None or seat not in self.state.current_players or seat in self._pending:
            who = "the game is over" if self.is_over() else f"waiting for seat {waiting}"
            raise IllegalMove(f"seat {seat} does not act now ({who})")
        action = self._resolve(seat, move)
        acting = self.state.current_players
        if len(acting) == 1:
            self.state.apply_action(action)
            self._pending.clear()
            return self._event(seat, action)
        # a simultaneous node: held until every person here has chosen; advance() then moves
        # the bots and applies the joint move (and records the events)
        self._pending[seat] = action
        return MoveEvent(seat, action, self.game.describe_action(action), False)

    def _resolve(self, seat: int, move: int | str) -> int:
        """The action a move number or name stands for (else :class:`IllegalMove`: the contract's
        message for a real move that is not legal now, a list of the moves for anything else)."""
        legal = self.legal(seat)
        number: int | None = None
        if isinstance(move, int) and not isinstance(move, bool):
            number = move
        elif isinstance(move, str) and move.strip().lstrip("-").isdigit():
            number = int(move.strip())
        elif not isinstance(move, str):
            self._refuse(seat, f"{move!r} is a {type(move).__name__}, not a move number or name")
        if number is not None:
            if 0 <= number < len(legal):
                return legal[number][0]
            self._refuse(seat, f"no move number {number} (move numbers are 0..{len(legal) - 1})")
        wanted = _normal(str(move))
        for action, name in legal:
            if _normal(name) == wanted:
                return action
        for action in range(self.game.spec.num_actions):  # a real move, just not legal now
            if _normal(self.game.describe_action(action)) == wanted:
                legal_ids = [a for a, _ in legal]
                err = IllegalActionError(self.state, seat, action, legal_ids)
                raise IllegalMove(str(err)) from None
        self._refuse(seat, f"no move is named {str(move).strip()!r}")

    def _refuse(self, seat: int, why: str) -> NoReturn:
        moves = ", ".join(f"{i}={name}" for i, (_, name) in enumerate(self.legal(seat)))
        raise IllegalMove(f"{self.game.spec.name}: {why} for seat {seat}; legal moves: {moves}")

    # -- what a seat sees -------------------------------------------------------------------
    def view(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may see now, JSON-able, with a ``"text"`` picture (module docstring),
        plus ``seats`` (the specs), ``to_act`` (who acts now) and ``legal`` (``[number, action,
        name]`` of the seat's moves now; empty when it does not act)."""
        if not 0 <= seat < self.game.num_players:
            raise UserError(f"seat {seat} outside 0..{self.game.num_players - 1}")
        out = seat_view(self.state, seat)
        out["seat"] = seat
        out["seats"] = list(self.seats)
        out["to_act"] = [p for p in self.state.current_players if p != CHANCE]
        out["legal"] = [[i, a, name] for i, (a, name) in enumerate(self.legal(seat))]
        return out

    def result(self) -> dict[str, Any] | None:
        """Returns, win shares and scores per seat once the game is over (None before)."""
        if not self.is_over():
            return None
        s = self.state
        out: dict[str, Any] = {
            "returns": [float(r) for r in s.returns()],
            "win_shares": [float(w) for w in s.win_shares()],
            "scores": [float(x) for x in s.scores()],
        }
        rounds = getattr(s, "round_results", None)
        if rounds is not None:
            out["rounds"] = [dataclasses.asdict(r) for r in rounds]
        return out


def _normal(text: str) -> str:
    return " ".join(text.lower().split())
