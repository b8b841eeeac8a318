"""The counts the reports show for a finished Mexican Train game, one value per seat.

The plugin's ``report_counts`` hook (:mod:`omega_cluster.games.mexican_train.plugin`): the arena
stores these on each game record and the slice breakdown of :mod:`omega_cluster.eval.matches`
averages them per slice. :func:`mexican_train_counts` reads the state's public record:
``round_results`` (pips left, who went out, blocked rounds) and the action history, which it
replays once from the deal seed to see who put a marker up — the state keeps only the markers up
*now*, and a PASS marks the passer's train unless it ends a first-turn chain (rules in
:mod:`omega_cluster.games.mexican_train.state`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from omega_cluster.games.api import Game, State

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainState

__all__ = ["MEXICAN_TRAIN_COUNTS", "mexican_train_counts", "report_counts"]

MEXICAN_TRAIN_COUNTS = (
    "went_out",  # rounds the seat ended by laying its last tile
    "blocked_rounds",  # rounds that ended blocked (the same figure for every seat of a game)
    "markers_placed",  # times the seat's marker went up (a PASS outside a first-turn chain)
    "pips_left",  # mean pips left in the seat's hand at the end of a round
    "rounds_won",  # rounds the seat won under the objective (tied winners each count one)
)


def report_counts(game: Game) -> Callable[[State], Mapping[str, Sequence[float]]]:
    """The plugin's ``report_counts`` hook: :func:`mexican_train_counts` for every rule set."""
    return mexican_train_counts


def mexican_train_counts(state: State) -> dict[str, tuple[float, ...]]:
    """The :data:`MEXICAN_TRAIN_COUNTS` of a finished Mexican Train game, one value per seat."""
    mt = cast("MexicanTrainState", state)
    game = mt.game
    n = game.num_players
    results = mt.round_results
    rounds = max(len(results), 1)
    went_out = [0.0] * n
    won = [0.0] * n
    pips = [0.0] * n
    blocked = float(sum(r.blocked for r in results))
    for result in results:
        if result.went_out is not None:
            went_out[result.went_out] += 1.0
        for seat in result.round_winners(game.objective):
            won[seat] += 1.0
        for seat, left in enumerate(result.pips):
            pips[seat] += left / rounds
    return {
        "went_out": tuple(went_out),
        "blocked_rounds": (blocked,) * n,
        "markers_placed": _markers_placed(mt),
        "pips_left": tuple(pips),
        "rounds_won": tuple(won),
    }


def _markers_placed(state: MexicanTrainState) -> tuple[float, ...]:
    """Replay the history from the deal and count, per seat, the PASSes that raised a marker."""
    game = state.game
    replay = game.new_initial_state(state.chance_seed)
    pass_action = game.pass_action
    placed = [0.0] * game.num_players
    for action in cast("list[int]", state.history):
        if action == pass_action and not replay.chain:
            seat = replay.current
            if not replay.marked >> seat & 1:  # a marker already up is not placed again
                placed[seat] += 1.0
        replay.apply_action_unchecked(action)
    return tuple(placed)
