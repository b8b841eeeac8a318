"""A Mexican Train state as one int64 vector (:mod:`.layout`), and the constant arrays the
kernels read.

:func:`make_ctx` builds the kernels' ``ctx``: the compiled rules' game vector and tile tables
(those of :class:`~omega_cluster.games.mexican_train.officers._commander_jit.CompiledCommander`,
so the Commander's kernels read the same arrays). :func:`make_pack` returns the game's ``pack``:
the rules part filled by ``CompiledCommander.pack`` itself, then every ``X_*`` field from the
Python state. :func:`constrain` adds a search root's public deductions (the groups of the
constrained deal, ``deduce=true``), which only the compiled ``sample_world`` reads. The fast
path covers the campaign's last round only (the next deal draws from Python's Mersenne
Twister), so ``pack`` refuses a state of an earlier round. :func:`fields`
names the parts of a vector, to compare two of them field by field.

A finished round stays as the Python state leaves it: no acting seat (-1), the round's pips
added to the totals, rounds won counted, the round-end pips folded into the log hash, and no
recent actions (``views.recent_actions`` of a finished game is empty).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from omega_cluster.games.api import State
from omega_cluster.games.mexican_train.fast.layout import (
    GROUP_WORDS,
    MAX_GROUPS,
    MAX_LOG,
    STATE_SIZE,
    X_DEAL,
    X_ENGINE,
    X_GROUPS,
    X_GROUPS_N,
    X_HASH,
    X_HIST,
    X_HN,
    X_LENGTHS,
    X_OVER,
    X_ROUND,
    X_WENT_OUT,
)
from omega_cluster.games.mexican_train.officers import _rules_jit as R
from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander
from omega_cluster.games.mexican_train.officers.terms import DEFAULT_CHAIN_BUDGET
from omega_cluster.games.mexican_train.officers.weights import CommanderWeights
from omega_cluster.games.mexican_train.tiles import NUM_SLOTS
from omega_cluster.games.mexican_train.views import recent_actions

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState

__all__ = ["commander_for", "constrain", "fields", "make_ctx", "make_pack"]

_TWO_63 = 1 << 63


def commander_for(game: MexicanTrainGame) -> CompiledCommander:
    """The default Commander compiled for ``game`` (its arrays are the kernels' ``ctx``)."""
    w = CommanderWeights()
    return CompiledCommander(game, w.vector(), w.danger_hand_size, DEFAULT_CHAIN_BUDGET)


def make_ctx(cc: CompiledCommander) -> tuple[np.ndarray, ...]:
    """``(G, em, dm, pips, high, low, values, P)``: what every kernel reads."""
    return (cc.G, cc.em, cc.dm, cc.pips, cc.high, cc.low, cc.values, cc.P)


def make_pack(game: MexicanTrainGame, cc: CompiledCommander) -> Callable[[Any], np.ndarray]:
    """The game's ``pack(state) -> int64[STATE_SIZE]`` (an exact copy of the position)."""
    last = game.num_rounds - 1

    def pack(state: MexicanTrainState) -> np.ndarray:
        own = getattr(state, "game", None)
        if own is not game and getattr(own, "params", None) != game.params:
            raise ValueError(
                f"mexican_train fast pack: the state is not a position of this game "
                f"({game.params}); got {type(state).__name__}"
            )
        if state.round_index != last:
            raise ValueError(
                f"mexican_train fast pack: the packed state covers only the campaign's last "
                f"round (round {last} of {game.num_rounds}); this state is in round "
                f"{state.round_index}"
            )
        S = np.zeros(STATE_SIZE, dtype=np.int64)
        S[: R.S_TOTAL] = cc.pack(state)
        h = state.log_hash
        S[X_HASH] = h - (1 << 64) if h >= _TWO_63 else h
        S[X_ROUND], S[X_ENGINE], S[X_OVER] = state.round_index, state.engine, state.over
        went = state.round_results[-1].went_out if state.over else None
        S[X_WENT_OUT] = -1 if went is None else went
        S[X_LENGTHS : X_LENGTHS + NUM_SLOTS] = state.lengths
        pairs = recent_actions(state, MAX_LOG)
        S[X_HN] = len(pairs)
        for i, (actor, action) in enumerate(pairs):
            S[X_HIST + 2 * i], S[X_HIST + 2 * i + 1] = actor, action
        return S

    return pack


def constrain(state: State, player: int, facts: Any, S: np.ndarray) -> None:
    """Write the deductions ``facts`` (a :class:`DealConstraints` for ``player``'s worlds, as the
    game's ``world_constraints`` gives them) into ``S``, the packed ``state``: the groups of the
    constrained deal in dealing order (``sampling.deal_groups``), which the compiled
    ``sample_world`` then deals as the Python sampler does. Refused on one line
    (``ConstraintError``) where the Python sampler refuses them."""
    from omega_cluster.games.mexican_train.sampling import deal_groups

    _, groups = deal_groups(cast("MexicanTrainState", state), player, facts)
    if len(groups) > MAX_GROUPS:  # cannot happen: each seat's groups but one hold a tile
        raise ValueError(f"mexican_train fast deal: {len(groups)} groups (room for {MAX_GROUPS})")
    S[X_DEAL], S[X_GROUPS_N] = 1, len(groups)
    for g, (q, avoid, count) in enumerate(groups):
        at = X_GROUPS + GROUP_WORDS * g
        S[at], S[at + 1] = q, count
        S[at + 2], S[at + 3] = avoid & R.LOW_MASK, avoid >> R.WORD


def fields(S: np.ndarray, n: int) -> dict[str, Any]:
    """The named parts of a packed vector (``n`` players), for field-by-field comparisons."""
    s = [int(x) for x in S]
    hands = [(s[R.S_HANDS + 2 * q], s[R.S_HANDS + 2 * q + 1]) for q in range(n)]
    hn = s[X_HN]
    return {
        "current": s[R.S_CUR],
        "marked": s[R.S_MARKED],
        "board": (s[R.S_BOARD_LO], s[R.S_BOARD_HI]),
        "bonus/drawn/chain": (s[R.S_BONUS], s[R.S_DRAWN], s[R.S_CHAIN]),
        "first_pending": s[R.S_FIRST],
        "open_doubles": s[R.S_OD : R.S_OD + s[R.S_OD_N]],
        "ends": s[R.S_ENDS : R.S_ENDS + NUM_SLOTS],
        "hands": hands,
        "boneyard": s[R.S_BONE : R.S_BONE + s[R.S_BONE_N]],
        "pip_totals": s[R.S_PIPS0 : R.S_PIPS0 + n],
        "outs": s[R.S_OUTS0 : R.S_OUTS0 + n],
        "engine_tile": s[R.S_ENGINE_TILE],
        "log_hash": s[X_HASH],
        "round/engine": (s[X_ROUND], s[X_ENGINE]),
        "over/went_out": (s[X_OVER], s[X_WENT_OUT]),
        "lengths": s[X_LENGTHS : X_LENGTHS + NUM_SLOTS],
        "recent": [(s[X_HIST + 2 * i], s[X_HIST + 2 * i + 1]) for i in range(hn)],
    }
