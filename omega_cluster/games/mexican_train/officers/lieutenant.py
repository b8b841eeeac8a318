"""Lieutenant, the greedy Mexican Train officer: dump the most pips this turn.

The middle anchor of the officer ladder (Ensign, the uniform random player, < Lieutenant <
Commander): it dumps pips greedily and looks no further than its own turn. Greedy over the
turn, not the tile: a double earns another play, so laying a playable double first gets two tiles
out of the hand this turn; among doubles, and then among the other tiles, the heaviest goes first.
(The plain "heaviest tile" rule is much weaker against Ensigns in single rounds, since whoever
goes out first wins whatever the pips.) It reads only the legal actions and the tile tables.
"""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.tiles import NUM_SLOTS

__all__ = ["Lieutenant", "check_mexican_train"]


def check_mexican_train(game: Game, who: str) -> MexicanTrainGame:
    """The game as a :class:`MexicanTrainGame`, or a clear error naming what was given."""
    if not isinstance(game, MexicanTrainGame):
        name = getattr(getattr(game, "spec", None), "name", type(game).__name__)
        raise TypeError(f"{who} plays only mexican_train, not {name!r}")
    return game


class Lieutenant:
    """Greedy: a double first (it earns another play), then the play with the most pips (0|0
    counts ``double_blank_value``).

    Ties: a play on the player's own train first, then the lowest action id. Without a play it
    draws or passes (whichever is legal; with ``must_play=False`` it never draws by choice).
    Deterministic: ``rng`` is not used.
    """

    name = "lieutenant"

    def __init__(self, game: Game) -> None:
        self.game = check_mexican_train(game, "Lieutenant")
        tiles = self.game.tiles
        self._draw = tiles.draw_action
        # key of a play: pips, then own train, then lower id (negated: max() picks the best)
        pips = list(tiles.pips)
        pips[0] = self.game.double_blank_value
        self._pips = tuple(pips)
        self._double = tuple(tiles.is_double(t) for t in range(tiles.num_tiles))

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        draw, pips, double = self._draw, self._pips, self._double
        best, best_key = legal[-1], (False, -1, False, 0)  # DRAW / PASS sort after every play
        for a in legal:
            if a >= draw:
                break
            t, s = divmod(a, NUM_SLOTS)
            key = (double[t], pips[t], s == player, -a)
            if key > best_key:
                best, best_key = a, key
        return best

    def __repr__(self) -> str:
        return "Lieutenant()"
