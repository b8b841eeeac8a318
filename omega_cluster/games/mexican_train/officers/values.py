"""Value signals of a finished Mexican Train game for search: win share blended with a pip margin.

A rollout that ends in a win or a loss says 1 or 0; how far the round was from going the other
way is lost. :func:`pip_margin_value` blends the win share with a smooth function of the pip
margin, so rollouts that lose narrowly score above those that lose badly — a lower-variance
signal for the search to compare moves with (a common MCTS refinement: Browne et al. 2012, §5.2,
"score bonus"; the game's win share is still what counts in the arena). Seat ``p``'s value is::

    (1 − weight) · win_share_p + weight · (½ + ½ · tanh((min_{q≠p} pips_q − pips_p) / scale))

with ``pips`` the cumulative pips of the finished rounds (lower is better; the winner of a single
round holds 0). ISMCTS gets it twice: as the rollout evaluator's ``terminal_value`` and as the
search's own ``terminal_value`` (for finished states reached inside the tree); the search players
turn it on with ``margin=<weight>``. Measured (1,200 Commander-vs-Commander positions, 2p, 400
simulations, with the hard deductions): weight 0.5 moved the value of the chosen moves by
+0.0005 ± 0.006 win probability per decision, and the split-half agreement of the best move over
60 + 60 worlds stayed ~0.2 with either signal: the outcome's noise is in the play, not the score.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from omega_cluster.games.api import State

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainState

__all__ = ["DEFAULT_MARGIN_SCALE", "pip_margin_value"]

DEFAULT_MARGIN_SCALE = 20.0  # pips: about two tiles left in hand


def pip_margin_value(
    weight: float, *, scale: float = DEFAULT_MARGIN_SCALE
) -> Callable[[State], Sequence[float]]:
    """The blended value function (module docstring) for finished Mexican Train states."""
    if not (isinstance(weight, (int, float)) and 0.0 <= weight <= 1.0):
        raise ValueError(f"margin weight must be a number in [0, 1], got {weight!r}")
    if not (isinstance(scale, (int, float)) and scale > 0.0 and math.isfinite(scale)):
        raise ValueError(f"margin scale must be a positive number (pips), got {scale!r}")
    keep = 1.0 - weight
    half = 0.5 * weight
    inv = 1.0 / scale
    tanh = math.tanh

    def value(state: State) -> Sequence[float]:
        s = cast("MexicanTrainState", state)
        shares = s.returns()
        pips = s.pip_totals
        n = len(pips)
        out = []
        for p in range(n):
            best_other = min(pips[q] for q in range(n) if q != p)
            out.append(keep * shares[p] + half + half * tanh((best_other - pips[p]) * inv))
        return tuple(out)

    return value
