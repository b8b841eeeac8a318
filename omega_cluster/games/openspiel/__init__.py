"""The OpenSpiel adapter: any ``pyspiel`` game behind the omega_cluster game contract.

``make_game("openspiel:liars_dice", players=3)`` loads the pyspiel game and wraps it:
:class:`OpenSpielGame` builds the :class:`GameSpec` from pyspiel's ``GameType`` and
:class:`OpenSpielState` wraps one ``pyspiel.State``, so search, self-play and the arena (which only
know :mod:`omega_cluster.games.api`) can play it. pyspiel is imported lazily, only when such a
game is built (``pip install 'omega_cluster[openspiel]'``).

Mapping of the contract onto pyspiel:

* parameters — ``name`` plus the pyspiel game's own parameters (from
  ``GameType.parameter_specification``); every game also takes ``players`` (only its fixed count
  for a game without a ``players`` parameter). See :meth:`OpenSpielGame.parameters_of`.
* who acts — chance (-1) is ``(CHANCE,)``, a simultaneous node (-2) is every player, terminal
  (-4) is ``()``. At a simultaneous node each player gets pyspiel's legal list (a single no-op
  when it has no real move), so a joint action always has one entry per player.
* chance — explicit: chance outcomes are history entries (ids in ``0..max_chance_outcomes-1``,
  which may exceed ``num_actions``), so ``(params, history)`` alone fixes the state and the
  ``seed`` of ``new_initial_state`` / :meth:`Game.replay` changes nothing. Games whose chance is
  sampled inside pyspiel (``SAMPLED_STOCHASTIC``) cannot replay exactly and are refused, as are
  mean-field and action-struct games. The outcomes offered are pyspiel's, less those of
  probability 0 or not legal there, renormalized.
* information — ``observation(p)`` and ``information_set_key(p)`` are pyspiel's perfect-recall
  ``information_state_string(p)`` where the game provides it, else ``observation_string(p)``,
  else (perfect information) the state string; :meth:`OpenSpielState.observation_tensor` gives
  pyspiel's tensor for encoders.
* determinization — ``sample_world`` draws a world from the player's information set, checked by
  replay against everything the player saw, deterministic given the rng and never the true state
  in place of a world: an exact uniform deal for the trick-taking card games (hearts, oh_hell),
  else a re-deal, pyspiel's resampler or a repair. See :mod:`.sampling`.

The package: loading and parameter checks in :mod:`.loading`, the game in :mod:`.game`, the
state in :mod:`.state`, determinizations in :mod:`.sampling` (what the player knows in
:mod:`.knowledge`; the card games' deal in :mod:`.card_games`, its uniform draw in
:mod:`.holdings`, their compiled draw and playouts in :mod:`._card_kernels`), the compiled search
of Connect Four and tic-tac-toe in :mod:`._board_kernels`, OpenSpiel's MCTS and ISMCTS bots as
players (``openspiel_mcts:<simulations>``, ``openspiel_ismcts:<simulations>``) in :mod:`.bots`;
this ``__init__`` gives the public names and the game's :data:`PLUGIN`.
"""

from omega_cluster.games.openspiel.game import OpenSpielGame
from omega_cluster.games.openspiel.loading import supported_openspiel_games
from omega_cluster.games.openspiel.state import OpenSpielState
from omega_cluster.games.plugin import GamePlugin

__all__ = ["PLUGIN", "OpenSpielGame", "OpenSpielState", "supported_openspiel_games"]

PLUGIN = GamePlugin(
    name="openspiel",
    game=OpenSpielGame,
    encoder="omega_cluster.games.openspiel.encoder:OpenSpielEncoder",
    # compiled kernels for connect_four and tic_tac_toe; every other game keeps the Python loop
    fast_search="omega_cluster.games.openspiel._board_kernels:for_game",
    players={  # OpenSpiel's own C++ search bots (.bots): outside baselines and gate anchors
        "openspiel_mcts": "omega_cluster.games.openspiel.bots:OpenSpielMCTS",
        "openspiel_ismcts": "omega_cluster.games.openspiel.bots:OpenSpielISMCTS",
    },
)
