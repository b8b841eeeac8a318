"""Plain counts of a Mexican Train position, seen from the acting seat: a reference value's inputs.

:func:`position_counts` maps a state and a seat to a short float vector of what anyone at the
table can count — every hand size and marker (seat-relative: the seat itself first, then the
seats after it in turn order), the seat's own pips and doubles, the boneyard, how far the round
has gone, the seat's own and the Mexican train's lengths, the open doubles. A gradient-boosted
model on these counts is the reference a learned value head is held to (``bench/bench_value.py``):
it cannot memorise a deal, so a network that does worse on held-out games than these counts has
learned the training games rather than the game. :func:`position_count_names` names the entries.

Everything here is public or the seat's own (no other hand, no boneyard order), read through the
state's read-only views (:mod:`.views`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["position_count_names", "position_counts"]

_SCALARS = (
    "own_pips",  # pips in the seat's hand (0|0 counts the game's double_blank_value)
    "own_doubles",  # doubles in the seat's hand (each needs its own play)
    "own_lead",  # the smallest other hand minus the seat's own (> 0: the seat is ahead)
    "boneyard",  # tiles left to draw
    "move",  # actions taken this round so far (draws and passes included)
    "own_train",  # tiles on the seat's own train this round
    "mexican_train",  # tiles on the Mexican train this round
    "open_doubles",  # doubles laid and not yet covered
)


def position_count_names(num_players: int) -> tuple[str, ...]:
    """The names of :func:`position_counts`' entries at a table of ``num_players`` seats."""
    hands = tuple(f"hand_{k}" for k in range(num_players))  # hand_0: the seat itself
    markers = tuple(f"marker_{k}" for k in range(num_players))  # 1.0: that seat's train is open
    return (*hands, *markers, *_SCALARS)


def position_counts(state: MexicanTrainState, player: int) -> np.ndarray:
    """float32[2N + 8]: the counts of :func:`position_count_names`, seat-relative to ``player``
    (entry ``k`` of the per-seat blocks is seat ``(player + k) % N``)."""
    n = state.game.num_players
    if not 0 <= player < n:
        raise ValueError(f"player {player} is not a seat of {n} players (0..{n - 1})")
    seats = [(player + k) % n for k in range(n)]
    sizes = state.hand_sizes
    tiles = state.tiles
    own = state.hand(player)
    others = [sizes[s] for s in seats[1:]]
    scalars = (
        tiles.mask_pips(own, state.game.double_blank_value),
        (own & tiles.doubles_mask).bit_count(),
        (min(others) if others else 0) - sizes[player],
        state.boneyard_size,
        len(state.history) - state.round_starts[-1],
        state.train_length(player),
        state.train_length(MEXICAN_SLOT),
        len(state.open_doubles),
    )
    values = [
        *(sizes[s] for s in seats),
        *(float(state.is_marked(s)) for s in seats),
        *scalars,
    ]
    return np.asarray(values, dtype=np.float32)
