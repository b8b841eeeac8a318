"""SMMCTS on the compiled SM-MCTS (:mod:`.fast.smm_driver`): when it applies, and its answers as
the Python search's :class:`~.result.SearchResult`.

:func:`smm_path` is the test: the game's plugin has ``fast_smm_search`` (Goofspiel), the
evaluator's ``fast_leaf()`` is a leaf the compiled search has (random rollout, the network, or
their blend) and the configuration is one it mirrors (no time limit). :func:`sm_result` turns one row of the batched answer into a ``SearchResult``: the
mixed strategy is the compiled one, the move is drawn from it with the Python search's
``pick_action`` and the caller's rng. Importing this module does not import numba.
"""

from __future__ import annotations

import inspect
import random
from typing import Any

from omega_cluster.games.api import Game
from omega_cluster.games.registry import game_plugin
from omega_cluster.search._smm_config import SMMCTSConfig
from omega_cluster.search._smm_tree import pick_action
from omega_cluster.search.result import SearchDiagnostics, SearchResult

__all__ = ["sm_result", "sm_seed", "smm_path"]


def smm_path(game: Game, config: SMMCTSConfig, evaluator: Any) -> tuple[Any, Any, str]:
    """``(fast game, LeafPlan, "")`` when the compiled SM-MCTS mirrors this search, else
    ``(None, None, why not)``."""
    from omega_cluster.search.fast.game import leaf_plan

    hook = game_plugin(game).hook("fast_smm_search")
    if hook is None:
        return None, None, f"{game.spec.name} has no compiled SM-MCTS (plugin hook fast_smm_search)"
    plan, why = leaf_plan(evaluator)
    if plan is None:
        return None, None, why
    encoder = plan.encoder if plan.leaf.network else None
    takes_encoder = len(inspect.signature(hook).parameters) > 1
    fast, why = hook(game, encoder) if takes_encoder and encoder is not None else hook(game)
    if fast is None:
        return None, None, why or "no compiled SM-MCTS"
    from omega_cluster.search.fast.smm_driver import unsupported

    obstacle = unsupported(config, plan.leaf)
    if obstacle is not None:
        return None, None, f"the compiled SM-MCTS: {obstacle}"
    return fast, plan, ""


def sm_seed(rng: random.Random) -> int:
    """The compiled search's splitmix64 seed, 64 bits drawn from the search's rng."""
    return rng.getrandbits(64)


def sm_result(results: Any, k: int, player: int, config: SMMCTSConfig, rng: random.Random,
              seconds: float, hidden: bool) -> SearchResult:  # fmt: skip
    """Row ``k`` of :class:`~.fast.smm_driver.SMResults` as SMMCTS's ``SearchResult``, the move
    drawn from the strategy at ``config.temperature`` with ``rng`` (as ``SMMCTS._result``)."""
    m = int(results.num_legal[k])
    legal = tuple(int(a) for a in results.legal[k, :m])
    policy = tuple(float(p) for p in results.policy[k, :m])
    sims, leaves = int(results.simulations[k]), int(results.leaves[k])
    diagnostics = SearchDiagnostics(
        simulations=sims, determinizations=sims + 1 if hidden else 0, seconds=seconds,
        leaf_evaluations=leaves, tree_nodes=int(results.tree_nodes[k]), max_depth=0,
        depth_histogram=(), extra={"terminal_leaves": float(sims - leaves)},
    )  # fmt: skip
    values = tuple(float(v) for v in results.values[k, :m])  # NaN: never picked
    return SearchResult(
        player=player, action=pick_action(legal, policy, config.temperature, rng), legal=legal,
        policy=policy, visits=tuple(int(v) for v in results.visits[k, :m]), action_values=values,
        root_value=tuple(float(x) for x in results.root_value[k]), diagnostics=diagnostics,
    )  # fmt: skip
