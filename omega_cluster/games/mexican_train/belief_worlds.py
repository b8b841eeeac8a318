"""Belief-guided determinizations for Mexican Train: worlds drawn from a belief over where each
hidden tile lies, under the hard public constraints.

A belief is a probability array ``float[tiles, classes]`` over the location codes of the
encoder's :class:`~omega_cluster.games.encoding.HiddenSpec` (relative to the searching player:
0 — not hidden from it, 1 — the boneyard, ``1 + k`` — the hand of the seat ``k`` places after
it), e.g. the softmax of a network's belief head on the player's public observation.
:class:`BeliefDeal` carries it beside the hard deductions (:func:`.inference.deal_constraints`)
as the constraints of ``sample_world``; :func:`belief_constraints` builds the search's
``world_constraints`` hook from a belief source ``(state, player) -> array``, so the belief is
asked once per search and every determinization of that search draws from it.

How a world is drawn (:mod:`.sampling`): the constrained sequential deal of the hard facts (hand
sizes, the boneyard size, the bans and the limits) is kept as it is, and the weights only change
which tiles fill each place: a seat's group of ``count`` places takes ``count`` distinct tiles
among those it may hold, by successive draws each proportional to the tile's odds of lying in
that hand rather than in the boneyard (``p[t, seat] / p[t, boneyard]``; Efraimidis & Spirakis'
keys). So a world never contradicts a public fact, whatever the belief says, and a belief that
puts the same odds on every tile a place may take (uniform over the allowed holders, or
proportional to the places left) deals exactly as the uniform deal does. Successive draws are
not the exact conditional of the belief on the hand sizes; the bench
(``bench/bench_belief.py``) measures the belief itself, by the log-likelihood of the true hands.

Leaks: the belief must read only what the player knows (a network on the player's observation
does); the deal reads the public facts and the player's own hand, as the uniform one does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from omega_cluster.games.api import ConstraintError, Game, State
from omega_cluster.games.mexican_train.records import DealConstraints

if TYPE_CHECKING:  # the rules import this module (sampling): the rest is imported when called
    from omega_cluster.games.mexican_train.game import MexicanTrainGame

__all__ = ["Belief", "BeliefDeal", "belief_constraints", "belief_worlds", "hidden_codes"]

Belief = Callable[[State, int], np.ndarray]
"""``(state, player) -> float[tiles, classes]``: where ``player`` believes each tile lies."""

_FLOOR = 1e-6  # added to every probability: an allowed holder the belief rules out stays possible


class BeliefDeal:
    """``sample_world`` constraints: the hard deductions plus a belief over the tiles' holders.

    ``weights``: ``float[tiles, classes]`` (non-negative, finite; rows need not sum to 1), codes
    relative to ``player``; ``facts``: the hard deductions (None: hand sizes only).
    """

    __slots__ = ("_odds", "facts", "player", "weights")

    def __init__(
        self, weights: np.ndarray, player: int, facts: DealConstraints | None = None
    ) -> None:
        self.weights = weights
        self.player = player
        self.facts = facts
        self._odds: dict[int, list[float]] | None = None

    def odds(self, num_players: int) -> dict[int, list[float]]:
        """Per other seat, each tile's odds of lying in that hand rather than in the boneyard."""
        if self._odds is None:
            w = self.weights.astype(np.float64) + _FLOOR
            boneyard = w[:, 1]
            self._odds = {
                q: (w[:, 1 + (q - self.player) % num_players] / boneyard).tolist()
                for q in range(num_players)
                if q != self.player
            }
        return self._odds

    def __repr__(self) -> str:
        return f"BeliefDeal(player={self.player}, weights{list(self.weights.shape)}, {self.facts})"


def check_weights(weights: object, tiles: int, num_players: int) -> np.ndarray:
    """``weights`` as a float64 array, or a ConstraintError that says what is wrong."""
    arr = np.asarray(weights, dtype=np.float64) if isinstance(weights, np.ndarray) else None
    if arr is None or arr.ndim != 2 or arr.shape[0] != tiles or arr.shape[1] < num_players + 1:
        shape = getattr(weights, "shape", type(weights).__name__)
        raise ConstraintError(
            f"mexican_train: a belief must be an array [{tiles} tiles, >= {num_players + 1} "
            f"location codes], got {shape}"
        )
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise ConstraintError("mexican_train: a belief's weights must be finite and >= 0")
    return arr


def belief_constraints(belief: Belief) -> Callable[[State, int], BeliefDeal]:
    """The ISMCTS ``world_constraints`` hook of a belief source: once per search, the hard
    deductions and ``belief(state, player)`` (checked) as one :class:`BeliefDeal`."""
    from omega_cluster.games.mexican_train.inference import deal_constraints

    def constraints(state: State, player: int) -> BeliefDeal:
        game = cast("MexicanTrainGame", state.game)
        weights = check_weights(belief(state, player), game.tiles.num_tiles, game.num_players)
        return BeliefDeal(weights, player, deal_constraints(state, player))

    return constraints


def belief_worlds(game: Game) -> Callable[[Belief], Callable[[State, int], BeliefDeal]]:
    """The plugin's ``belief_worlds`` hook: :func:`belief_constraints` for every rule set."""
    from omega_cluster.games.mexican_train.game import MexicanTrainGame

    if not isinstance(game, MexicanTrainGame):
        raise TypeError(f"belief worlds model Mexican Train, not {game.spec.name!r}")
    return belief_constraints


def hidden_codes(state: State, player: int) -> np.ndarray:
    """The true location code of every tile from ``player``'s view as ``int64[tiles]`` (the
    state's own :meth:`~MexicanTrainState.hidden_state`, as integers to index with)."""
    codes = state.hidden_state(player)
    assert codes is not None
    return codes.astype(np.int64)
