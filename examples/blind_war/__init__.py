"""Blind War: a game of your own, as one package with the shape of a built-in game.

``game.py`` holds the rules (a :class:`~omega_cluster.games.api.Game` and its ``State``),
``players.py`` a rule-based player, ``encoder.py`` the network's inputs, ``fast.py`` the same
rules as numba kernels (optional: with them its searches run compiled, ``docs/kernels.md``) and
``plugin.py`` the ``PLUGIN`` that hands them to the service. The service finds all of it from one
import path, ``blind_war:BlindWarGame``, once this directory's parent is on ``PYTHONPATH``.

Check it against the contract (the conformance suite of ``omega_cluster.games.conformance``;
with numba, ``check_kernels`` too: the kernels against the rules, move for move)::

    PYTHONPATH=examples python -m blind_war

Play it in the arena (``heuristic`` is the plugin's :class:`CheapWinner`)::

    PYTHONPATH=examples omega-cluster arena game=blind_war:BlindWarGame seats=heuristic,random

Train it: ``game.name`` naming another game than the preset's starts from that game's own
defaults (2 players, 13 cards, 3 tricks), not the default preset's Mexican Train parameters;
``game.params.players=3`` etc. set them. The trainer ships this package to the embedded Ray's
workers (a ``py_modules`` runtime env)::

    PYTHONPATH=examples omega-cluster train run=smoke game.name=blind_war:BlindWarGame

From nothing (``run=zero``: random weights, PUCT on the network's prior and value; the
``heuristic`` goes unused, the champions are rated against random)::

    PYTHONPATH=examples omega-cluster train run=zero game.name=blind_war:BlindWarGame

On the local cluster (``make local-cluster``) or with ``ray job submit``, the job's driver runs in
the uploaded copy of the repository, so give it the path relative to the repository
(``ray job submit``: ``--runtime-env-json '{"env_vars": {"PYTHONPATH": "examples"}}'``)::

    make local-cluster JOB_PYTHONPATH=examples \
        ARGS="run=smoke game.name=blind_war:BlindWarGame"

Then the run's champion plays like any other player: ``seats=network:<run dir>/models/v<k>,
heuristic`` (the greedy network) or ``champion:<run dir>`` (as the run's gate plays it).
"""

from __future__ import annotations

from .encoder import BlindWarEncoder
from .game import BlindWarGame, BlindWarState
from .players import CheapWinner
from .plugin import PLUGIN

__all__ = ["PLUGIN", "BlindWarEncoder", "BlindWarGame", "BlindWarState", "CheapWinner"]
