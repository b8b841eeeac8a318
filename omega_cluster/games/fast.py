"""The contract of a game's compiled kernels for the fast search path: :class:`FastGame`, and
:class:`SplitMixRandom`, the kernels' random stream as a ``random.Random``.

A game opts in through its plugin hook ``fast_search``: ``(game) -> (FastGame | None, reason)``;
the compiled tree (``omega_cluster.search.fast``) runs on it (the protocol, for a game of one's
own: ``docs/kernels.md``; ``check_kernels`` of :mod:`.conformance` holds the kernels to the
game's Python rules). The kernels are numba functions
handed to the tree as first-class functions together with the constant tuples they read
(``ctx``, and ``rctx`` / ``ectx`` for a rollout and the encoder). A packed state is an ``int64``
vector of ``state_size`` entries. Random numbers in kernels: :mod:`omega_cluster.games._splitmix`,
whose stream :class:`SplitMixRandom` draws in Python.

Chance: ``current`` returns :data:`CHANCE_NODE` at an explicit chance node and the ``chance``
kernel then samples and applies an outcome, drawing as the Python search does (one uniform draw,
the outcomes laid end to end in ``chance_outcomes`` order: ``games.chance.sample_chance``). A game
without explicit chance nodes (its chance folded into ``apply``) leaves ``chance`` None.
This module imports no numba.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from omega_cluster.games.api import State

__all__ = ["CHANCE_NODE", "OVER", "FastGame", "SplitMixRandom"]

OVER = -1  # ``current``: the searched horizon is over
CHANCE_NODE = -2  # ``current``: an explicit chance node (the ``chance`` kernel draws it)


@dataclass(frozen=True)
class FastGame:
    """One game's compiled kernels (numba ``@njit`` functions) and constants; see the module doc
    and each field's comment for the signatures."""

    name: str
    num_players: int
    num_actions: int  # the game's fixed action space
    max_legal: int  # most legal actions at any decision
    state_size: int  # length of a packed state (np.int64 vector)
    ctx: tuple[Any, ...]  # constant arrays every kernel reads
    pack: Callable[[State], np.ndarray]  # Python: a State -> its packed vector (exact copy)
    current: Any  # current(ctx, S) -> acting player, OVER, or CHANCE_NODE
    legal: Any  # legal(ctx, S, out) -> n: the legal actions in legal_actions() order
    apply: Any  # apply(ctx, S, action) -> None, in place, no checks
    returns: Any  # returns(ctx, S, out: float64[:]) -> None once over
    info_key: Any  # info_key(ctx, S, player) -> int64 (equal information sets, equal keys)
    sample_world: Any  # sample_world(ctx, S, player, rs, out) -> None: a determinization
    rollouts: dict[str, tuple[Any, Any]]  # name -> (rctx, kernel(rctx, ctx, S, rs, out) -> bool)
    obs_size: int = 0
    feat_size: int = 0
    ectx: tuple[Any, ...] | None = None
    encode: Any = None  # encode(ectx, ctx, S, player, legal, n, obs, feats) -> None
    chance: Any = field(default=None)  # chance(ctx, S, rs) -> None (None: no chance nodes)
    # rollout_for(player) -> (rctx, kernel) | None: the compiled rollout of that very player
    # (e.g. a Commander with its own weights); None: the named rollouts are the only ones
    rollout_for: Callable[[Any], tuple[Any, Any] | None] | None = None
    # hidden(ctx, S, player, out: float32[hidden_size]) -> None: what ``player`` cannot see in
    # S, as ``State.hidden_state`` gives it (the critic leaf's input); None: the game has none
    hidden: Any = None
    hidden_size: int = 0
    # the game's own deductions, which the compiled worlds can honour: ``world_constraints`` is
    # the Python callable ``(state, player) -> facts`` (the plugin hook's, identical object) and
    # ``constrain(state, player, facts, S)`` writes its facts into the packed root ``S`` for
    # ``sample_world`` to deal by; None: a search with world_constraints runs the Python loop
    world_constraints: Any = None
    constrain: Callable[[State, int, Any, np.ndarray], None] | None = None


_MASK = (1 << 64) - 1


class SplitMixRandom(random.Random):
    """``random()`` from splitmix64 (Steele, Lea & Flood 2014); integers below ``n`` as
    ``int(random() * n)``, as the compiled kernels draw them (``rand_below``)."""

    def __init__(self, seed: int = 0) -> None:
        self.state = seed & _MASK
        super().__init__(0)

    def random(self) -> float:
        self.state = x = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return ((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0)

    def _randbelow(self, n: int) -> int:
        return int(self.random() * n)

    def getrandbits(self, k: int) -> int:
        bits = 0
        for _ in range((k + 52) // 53):
            bits = bits << 53 | int(self.random() * 9007199254740992.0)
        return bits >> (((k + 52) // 53) * 53 - k)
