"""A pyspiel game as a :class:`~omega_cluster.games.api.Game`: :class:`OpenSpielGame` builds the
:class:`GameSpec` from pyspiel's ``GameType`` and names actions with pyspiel's own strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from omega_cluster._optional import numba_available
from omega_cluster.games.api import CHANCE, Game, GameSpec, ParamSpec
from omega_cluster.games.openspiel.card_games import CardGame, card_game
from omega_cluster.games.openspiel.loading import (
    parameter_specs,
    probe_resample,
    pyspiel_module,
    resolve_and_load,
)
from omega_cluster.games.openspiel.state import CardGameState, OpenSpielState

__all__ = ["OpenSpielGame"]


class OpenSpielGame(Game):
    """A pyspiel game as a :class:`Game`: ``OpenSpielGame(name="kuhn_poker", players=3)``."""

    name: ClassVar[str] = "openspiel"
    # Only ``name`` is static; the rest depend on the game: see ``parameters_of(name)``.
    parameters: ClassVar[Mapping[str, ParamSpec]] = {
        "name": ParamSpec(None, "pyspiel short name of the game, e.g. 'liars_dice'", kind=str),
    }

    def __init__(self, **params: Any) -> None:
        self.params, self._game = resolve_and_load(params)
        game, game_type = self._game, self._game.get_type()
        gt = pyspiel_module().GameType
        n = game.num_players()
        # ONE_SHOT (matrix games) hides only the simultaneous choice, which is not state.
        hidden = game_type.information == gt.Information.IMPERFECT_INFORMATION
        self.spec = GameSpec(
            name=f"openspiel:{self.params['name']}",
            num_players=n,
            min_players=game_type.min_num_players,
            max_players=game_type.max_num_players,
            num_actions=game.num_distinct_actions(),
            simultaneous=game_type.dynamics == gt.Dynamics.SIMULTANEOUS,
            hidden_information=hidden,
            explicit_chance=game_type.chance_mode == gt.ChanceMode.EXPLICIT_STOCHASTIC,
            max_game_length=game.max_game_length(),
            min_return=game.min_utility(),
            max_return=game.max_utility(),
            zero_sum=game_type.utility == gt.Utility.ZERO_SUM,
        )
        self._all_players = tuple(range(n))
        # A one-player simultaneous game (pathfinding) has "simultaneous" nodes with one mover,
        # which the contract treats as a turn: apply_action, history entry an int.
        self._solo_simultaneous = self.spec.simultaneous and n == 1
        # Which pyspiel string identifies an information set (see the module docstring).
        if game_type.provides_information_state_string:
            self._info_kind = "information_state"
        elif game_type.provides_observation_string or hidden:
            self._info_kind = "observation"
        else:
            self._info_kind = "state"
        self._names: dict[tuple[int, int], str] = {}
        self._resample_problem: str | None = None  # probed on the first sample_world
        # a trick-taking game whose deal sample_world draws exactly (.card_games), else None
        self.card_game: CardGame | None = card_game(self.params["name"], game.get_parameters())
        self._entry_text: list[str] | None = None  # str of each history entry (a world's text)
        self._state_type: type[OpenSpielState] = OpenSpielState
        self._playout: tuple[Any, ...] = ()  # CardGameState's compiled playout and its buffers
        if self.card_game is not None and numba_available():
            import numpy as np

            from omega_cluster.games.openspiel._card_kernels import playout, rules

            size = game.max_history_length()
            self._playout = (playout, rules(self.params["name"], game.get_parameters()),
                             np.empty(size, np.int64), np.empty(n, np.float64))  # fmt: skip
            self._state_type = CardGameState
        self._probed = False

    # -- parameters -----------------------------------------------------------------------------
    @classmethod
    def parameters_of(cls, name: str) -> dict[str, ParamSpec]:
        """Every parameter ``OpenSpielGame(name=name, ...)`` accepts, with defaults and types."""
        return parameter_specs(name)

    @classmethod
    def resolve_params(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``given`` against the pyspiel game's own parameters (loads the game)."""
        return resolve_and_load(given)[0]

    @property
    def pyspiel_game(self) -> Any:
        """The wrapped ``pyspiel.Game``."""
        return self._game

    # -- contract -------------------------------------------------------------------------------
    def new_initial_state(self, seed: int = 0) -> OpenSpielState:
        """The initial pyspiel state. ``seed`` is unused: chance is explicit in the history."""
        return self._state_type(self, self._game.new_initial_state(), [])

    def describe_action(self, action: int, *, player: int = 0) -> str:
        """pyspiel's game-level ``action_to_string`` for ``player`` (default 0), or the id.

        Never raises (error messages call it on illegal ids). It never asks a *state* for names:
        pyspiel's chess segfaults naming an illegal move. :meth:`OpenSpielState.describe_action`
        names a legal action in its real position.
        """
        limit = self._game.max_chance_outcomes() if player == CHANCE else self.spec.num_actions
        if not 0 <= action < limit:  # pyspiel would print a failed CHECK to stderr
            return str(action)
        key = (player, action)
        name = self._names.get(key)
        if name is None:
            try:
                name = str(self._game.action_to_string(player, action))
            except Exception:
                name = str(action)
            if name.startswith("Action(id="):  # pyspiel's default text says nothing more
                name = str(action)
            self._names[key] = name
        return name

    def supports_sampling(self) -> bool:
        """Whether ``sample_world`` works: no hidden information, or pyspiel can resample."""
        if not self.spec.hidden_information:
            return True
        if not self._probed:
            self._resample_problem, self._probed = probe_resample(self._game), True
        return self._resample_problem is None

    def __reduce__(self) -> tuple[Callable[..., OpenSpielGame], tuple[dict[str, Any]]]:
        # pyspiel objects pickle poorly across versions; rebuild from the parameters (Ray actors).
        return _rebuild_game, (dict(self.params),)


def _rebuild_game(params: dict[str, Any]) -> OpenSpielGame:
    return OpenSpielGame(**params)
