"""``PYTHONPATH=examples python -m blind_war``: the conformance suite on 2, 3 and 4 players, and
(with numba installed) the compiled kernels against the rules, move for move."""

import importlib.util

from omega_cluster.games.conformance import check_game, check_kernels

from .game import BlindWarGame

for players in (2, 3, 4):
    print(check_game(BlindWarGame(players=players)))
    if importlib.util.find_spec("numba") is not None:
        print(check_kernels(BlindWarGame(players=players)))
