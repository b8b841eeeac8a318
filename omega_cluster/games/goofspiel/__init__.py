"""Goofspiel (the game of pure strategy), natively: the same rules, parameters and action ids as
OpenSpiel's ``goofspiel``, so one action sequence drives both engines (checked by
``tests/conformance/test_openspiel_crosscheck.py``).

Rules: every player holds the cards ``1..num_cards`` (action ``a`` bids card ``a + 1``). Each turn a
point card is turned — by an explicit ``CHANCE`` node (``points_order="random"``, action = card
index) or in ``ascending``/``descending`` order — and all players bid one card at once
(``current_players`` is every seat; ``apply_joint_action``; the history entry is the tuple of bids).
A unique highest bid takes the point card's value; a tied top bid discards it. Bid cards are spent.
As in OpenSpiel, the last turn has no choice and is played automatically (it is not in the history),
and ``num_turns`` (``-1`` = ``num_cards``) can shorten the game. ``returns_type``: ``win_loss``
(winners share +1, losers share -1, an all-way tie is 0), ``point_difference`` (points minus the
mean) or ``total_points``. ``scores()`` are the points.

Information follows OpenSpiel's ``information_state_string``: without ``imp_info`` every player sees
the point cards, every hand and who won each turn (not the order of the bids); with ``imp_info`` a
player sees only their own bids, the point cards and who won each turn. ``information_set_key`` is
an int built from those fields, so both partition states identically. With ``imp_info``,
``sample_world`` redraws the opponents' past bids consistently with every turn's win/lose/tie outcome
(a randomized backtracking search, see :func:`.sampling.sample_bids`). ``egocentric`` only changes
OpenSpiel's tensors; it is accepted for parity and has no effect here.

The rule-based player :class:`GoofspielMatchPlayer` (the game's ``heuristic``, a fixed rating
anchor) bids the card that matches the prize, from ``state.observation(player)`` alone.

The package: card tables in :mod:`.cards`, parameters in :mod:`.game`, positions in :mod:`.state`,
the bid redraw of ``sample_world`` in :mod:`.sampling`, the rule-based player in
:mod:`.players`, what one seat sees at a table in :mod:`.view`; this ``__init__`` gives the public
names and the game's :data:`PLUGIN`.
"""

from omega_cluster.games.goofspiel.game import GoofspielGame
from omega_cluster.games.goofspiel.players import GoofspielMatchPlayer
from omega_cluster.games.goofspiel.state import GoofspielObservation, GoofspielState
from omega_cluster.games.plugin import GamePlugin

__all__ = [
    "PLUGIN",
    "GoofspielGame",
    "GoofspielMatchPlayer",
    "GoofspielObservation",
    "GoofspielState",
]

PLUGIN = GamePlugin(
    name="goofspiel",
    game=GoofspielGame,
    encoder="omega_cluster.games.goofspiel.encoder:GoofspielEncoder",
    players={"heuristic": GoofspielMatchPlayer},
    fast_smm_search="omega_cluster.games.goofspiel.fast:fast_smm_search",
    ntuple_patterns="omega_cluster.games.goofspiel.ntuple:GoofspielPatterns",
    seat_view="omega_cluster.games.goofspiel.view:seat_view",
)
