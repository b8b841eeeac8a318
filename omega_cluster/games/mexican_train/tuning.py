"""Mexican Train's tuning targets (plugin hook ``tune_targets``; ``omega-cluster tune``).

``commander``: the Commander's term weights (:class:`~.officers.weights.CommanderWeights`). The
terms tuned are those that decide moves under the single-round, must-play, strict-doubles rules
the cohorts play; ``campaign_dump`` (rounds after this one), ``cover_double`` (lenient doubles
only), ``goes_out`` (always decisive), ``draw`` and ``pass_turn`` (only without must-play) keep
their defaults. Each weight's scale is its default's size (at least 1) and its bounds three
scales either side, so a weight may change sign or vanish. Games between Commanders of
different weights run whole rounds compiled (one compiled Commander per process, its per-seat
weights set per game: the very moves the Python Commanders would play, faster).

The hand-written value's weights (:class:`~.evaluation.HandWeights`) are the generic target
``lookahead:hand:<depth>`` of every game with a ``hand_value`` hook
(:mod:`omega_cluster.eval.tuning.specs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from omega_cluster.games.api import Game
from omega_cluster.games.mexican_train.officers.commander import Commander
from omega_cluster.games.mexican_train.officers.weights import TERMS, CommanderWeights
from omega_cluster.games.player import Player
from omega_cluster.games.tuning import TuneTarget, spec_from_default

__all__ = ["COMMANDER_FROZEN", "tune_targets"]

COMMANDER_FROZEN = ("campaign_dump", "cover_double", "goes_out", "draw", "pass_turn")
"""Commander terms the ``commander`` target leaves at their defaults (module doc)."""


def _commander(game: Game, values: Mapping[str, float]) -> Player:
    return Commander(game, weights=CommanderWeights.from_dict(values))


_COMPILED: dict[Any, Any] = {}


def _commander_playout(
    game: Game, seats: Sequence[Mapping[str, float]], deal_seed: int
) -> tuple[float, ...] | None:
    """The returns of the deal played by Commanders of the seats' weights, compiled (None:
    numba missing, or a campaign the compiled playout does not reach)."""
    from omega_cluster._optional import numba_available

    if not numba_available():
        return None
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    key = (game.spec.name, tuple(sorted(game.params.items())))
    jit = _COMPILED.get(key)
    if jit is None:
        base = CommanderWeights()
        jit = CompiledCommander(cast(Any, game), base.vector(), base.danger_hand_size, 60)
        _COMPILED[key] = jit
    for seat, values in enumerate(seats):
        jit.W[seat, :] = CommanderWeights.from_dict(values).vector()
    return cast(
        "tuple[float, ...] | None",
        jit.playout_returns(cast(Any, game.new_initial_state(deal_seed))),
    )


def _commander_target() -> TuneTarget:
    base = CommanderWeights()
    specs = tuple(
        spec_from_default(name, getattr(base, name))
        for name in TERMS
        if name not in COMMANDER_FROZEN
    )
    return TuneTarget(
        "commander",
        specs,
        _commander,
        doc="the Commander's term weights (CommanderWeights)",
        playout=_commander_playout,
    )


def tune_targets() -> dict[str, TuneTarget]:
    """``{name: TuneTarget}`` of Mexican Train (module doc)."""
    return {"commander": _commander_target()}
