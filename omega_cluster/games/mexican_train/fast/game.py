"""Mexican Train's fast path: :func:`fast_game` (the plugin hook ``fast_search``) builds the
:class:`~omega_cluster.games.fast.FastGame` of a game — the packed state, the rules, the
determinizations (with the public deductions, ``deduce=true``), the random and Commander
rollouts and, given an encoder, the compiled encoder.

The compiled rules reach the end of the current round only (the next deal draws from Python's
Mersenne Twister), so the fast path covers one-round games (``rounds=1``, the default run's);
for a longer campaign it answers ``None`` and why, and the search runs in Python. Every rule
variant is covered (first-turn chains included: who made each move is the acting seat).
"""

from __future__ import annotations

from typing import Any

from omega_cluster._optional import numba_available
from omega_cluster.games.api import Game

__all__ = ["fast_game"]


def fast_game(game: Game, encoder: Any = None) -> tuple[Any, str | None]:
    """``(FastGame, None)`` for ``game``, or ``(None, why not)``; ``encoder`` (a
    ``MexicanTrainEncoder``) adds the network leaf's compiled encoder."""
    from omega_cluster.games.mexican_train.game import MexicanTrainGame

    if not numba_available():
        return None, "mexican_train fast path: needs numba (pip install 'omega-cluster[fast]')"
    if not isinstance(game, MexicanTrainGame):
        return None, f"mexican_train fast path: not a Mexican Train game ({type(game).__name__})"
    if game.num_rounds != 1:
        return None, (
            f"mexican_train fast path: only one-round games (rounds=1); this game plays "
            f"rounds={game.num_rounds} and the compiled rules stop at the end of a round"
        )
    return _build(game, encoder), None


def _build(game: Any, encoder: Any) -> Any:
    from omega_cluster.games.fast import FastGame
    from omega_cluster.games.mexican_train.fast import kernels, rollout
    from omega_cluster.games.mexican_train.fast.hidden import hidden_codes
    from omega_cluster.games.mexican_train.fast.layout import STATE_SIZE
    from omega_cluster.games.mexican_train.fast.sampling import sample_world
    from omega_cluster.games.mexican_train.fast.state import (
        commander_for,
        constrain,
        make_ctx,
        make_pack,
    )
    from omega_cluster.games.mexican_train.inference import deal_constraints
    from omega_cluster.games.mexican_train.tiles import NUM_SLOTS

    cc = commander_for(game)
    tiles = game.tiles
    commander = (rollout.commander_rctx(cc), rollout.commander_rollout)
    obs_size = feat_size = 0
    ectx = encode = None
    if encoder is not None:
        import omega_cluster.games.mexican_train.fast.encode as compiled_encoder

        if compiled_encoder.supported(encoder, game) is None:  # else: no network leaf here
            ectx = compiled_encoder.make_encoder_ctx(encoder, game)
            encode = compiled_encoder.encode
            obs_size, feat_size = encoder.observation_size, encoder.action_feature_size
    return FastGame(
        name=game.name,
        num_players=game.num_players,
        num_actions=tiles.num_actions,
        # every train's end matches at most (double_set + 1) tiles, plus DRAW or PASS
        max_legal=NUM_SLOTS * (tiles.double_set + 1) + 1,
        state_size=STATE_SIZE,
        ctx=make_ctx(cc),
        pack=make_pack(game, cc),
        current=kernels.current,
        legal=kernels.legal,
        apply=kernels.apply,
        returns=kernels.returns,
        info_key=kernels.info_key,
        sample_world=sample_world,
        rollouts={
            "random_rollout": (rollout.random_rctx(cc), rollout.random_rollout),
            "commander_rollout": commander,
            "heuristic_rollout": commander,  # the plugin's heuristic is the Commander
        },
        obs_size=obs_size,
        feat_size=feat_size,
        ectx=ectx,
        encode=encode,
        rollout_for=lambda player: _rollout_for(game, player),
        hidden=hidden_codes,
        hidden_size=tiles.num_tiles,
        world_constraints=deal_constraints,
        constrain=constrain,
    )


def _rollout_for(game: Any, player: Any) -> tuple[Any, Any] | None:
    """The compiled Commander rollout of ``player`` (a Commander: its weights, danger threshold
    and chain budget), or ``None`` for any other player."""
    from omega_cluster.games.mexican_train.fast import rollout
    from omega_cluster.games.mexican_train.officers import Commander
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    if type(player) is not Commander:
        return None
    w = player.weights
    cc = CompiledCommander(game, w.vector(), w.danger_hand_size, player.chain_budget)
    return rollout.commander_rctx(cc), rollout.commander_rollout
