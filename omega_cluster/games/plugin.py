"""The game plugin: everything the service knows about one game, behind one typed object.

A game ships one :class:`GamePlugin` (``PLUGIN`` in its package, or built from a bare
:class:`~omega_cluster.games.api.Game` subclass). The rest of the service — players, search,
training, evaluation — asks the plugin for a game's extras and never tests a game's name:

- ``game``: the rules (a :class:`Game` subclass or factory, called with the game's parameters);
- ``encoder``: ``(game, **options) -> Encoder`` for the network (None: the generic encoder built
  from the game's fixed-length observation and fixed action space);
- ``encoder_options``: encoder options a checkpoint records and rebuilds the encoder with;
- ``players``: named rule-based players, ``name -> (game) -> Player`` (``"heuristic"`` is the
  one the generic specs ``heuristic`` and ``heuristic_rollout`` play); the player registry
  (:func:`omega_cluster.players.make_player`) builds each by its name;
- ``world_constraints``: ``(game) -> (state, player) -> constraints``: public deductions every
  determinization honours (the search option ``deduce=true``);
- ``belief_worlds``: ``(game) -> (belief) -> world_constraints``: the deductions joined with a
  belief ``(state, player) -> float[items, codes]`` over where each hidden item lies, which the
  game's ``sample_world`` draws its worlds from (the search option ``belief=network``);
- ``report_counts``: ``(game) -> counts hook`` for the evaluation reports;
- ``fast_search``: ``(game, encoder=None) -> (FastGame, reason)``: the game's compiled kernels (with
  ``encoder``, its compiled encoder too when it can stand in for it) for the fast
  search path (``FastGame`` None and ``reason`` why when they do not cover its parameters); the
  search runs on them when its configuration is one the compiled tree mirrors
  (``search/fast/``);
- ``fast_smm_search``: ``(game, encoder=None) -> (kernels, reason)``: the same for a
  simultaneous-move game, whose compiled SM-MCTS (:mod:`omega_cluster.search.fast.smm`) takes
  joint moves (None and why when the kernels do not cover the game's parameters);
- ``ntuple_patterns``: ``(game) -> PatternSet``: the windows of n-tuple value tables
  (:mod:`omega_cluster.games.patterns`; search leaf ``tables``);
- ``hand_value``: ``(game, weights=None) -> HandValue``: a hand-written position value (leaf
  ``hand``);
- ``advisor_terms``: ``(game) -> explainer``: the named terms of the game's heuristic per legal
  move, which the advisor shows beside the champion's policy;
- ``tune_targets``: ``() -> {name: TuneTarget}``: the weight sets ``omega-cluster tune`` can tune;
- ``seat_view``: ``(state, seat) -> dict``: what one seat sees, JSON-able with a ``"text"``, for
  the play and serve tables (none: the fields of the seat's observation);

Every hook but ``game`` is optional. A hook may be given as a ``"module:attribute"`` string, so
that a game's heavy parts (compiled playouts, an encoder) are imported only when asked for.
This follows the one-module-behind-one-contract shape of pgx's ``pgx/core.py``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GamePlugin", "resolve"]

Hook = Callable[..., Any] | str


def resolve(target: Hook) -> Callable[..., Any]:
    """``"module:attribute"`` imported (a callable is returned as is)."""
    if not isinstance(target, str):
        return target
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"a plugin hook must be 'module:attribute', got {target!r}")
    value: Any = importlib.import_module(module)
    for part in attr.split("."):
        value = getattr(value, part)
    if not callable(value):
        raise ValueError(f"plugin hook {target!r} is not callable")
    return value


@dataclass(frozen=True)
class GamePlugin:
    """One game as the service sees it (every hook but ``game`` optional; see the module doc)."""

    name: str
    game: Hook
    encoder: Hook | None = None
    encoder_options: tuple[str, ...] = ()
    players: Mapping[str, Hook] = field(default_factory=dict)
    world_constraints: Hook | None = None
    belief_worlds: Hook | None = None
    report_counts: Hook | None = None
    fast_search: Hook | None = None
    fast_smm_search: Hook | None = None
    # n-tuple value tables: factory(game) -> games.patterns.PatternSet (the windows the tables read)
    ntuple_patterns: Hook | None = None
    # a hand-written position value: factory(game, weights=None) -> HandValue (search leaf ``hand``)
    hand_value: Hook | None = None
    # the named terms of the game's heuristic per legal move (the advisor): factory(game) -> object
    # with explain(state, player) -> tuple of per-move explanations (Mexican Train: the Commander)
    advisor_terms: Hook | None = None
    # CMA-ES targets of ``omega-cluster tune``: factory() -> {name: TuneTarget}
    tune_targets: Hook | None = None
    # what one seat sees, for the play/serve tables: (state, seat) -> JSON-able dict with "text"
    seat_view: Hook | None = None
    # the fixed opponents (player spec -> Elo) a champion is rated against when gate.anchors is
    # empty; none: random at 1000 and the game's heuristic (if any) at 1400
    anchors: Mapping[str, float] = field(default_factory=dict)

    def rating_anchors(self) -> dict[str, float]:
        """The game's own rating ladder (the ``anchors`` field, or random and the heuristic)."""
        if self.anchors:
            return {k: float(v) for k, v in self.anchors.items()}
        return {"random": 1000.0, **({"heuristic": 1400.0} if "heuristic" in self.players else {})}

    def rules(self) -> Callable[..., Any]:
        """The game factory (the rules class)."""
        return resolve(self.game)

    def player(self, name: str) -> Callable[..., Any] | None:
        """The factory of the named rule-based player (None: the game has none by that name)."""
        target = self.players.get(name)
        return None if target is None else resolve(target)

    def hook(self, name: str) -> Callable[..., Any] | None:
        """An optional hook by field name, imported (None when the game does not give it)."""
        target = getattr(self, name)
        return None if target is None else resolve(target)
