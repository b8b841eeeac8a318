"""OpenSpiel's own C++ search bots as players of any ``openspiel:`` game (outside baselines).

* ``openspiel_mcts:<simulations>`` — ``pyspiel.MCTSBot``: UCT on the true state, for
  perfect-information turn-based games (tic-tac-toe, connect four, ...).
* ``openspiel_ismcts:<simulations>`` — ``pyspiel.ISMCTSBot``: information-set MCTS (Cowling,
  Powley & Whitehouse 2012), a fresh world drawn with pyspiel's ``ResampleFromInfostate`` each
  simulation, for imperfect-information turn-based games whose pyspiel implementation gives
  that resampling (Kuhn and Leduc poker, universal_poker, euchre, hearts, oh_hell, ...).

Both evaluate leaves with ``pyspiel.RandomRolloutEvaluator`` (``rollouts`` random playouts) and
play the action of the most-visited child (ISMCTS: its normalised visit counts, argmax). Options:
``uct_c`` (2.0, OpenSpiel's examples' constant) and ``rollouts`` (1). The bots are built afresh
for every move with seeds drawn from the arena's rng and keep nothing between moves (ISMCTS sees
only the acting player's information state; MCTS the state, which is all there is to see). An
MCTS game is fixed by its seed; pyspiel's ISMCTSBot is not repeatable from one seed (now and
then a second visit distribution from one seed and state; the cause lies in the C++ bot), so
its games repeat only in distribution. The game's plugin names them
(``PLUGIN.players``), so the registry builds them by spec for ``openspiel:`` games only, in the
arena and as gate anchors.
"""

from __future__ import annotations

import random
from typing import Any

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, State

__all__ = ["OpenSpielBotError", "OpenSpielISMCTS", "OpenSpielMCTS"]


class OpenSpielBotError(UserError, ValueError):
    """An OpenSpiel bot asked for a game it cannot play, or bad bot arguments."""


def _check(name: str, simulations: Any, uct_c: Any, rollouts: Any) -> None:
    if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
        raise OpenSpielBotError(f"{name}: simulations must be an int >= 1, got {simulations!r}")
    if isinstance(uct_c, bool) or not isinstance(uct_c, (int, float)) or not uct_c >= 0:
        raise OpenSpielBotError(f"{name}: uct_c must be a number >= 0, got {uct_c!r}")
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
        raise OpenSpielBotError(f"{name}: rollouts must be an int >= 1, got {rollouts!r}")


def _pyspiel_game(name: str, game: Game) -> Any:
    pyspiel_game = getattr(game, "pyspiel_game", None)
    if pyspiel_game is None:
        raise OpenSpielBotError(f"{name} plays openspiel: games only, not {game.spec.name}")
    if game.spec.simultaneous:
        raise OpenSpielBotError(
            f"{name}: {game.spec.name} has simultaneous moves; OpenSpiel's MCTS and ISMCTS bots "
            "search turn-based games (use smmcts)"
        )
    return pyspiel_game


class _Bot:
    """What both bots share: the checks, the spec name and ``act``."""

    kind = ""
    spec_args = ("simulations",)  # the registry's positional spec arguments

    def __init__(
        self, game: Game, simulations: int = 100, uct_c: float = 2.0, rollouts: int = 1
    ) -> None:
        _check(self.kind, simulations, uct_c, rollouts)
        self.game = game
        self.pyspiel_game = _pyspiel_game(self.kind, game)
        self.simulations, self.uct_c, self.rollouts = simulations, float(uct_c), rollouts
        self.name = f"{self.kind}:{simulations}"

    def _bot(self, seed: int) -> Any:
        raise NotImplementedError

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if len(legal) == 1:
            return legal[0]
        pyspiel_state = state.pyspiel_state  # type: ignore[attr-defined]
        if pyspiel_state.current_player() != player:
            raise ValueError(f"{self.name}: player {player} does not act in this state")
        return int(self._bot(rng.getrandbits(31)).step(pyspiel_state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, uct_c={self.uct_c}, rollouts={self.rollouts})"


class OpenSpielMCTS(_Bot):
    """``pyspiel.MCTSBot`` with random rollouts (module docstring): perfect information only."""

    kind = "openspiel_mcts"

    def __init__(
        self, game: Game, simulations: int = 100, uct_c: float = 2.0, rollouts: int = 1
    ) -> None:
        super().__init__(game, simulations, uct_c, rollouts)
        if self.game.spec.hidden_information:
            raise OpenSpielBotError(
                f"openspiel_mcts searches the true state, so it needs perfect information; "
                f"{game.spec.name} has hidden information (use openspiel_ismcts)"
            )

    def _bot(self, seed: int) -> Any:
        import pyspiel

        evaluator = pyspiel.RandomRolloutEvaluator(self.rollouts, seed)
        return pyspiel.MCTSBot(self.pyspiel_game, evaluator, self.uct_c, self.simulations,
                               1000, False, seed, False)  # fmt: skip


class OpenSpielISMCTS(_Bot):
    """``pyspiel.ISMCTSBot`` with random rollouts (module docstring): imperfect information, a
    game whose pyspiel implementation resamples worlds from an information state."""

    kind = "openspiel_ismcts"

    def __init__(
        self, game: Game, simulations: int = 100, uct_c: float = 2.0, rollouts: int = 1
    ) -> None:
        super().__init__(game, simulations, uct_c, rollouts)
        if not self.game.spec.hidden_information:
            raise OpenSpielBotError(
                f"openspiel_ismcts: {game.spec.name} has perfect information, which OpenSpiel's "
                "ISMCTS refuses (use openspiel_mcts)"
            )
        _check_resampling(self.pyspiel_game, game.spec.name)

    def _bot(self, seed: int) -> Any:
        import pyspiel

        evaluator = pyspiel.RandomRolloutEvaluator(self.rollouts, seed)
        return pyspiel.ISMCTSBot(seed, evaluator, self.uct_c, self.simulations)


def _check_resampling(pyspiel_game: Any, name: str) -> None:
    """Refuse a game whose pyspiel states cannot resample a world (ISMCTS needs it): tried at
    the first decision of a fixed deal."""
    state = pyspiel_game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    if state.is_terminal():
        return
    try:
        state.resample_from_infostate(state.current_player(), lambda: 0.5)
    except RuntimeError as err:
        raise OpenSpielBotError(
            f"openspiel_ismcts: pyspiel's {name.removeprefix('openspiel:')} cannot resample a "
            f"world from an information state ({str(err).strip()}), which OpenSpiel's ISMCTS "
            "needs; the project's own search plays it: ismcts:random:<simulations>"
        ) from None
