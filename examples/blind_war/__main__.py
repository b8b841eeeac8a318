"""``PYTHONPATH=examples python -m blind_war``: the conformance suite on 2, 3 and 4 players."""

from omega_cluster.games.conformance import check_game

from .game import BlindWarGame

for players in (2, 3, 4):
    print(check_game(BlindWarGame(players=players)))
