"""The errors of the game layer: one base class, one subclass per way a game call can fail.

Each is also a ``ValueError`` (or ``NotImplementedError``) so callers that catch the builtin kinds
keep working. :class:`IllegalActionError` names the move, the player, the recent history and the
legal set, so a refused move explains itself. The contract (:mod:`omega_cluster.games.api`)
re-exports every name here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from omega_cluster.errors import UserError

if TYPE_CHECKING:
    from omega_cluster.games.api import State

__all__ = [
    "ConstraintError",
    "GameError",
    "GameInputError",
    "IllegalActionError",
    "InvalidParameterError",
    "ReplayError",
    "SamplingNotSupportedError",
]


class GameError(UserError):
    """Base class of every error the game layer raises."""


class GameInputError(GameError, TypeError):
    """An argument of the contract of the wrong type (a seed that is not an int), refused rather
    than coerced: the message names the value and its type."""


class InvalidParameterError(GameError, ValueError):
    """An unknown game or parameter, or a value outside the allowed set."""


class IllegalActionError(GameError, ValueError):
    """An action that the rules do not allow in this state."""

    def __init__(self, state: State, player: int, action: Any, legal: Sequence[int], why: str = ""):
        self.player = player
        self.action = action
        self.legal = tuple(legal)
        game = state.game
        names = ", ".join(f"{a}={game.describe_action(a)}" for a in self.legal[:40])
        more = f" (+{len(self.legal) - 40} more)" if len(self.legal) > 40 else ""
        try:
            # only a plain int is named by the game (True or 1.0 would be named as the move 1)
            what = game.describe_action(action) if type(action) is int else repr(action)
        except Exception:
            what = repr(action)
        reason = f" ({why})" if why else ""
        super().__init__(
            f"{game.spec.name}: illegal action {action!r} ({what}) for player {player}{reason} "
            f"after history {state.history[-12:]!r}; legal actions: [{names}{more}]"
        )


class ReplayError(GameError, ValueError):
    """A malformed action history given to :meth:`Game.replay`."""


class SamplingNotSupportedError(GameError, NotImplementedError):
    """The game cannot draw a world from an information set (e.g. a pyspiel game without
    ``resample_from_infostate``)."""


class ConstraintError(GameError, ValueError):
    """``sample_world`` constraints that no world in the information set satisfies."""
