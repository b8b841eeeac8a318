"""Leduc poker (Southey et al. 2005), natively: the same rules, parameters and action ids as
OpenSpiel's ``leduc_poker``, so one action sequence drives both engines (checked by
``tests/conformance/test_openspiel_crosscheck.py``).

Rules (OpenSpiel's N-player version): a deck of ``N + 1`` ranks in two suits (card id ``c`` has rank
``c // 2``); everyone antes one chip; chance deals one private card per seat, then a betting round
(raise size 2), then chance turns one public card, then a second round (raise size 4). Actions are
``0 = fold`` (only when facing a bet), ``1 = call/check``, ``2 = raise`` (at most two raises a
round). A round ends when everyone still in has called the last raise (or checked). At showdown a
pair with the board wins, else the higher rank; equal hands split the pot. Returns are chips won.

Parameters as OpenSpiel: ``action_mapping`` (every action always legal; an impossible fold or a third
raise is played as a call), ``suit_isomorphism`` (chance actions are ranks, suits are not
distinguished), ``starting_player`` (who opens each round).

Information: ``information_set_key`` is an int built from exactly what OpenSpiel's
``information_state_string`` shows (own card, board card, both betting sequences, whether chance is
dealing — and, at the end of a showdown, who won, which the final chip counts reveal), so both
partition states identically. ``sample_world`` redraws opponents' private cards, keeping the
showdown result when the game is over. What it shares with Kuhn (who acts, card names, the
redeal) is in :mod:`omega_cluster.games._poker`.

The rule-based player :class:`LeducRulePlayer` (the game's ``heuristic``, a fixed rating anchor)
plays by hand strength from ``state.observation(player)`` alone, so it never peeks at hidden cards.

The package: fixed rules and the observation type in :mod:`.rules`, parameters in :mod:`.game`,
positions in :mod:`.state`, the rule-based player in :mod:`.players`, what one seat sees at a
table in :mod:`.view`; this ``__init__`` gives the public names and the game's :data:`PLUGIN`.
"""

from omega_cluster.games.leduc_poker.game import LeducPokerGame
from omega_cluster.games.leduc_poker.players import LeducRulePlayer
from omega_cluster.games.leduc_poker.rules import CALL, FOLD, RAISE, LeducObservation
from omega_cluster.games.leduc_poker.state import LeducPokerState
from omega_cluster.games.plugin import GamePlugin

__all__ = [
    "CALL",
    "FOLD",
    "PLUGIN",
    "RAISE",
    "LeducObservation",
    "LeducPokerGame",
    "LeducPokerState",
    "LeducRulePlayer",
]

PLUGIN = GamePlugin(
    name="leduc_poker",
    game=LeducPokerGame,
    encoder="omega_cluster.games.leduc_poker.encoder:LeducPokerEncoder",
    players={"heuristic": LeducRulePlayer},
    fast_search="omega_cluster.games.leduc_poker.fast:for_game",
    ntuple_patterns="omega_cluster.games.leduc_poker.ntuple:LeducPatterns",
    seat_view="omega_cluster.games.leduc_poker.view:seat_view",
)
