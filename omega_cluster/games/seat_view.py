"""What one seat may see of a state, JSON-able with a ``"text"`` picture: the game's own table
(its plugin's ``seat_view`` hook: Mexican Train's trains, hand and counts) or, for any other
game, the fields of ``observation(seat)`` (the contract's "everything this player may know").

One home for every table that shows a game to someone who must not see more than one seat may:
the play and serve tables (:mod:`omega_cluster.play`) and the ``render()`` of the environment
adapters (:mod:`omega_cluster.interop`). A state's own ``render()`` shows hidden parts (every
hand), so none of them uses it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from omega_cluster.games.api import State
from omega_cluster.games.registry import game_plugin

__all__ = ["generic_view", "jsonable", "seat_view"]


def seat_view(state: State, seat: int) -> dict[str, Any]:
    """What ``seat`` may see of ``state``: the game's own table (its plugin's ``seat_view``
    hook; Mexican Train's trains, hand and counts), or any game's observation."""
    hook = game_plugin(state.game).hook("seat_view")
    if hook is not None:
        view: dict[str, Any] = hook(state, seat)
        return view
    return generic_view(state, seat)


def generic_view(state: State, seat: int) -> dict[str, Any]:
    """The fields of ``state.observation(seat)`` (a dataclass) as JSON, or its text; with no
    hidden information the whole position (``render()``) as ``board`` too (an OpenSpiel
    tic-tac-toe's observation is its move list; its board is what a person wants to see)."""
    obs = state.observation(seat)
    raw = None
    if dataclasses.is_dataclass(obs) and not isinstance(obs, type):
        raw = dataclasses.asdict(obs)
    elif hasattr(obs, "_asdict"):  # a NamedTuple
        raw = obs._asdict()
    if raw is not None:
        fields = {k: jsonable(v) for k, v in raw.items()}
        lines = [f"{k}: {v}" for k, v in fields.items()]
    else:
        fields = {"observation": str(obs)}
        lines = [str(obs)]
    view: dict[str, Any] = {"game": state.game.spec.name, "observation": fields}
    if not state.game.spec.hidden_information:
        view["board"] = state.render()
        lines.insert(0, view["board"])
    view["text"] = "\n".join(lines)
    return view


def jsonable(value: Any) -> Any:
    """``value`` as JSON: lists and tuples as lists, dict keys as text, other objects as text."""
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return str(value)
