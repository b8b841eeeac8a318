"""When ISMCTS runs as a compiled loop, and how that loop's output becomes a root node.

Internal to :mod:`omega_cluster.search.ismcts`. For a built-in game with a compiled kernel
(today: heads-up Leduc poker, :mod:`omega_cluster.search._ismcts_leduc`) and a configuration the
kernel mirrors exactly — plain UCT with the tree root, one fresh determinization per simulation,
one uniform random rollout per new leaf, a simulation budget, no widening, caps, reuse or
constraints — the whole search runs compiled (numba), 10-30x faster than the Python loop (Leduc,
2,000 simulations: 0.3-0.7 against 6.5-9 µs a simulation; ``bench/bench_ismcts.py``). It is an
internal fast path, not the speed users see: a network leaf, heuristic rollouts, any other option
or any other game (a user's own included) take the Python loop, which is also the path whenever
numba is not installed. ``ISMCTSConfig.compiled`` chooses: ``None`` (automatic), ``True``
(required: the error names what prevents it) or ``False`` (never).

The kernel draws from its own splitmix64 stream seeded from the search's rng, so its results
are a function of the seed like the Python search's, but not the same numbers.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster._optional import numba_available
from omega_cluster.games.api import Game, State
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import game_plugin
from omega_cluster.search._ismcts_config import ISMCTSConfig
from omega_cluster.search._ismcts_root import tree_root
from omega_cluster.search._ismcts_tree import Node
from omega_cluster.search.evaluators import Evaluator, RolloutEvaluator

__all__ = ["CompiledRun", "numba_available", "run_compiled", "unsupported"]

_HISTOGRAM = 32  # deepest selection path the kernels record (Leduc: at most 8 decisions)


@dataclass(frozen=True)
class CompiledRun:
    """What a compiled search hands back."""

    root: Node  # the root's statistics, as the Python tree would hold them
    histogram: list[int]  # simulations per selection depth (trailing zeros dropped)
    leaves: int  # new leaves expanded (each one random rollout)
    tree_nodes: int  # nodes in the compiled tree


@functools.lru_cache(maxsize=16)
def _uct_tables(c: float, size: int) -> tuple[Any, Any]:
    """``c·sqrt(ln n)`` and ``1/sqrt(n)`` for n < size, as the Python tree builds them (shared by
    every search with this constant and budget; the kernel only reads them)."""
    explore = np.array([c * math.sqrt(math.log(n)) if n > 0 else 0.0 for n in range(size)])
    inv_sqrt = np.array([1.0 / math.sqrt(n) if n else 0.0 for n in range(size)])
    return explore, inv_sqrt  # shared: the kernel only reads them


def _kernel(game: Game) -> tuple[Any, str | None]:
    """The game's compiled kernel for its parameters (its plugin's ``compiled_search`` hook), or
    ``None`` and the reason there is none."""
    hook = game_plugin(game).hook("compiled_search")
    if hook is None:
        return None, f"no compiled kernel for {game.spec.name!r}"
    kernel, why = hook(game)
    return kernel, why


def unsupported(game: Game, evaluator: Evaluator, config: ISMCTSConfig) -> str | None:
    """``None`` if the compiled loop can run this search, else the reason it cannot."""
    if not numba_available():
        return "numba is not installed"
    _, why = _kernel(game)
    if why is not None:
        return why
    if (
        type(evaluator) is not RolloutEvaluator
        or type(evaluator.policy) is not RandomPlayer
        or evaluator.rollouts != 1
    ):
        return f"the kernel's leaf is one uniform random rollout, not {evaluator!r}"
    c = config
    plain = (
        c.selection == "uct"
        and c.pw_base is None
        and c.root_cap is None
        and c.nonroot_cap is None
        and not c.reuse_tree
        and c.leaves_in_flight == 1
        and c.root_schedule is tree_root
        and c.world_constraints is None
        and c.time_limit_s is None
        and c.simulations_per_world == 1
    )
    if not plain:
        return (
            "the kernel runs plain UCT with a simulation budget and one determinization per "
            "simulation with the tree root (no widening, caps, tree reuse, leaves in flight, "
            "root schedule, constraints, time limit or D×S)"
        )
    return None


def run_compiled(
    game: Game, state: State, player: int, config: ISMCTSConfig, rng: random.Random
) -> CompiledRun:
    """Run the compiled search (``unsupported`` said it can) and read back the root."""
    # numba is an optional dependency: the compiled tree is imported only when it runs
    from omega_cluster.search._ismcts_jit import EDGES, FIRST, Arrays

    kernel, _ = _kernel(game)

    budget = config.budget
    arrays = Arrays(budget + 2, 3 * (budget + 2))
    explore, inv_sqrt = _uct_tables(config.c_uct, budget + 2)
    rank = kernel.tables(game)
    seed = np.array([rng.getrandbits(64)], np.uint64)
    total = np.zeros(game.num_players)
    histogram = np.zeros(_HISTOGRAM, np.int64)
    leaves = kernel.search(
        kernel.encode(state), player, budget, rank, explore, inv_sqrt, seed, arrays.keys,
        arrays.slots, arrays.node, arrays.action, arrays.visits, arrays.mean, arrays.untried,
        arrays.counts, total, histogram,
    )  # fmt: skip
    first, k = int(arrays.node[0, FIRST]), int(arrays.node[0, EDGES])
    root = Node()
    root.player = player
    root.acts = [int(a) for a in arrays.action[first : first + k]]
    root.visits = [int(n) for n in arrays.visits[first : first + k]]
    root.means = [float(m) for m in arrays.mean[first : first + k]]
    root.n = sum(root.visits)
    root.total = [float(x) for x in total]
    root.total_n = budget
    hist = [int(x) for x in histogram]
    while hist and hist[-1] == 0:
        hist.pop()
    return CompiledRun(root, hist, int(leaves), int(arrays.counts[0]))
