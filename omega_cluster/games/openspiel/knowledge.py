"""What a player knows in the true game, and how far a candidate world agrees with it: the
check behind :mod:`omega_cluster.games.openspiel.sampling`.

:func:`knowledge` replays the true history once and records the player's view wherever it acts
(and at the end), who is shown each chance outcome, the moves of others it never saw, and the
outcomes it knows exactly; :func:`replay_check` replays a candidate's history against that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from omega_cluster.games.api import HistoryEntry

if TYPE_CHECKING:
    from omega_cluster.games.openspiel.state import OpenSpielState

__all__ = [
    "Knowledge",
    "Reach",
    "acts",
    "apply_entry",
    "is_legal_entry",
    "knowledge",
    "node_kind",
    "replay_check",
    "view",
]

_SIMULTANEOUS: Final = -2


@dataclass(frozen=True)
class Knowledge:
    """What ``player`` knows in the true game, as the check needs it: its view before each
    history entry where it acts and at the end, who acts there, and who sees each chance
    outcome (the positions of the chance nodes and the players whose view it changes)."""

    player: int
    length: int  # number of history entries
    views: dict[int, tuple[int, str]]  # entry index (length = the end) -> (pyspiel player, view)
    seen_by: dict[int, frozenset[int]]  # chance entry index -> players whose view it changes
    after: dict[int, str]  # chance entry index -> the player's view just after it
    prefix: Any  # the true pyspiel state at the last decision node (None: only chance so far)
    cut: int  # the index of that node in the history
    secret: frozenset[int]  # entries where another player moved and the player saw nothing
    exact: dict[int, int]  # chance entry -> its outcome, where the player knows it exactly
    reserved: frozenset[int]  # those outcomes (its cards, an upcard): dealt nowhere else
    nodes: tuple[int, ...]  # the kind of node before each entry (:func:`node_kind`)


def node_kind(state: Any) -> int:
    """The kind of a pyspiel node: -1 chance, -2 simultaneous, 0 one player's decision (which
    player may itself be hidden: only the kind must match between a world and the truth)."""
    mover = int(state.current_player())
    return mover if mover in (-1, _SIMULTANEOUS) else 0


def view(state: Any, player: int, kind: str) -> str:
    if kind == "information_state":
        return str(state.information_state_string(player))
    if kind == "observation":
        return str(state.observation_string(player))
    return str(state)


def acts(state: Any, player: int) -> bool:
    mover = state.current_player()
    return mover in (player, _SIMULTANEOUS)


def knowledge(truth: OpenSpielState, player: int) -> Knowledge:
    """Replay the true history once and record what ``player`` knows (see :class:`Knowledge`)."""
    game, kind = truth.game, truth.game._info_kind
    n = game.spec.num_players
    state = game.pyspiel_game.new_initial_state()
    views: dict[int, tuple[int, str]] = {}
    seen_by: dict[int, frozenset[int]] = {}
    after: dict[int, str] = {}
    prefix, cut = None, 0
    secret = set()
    nodes = []
    for i, entry in enumerate(truth.history):
        nodes.append(node_kind(state))
        if acts(state, player):
            views[i] = (state.current_player(), view(state, player, kind))
        if state.is_chance_node():
            before = [view(state, q, kind) for q in range(n)]
            state.apply_action(entry)
            seen = [view(state, q, kind) for q in range(n)]
            seen_by[i] = frozenset(q for q in range(n) if seen[q] != before[q])
            after[i] = seen[player]
        else:
            prefix, cut = state.clone(), i
            mover, before_move = state.current_player(), view(state, player, kind)
            apply_entry(state, entry)
            if mover >= 0 and mover != player and view(state, player, kind) == before_move:
                secret.add(i)
    if not state.is_chance_node() and not state.is_terminal():
        prefix, cut = state.clone(), len(truth.history)
    views[len(truth.history)] = (state.current_player(), view(state, player, kind))
    exact = _exact(truth, player, kind, seen_by, after)
    return Knowledge(
        player,
        len(truth.history),
        views,
        seen_by,
        after,
        prefix,
        cut,
        frozenset(secret),
        exact,
        frozenset(exact.values()),
        tuple(nodes),
    )


def _exact(
    truth: OpenSpielState,
    player: int,
    kind: str,
    seen_by: dict[int, frozenset[int]],
    after: dict[int, str],
) -> dict[int, int]:
    """The chance entries whose outcome the player knows exactly (its own cards, a face-up
    card): no other outcome there would have left its view as it was."""
    state = truth.game.pyspiel_game.new_initial_state()
    exact: dict[int, int] = {}
    for i, entry in enumerate(truth.history):
        if i in seen_by and player in seen_by[i]:
            others = (a for a in state.legal_actions() if a != entry)
            if not any(view(state.child(a), player, kind) == after[i] for a in others):
                exact[i] = int(entry)  # type: ignore[arg-type]
        apply_entry(state, entry)
    return exact


def apply_entry(state: Any, entry: HistoryEntry) -> None:
    if isinstance(entry, tuple):
        state.apply_actions(list(entry))
    else:
        state.apply_action(entry)


def is_legal_entry(state: Any, entry: HistoryEntry) -> bool:
    if isinstance(entry, tuple):
        return state.is_simultaneous_node() and all(
            a in state.legal_actions(p) for p, a in enumerate(entry)
        )
    # legal_actions() lists the chance outcomes at a chance node
    return not state.is_terminal() and entry in state.legal_actions()


@dataclass(frozen=True)
class Reach:
    """How far a history agrees with what the player knows: ``index`` of the first entry that
    is illegal or where the player's view differs (the history's length + 1 when all agrees),
    who acts there, and that player's legal actions there (what the repair aims at)."""

    index: int
    mover: int
    legal: frozenset[int]


def _stop(state: Any, index: int) -> Reach:
    mover = int(state.current_player())
    legal = frozenset(state.legal_actions(mover)) if mover >= 0 else frozenset()
    return Reach(index, mover, legal)


def replay_check(
    pyspiel_game: Any, history: Sequence[HistoryEntry], known: Knowledge, kind: str
) -> Reach:
    """Replay ``history`` on a fresh pyspiel state and say how far it agrees (:class:`Reach`)."""
    state = pyspiel_game.new_initial_state()
    views, player = known.views, known.player
    for i, entry in enumerate(history):
        expected = views.get(i)
        if expected is None:
            agrees = not acts(state, player)  # the player acts where it did not
        else:
            agrees = state.current_player() == expected[0]
            agrees = agrees and view(state, player, kind) == expected[1]
        agrees = agrees and node_kind(state) == known.nodes[i]
        if not agrees or not is_legal_entry(state, entry):
            return _stop(state, i)
        apply_entry(state, entry)
    end = views[len(history)]
    if state.current_player() != end[0] or view(state, player, kind) != end[1]:
        return Reach(len(history), -1, frozenset())
    return Reach(len(history) + 1, -1, frozenset())
