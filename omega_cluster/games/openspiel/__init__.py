"""The OpenSpiel adapter: any ``pyspiel`` game behind the omega_cluster game contract.

``make_game("openspiel:liars_dice", players=3)`` (or ``OpenSpielGame(name="liars_dice", players=3)``)
loads the pyspiel game and wraps it: :class:`OpenSpielGame` builds the :class:`GameSpec` from
pyspiel's ``GameType`` and :class:`OpenSpielState` wraps one ``pyspiel.State``, so search, self-play
and the arena (which only know :mod:`omega_cluster.games.api`) can play it. pyspiel is imported
lazily, only when such a game is built (``pip install 'omega_cluster[openspiel]'``).

Mapping of the contract onto pyspiel:

* parameters — ``name`` plus the pyspiel game's own parameters (names, defaults and types from
  ``GameType.parameter_specification``); every game also takes ``players`` (for a game without a
  ``players`` parameter only its fixed count is allowed). See :meth:`OpenSpielGame.parameters_of`.
* who acts — pyspiel's chance player (-1) is ``(CHANCE,)``, a simultaneous node (-2) is every
  player ``(0, ..., n-1)``, terminal (-4) is ``()``. At a simultaneous node every player gets the
  legal list pyspiel gives (OpenSpiel's convention is a single no-op for a player who has no real
  move), so the joint action always has one entry per player, as ``apply_actions`` wants.
* chance — explicit, as in pyspiel: chance outcomes are history entries (ids in
  ``0..max_chance_outcomes-1``, which may exceed ``num_actions``). The ``seed`` of
  ``new_initial_state`` / :meth:`Game.replay` therefore changes nothing: ``(params, history)``
  alone fixes the state. Games whose chance is sampled inside pyspiel (``SAMPLED_STOCHASTIC``,
  e.g. tarok) cannot replay exactly and are refused, as are mean-field and action-struct games.
* information — ``observation(p)`` and ``information_set_key(p)`` are both pyspiel's perfect-recall
  ``information_state_string(p)`` where the game provides it, else ``observation_string(p)``,
  else (perfect information) the state string. :meth:`OpenSpielState.observation_tensor` gives
  pyspiel's tensor for encoders.
* determinization — ``sample_world`` draws a world from the player's information set and checks
  it by replay against everything the player saw. The trick-taking card games (hearts, oh_hell)
  deal the unseen cards exactly, uniformly over every deal the history allows (:mod:`.card_games`,
  :mod:`.holdings`), and check the one world once; other games get a re-deal of what the player
  did not see, pyspiel's ``resample_from_infostate`` (not trusted: hearts' contradicts the
  history), a repair by swapping hidden chance outcomes. Never the true state in place of a
  world, deterministic given the rng. See :mod:`.sampling`.
* chance outcomes — pyspiel's, less those of probability 0 or not legal there (hearts with
  ``pass_cards=false`` lists four pass directions), renormalized.

The package: loading and parameter checks in :mod:`.loading`, the game in :mod:`.game`, the
state in :mod:`.state`, determinizations in :mod:`.sampling` (what the player knows in general in
:mod:`.knowledge`; the card games' deal in :mod:`.card_games`, its uniform draw in
:mod:`.holdings`, their compiled draw and random playouts in :mod:`._card_kernels`), the
compiled search of Connect Four and tic-tac-toe in :mod:`._board_kernels`, OpenSpiel's
own MCTS and ISMCTS bots as players (``openspiel_mcts:<simulations>``,
``openspiel_ismcts:<simulations>``) in :mod:`.bots`; this ``__init__`` gives the public names and
the game's :data:`PLUGIN`.
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
