"""The learned and hand-written leaves: ``hand``, ``tables`` and their blend ``tables+hand``.

* ``hand`` — the game's hand-written position value (its plugin's ``hand_value`` hook, a
  ``HandValue``: win shares per seat) as a :class:`~omega_cluster.search.evaluators.
  HeuristicEvaluator`;
* ``tables`` — n-tuple value tables trained by self-play (``tables=<dir>``, saved by
  :meth:`omega_cluster.search.ntuple.TupleTables.save`, checked against the game's patterns,
  its plugin's ``ntuple_patterns``) read by :class:`~omega_cluster.search.ntuple.TableEvaluator`;
* ``tables+hand`` — the tables with the hand-written terms added at ``hand`` strength (default
  0.25: hand-written terms at a quarter of their strength, a light correction of the tables): each seat's value is
  ``tables + hand × (points − mean of the seats' points) / scale`` (``points``: the hand value's
  per-seat points; ``scale``: its weights' points per win), clipped to [0, 1] and normalised to
  sum 1, as win shares do.

Every one of them values a terminal leaf by the game's returns and has no compiled counterpart,
so ISMCTS with these leaves runs its Python loop. :func:`table_leaf` builds them by name
(:func:`~omega_cluster.players.search.build_leaf_evaluator` asks it first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.games.registry import available_games, game_plugin
from omega_cluster.players.leaf_spec import HAND, TABLE_KINDS, TABLES, TABLES_HAND, LeafSpec
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.search.evaluators import Evaluator, HeuristicEvaluator, Leaf, LeafEvaluation

__all__ = [
    "BLEND_LEAF",
    "DEFAULT_HAND_WEIGHT",
    "HAND_LEAF",
    "TABLES_LEAF",
    "TABLE_LEAVES",
    "TablesHandEvaluator",
    "blend_values",
    "table_leaf",
]

HAND_LEAF, TABLES_LEAF, BLEND_LEAF = HAND, TABLES, TABLES_HAND
TABLE_LEAVES = TABLE_KINDS
DEFAULT_HAND_WEIGHT = 0.25


def _games_with(hook: str) -> str:
    names = [g for g in available_games() if getattr(game_plugin(g), hook) is not None]
    return ", ".join(names) or "none"


def hand_value(game: Game, leaf: str) -> Any:
    """The game's ``HandValue`` (its plugin's ``hand_value`` hook), or a one-line refusal."""
    factory = game_plugin(game).hook("hand_value")
    if factory is None:
        raise PlayerSpecError(
            f"leaf {leaf!r} needs a hand-written position value, which {game.spec.name} does not "
            f"give (its plugin has no hand_value hook; games with one: {_games_with('hand_value')})"
        )
    return factory(game)


def load_tables(game: Game, leaf: str, directory: Any) -> Any:
    """The ``TableEvaluator`` of the tables saved in ``directory`` for ``game``."""
    if directory is None or directory == "":
        raise PlayerSpecError(
            f"leaf {leaf!r} needs the tables' directory: add tables=<dir> (written by "
            "omega-cluster tables ... out=<dir>)"
        )
    factory = game_plugin(game).hook("ntuple_patterns")
    if factory is None:
        raise PlayerSpecError(
            f"leaf {leaf!r}: {game.spec.name} declares no n-tuple patterns (its plugin has no "
            f"ntuple_patterns hook; games with them: {_games_with('ntuple_patterns')})"
        )
    from omega_cluster.search.ntuple import TableEvaluator, TupleTables

    try:
        tables = TupleTables.load(str(directory), factory(game), game=game.spec.name)
        players = tables.meta.get("players", game.num_players)
        if players != game.num_players:  # win shares of another table size
            raise UserError(
                f"trained for {players} players, this game has {game.num_players} (train "
                "tables at this table size)"
            )
        return TableEvaluator(tables, game.num_players)
    except (UserError, ValueError) as err:  # another game or layout; outputs for another table
        raise PlayerSpecError(f"leaf {leaf!r}, tables={directory}: {err}") from None


def blend_values(
    tables: Sequence[float], points: Sequence[float], weight: float, scale: float
) -> tuple[float, ...]:
    """``tables + weight × (points − mean points) / scale`` per seat, clipped to [0, 1] and
    normalised to sum 1 (uniform when every seat clips to 0)."""
    p = np.asarray(points, dtype=np.float64)
    v = np.clip(np.asarray(tables, dtype=np.float64) + weight * (p - p.mean()) / scale, 0.0, 1.0)
    total = float(v.sum())
    if total <= 0.0:
        return tuple([1.0 / len(v)] * len(v))
    return tuple(float(x) / total for x in v)


class TablesHandEvaluator:
    """The blend ``tables+hand`` (module docstring): the tables' seat values plus ``weight`` ×
    the hand value's centred points over its ``scale``."""

    def __init__(self, tables: Evaluator, hand: Any, weight: float = DEFAULT_HAND_WEIGHT) -> None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise PlayerSpecError(f"hand must be a number (the hand terms' weight), got {weight!r}")
        if not math.isfinite(weight):
            raise PlayerSpecError(f"hand must be finite, got {weight!r}")
        scale = float(hand.weights.scale)
        if not (math.isfinite(scale) and scale > 0.0):
            raise PlayerSpecError(f"the hand value's scale must be > 0, got {scale!r}")
        self.tables, self.hand = tables, hand
        self.weight, self.scale = float(weight), scale
        self._points: Callable[[Any], Sequence[float]] = hand.points

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        out = []
        for leaf, ev in zip(leaves, self.tables.evaluate(leaves), strict=True):
            if not leaf.state.current_players:
                out.append(ev)  # the tables give a terminal leaf its returns
                continue
            points = self._points(leaf.state)
            out.append(LeafEvaluation(blend_values(ev.values, points, self.weight, self.scale)))
        return out

    def __repr__(self) -> str:
        return f"TablesHandEvaluator(hand={self.weight}, scale={self.scale})"


def table_leaf(game: Game, leaf: LeafSpec, *, tables: Any = None, hand: Any = None) -> Evaluator:
    """The evaluator of the table leaf ``leaf`` (a kind of :data:`TABLE_LEAVES`) for ``game``;
    ``tables`` (the directory) serves ``tables`` and ``tables+hand``, ``hand`` (the weight) the
    blend."""
    name = leaf.kind
    if name not in TABLE_LEAVES:
        raise PlayerSpecError(f"leaf {leaf.text!r} is not one of {', '.join(TABLE_LEAVES)}")
    if leaf.rollouts != 1:
        raise PlayerSpecError("rollouts applies to the named rollout leaves only")
    if name != BLEND_LEAF and hand is not None:
        raise PlayerSpecError(f"hand=<weight> applies to leaf {BLEND_LEAF!r} only, not {name!r}")
    if name == HAND_LEAF:
        if tables is not None:
            raise PlayerSpecError(f"tables=<dir> applies to leaves {TABLES_LEAF}, {BLEND_LEAF}")
        return HeuristicEvaluator(hand_value(game, name), name=HAND_LEAF)
    evaluator: Evaluator = load_tables(game, name, tables)
    if name == TABLES_LEAF:
        return evaluator
    weight = DEFAULT_HAND_WEIGHT if hand is None else hand
    return TablesHandEvaluator(evaluator, hand_value(game, name), weight)
