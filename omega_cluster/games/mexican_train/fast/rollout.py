"""Rollout leaves over packed states (numba): uniform random moves, or the compiled Commander at
every seat, to the end of the round.

Both take ``(rctx, ctx, S, rs, out)``, play the scratch vector ``S`` with the compiled rules
(:mod:`..officers._rules_jit`, without the search's extra fields: a rollout never needs them) and
write the round's returns (``_rules_jit.round_returns``, as the compiled Commander scores its
playouts) into ``out``. :func:`random_rollout` picks ``legal[int(u * n)]`` like
``MexicanTrainState.random_playout``; :func:`commander_rollout` is
``_commander_jit._playout``: the moves and win shares of ``Commander.playout_returns``, False when
the chain search's memo (``rctx``) overflowed (the caller then falls back).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from omega_cluster.games._splitmix import rand_below
from omega_cluster.games.mexican_train.fast.kernels import returns
from omega_cluster.games.mexican_train.fast.layout import X_OVER
from omega_cluster.games.mexican_train.officers._chain_jit import C_OVERFLOW
from omega_cluster.games.mexican_train.officers._commander_jit import (
    CompiledCommander,
    _playout,
)
from omega_cluster.games.mexican_train.officers._rules_jit import (
    apply_action,
    legal_actions,
    round_returns,
)

__all__ = ["commander_rctx", "commander_rollout", "random_rctx", "random_rollout"]


def random_rctx(cc: CompiledCommander) -> tuple[np.ndarray]:
    """The random rollout's scratch: one legal-move buffer."""
    return (np.zeros_like(cc.legal),)


def commander_rctx(cc: CompiledCommander) -> tuple[np.ndarray, ...]:
    """The Commander's weights, danger thresholds, chain-search memo and legal-move buffer."""
    return (cc.W, cc.D, cc.keys, cc.vals, cc.stamp, cc.ctl, cc.legal)


@njit(cache=True)
def random_rollout(rctx, ctx, S, rs, out) -> bool:
    """Uniform random legal moves to the end of the round; the returns into ``out``."""
    if S[X_OVER]:
        returns(ctx, S, out)
        return True
    G, em, dm, pips, high, low, values, P = ctx
    buf = rctx[0]
    while True:
        k = legal_actions(S, G, em, dm, P, buf)
        r = apply_action(S, G, em, dm, pips, high, low, buf[rand_below(rs, k)])
        if r != -2:
            round_returns(S, G, values, P, r, out)
            return True


@njit(cache=True)
def commander_rollout(rctx, ctx, S, rs, out) -> bool:
    """The compiled Commander at every seat to the end of the round (``rs`` unused: it is
    deterministic); False when its memo overflowed."""
    if S[X_OVER]:
        returns(ctx, S, out)
        return True
    G, em, dm, pips, high, low, values, P = ctx
    W, D, keys, vals, stamp, ctl, legal = rctx
    ctl[C_OVERFLOW] = 0
    return _playout(
        S, G, em, dm, pips, high, low, values, P, W, D, keys, vals, stamp, ctl, legal, out
    )
