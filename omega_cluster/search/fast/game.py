"""A game's compiled kernels (:class:`FastGame`), the leaf the compiled tree evaluates
(:class:`FastLeaf`) and the test of whether the compiled tree mirrors a search (:func:`fast_path`).

A game opts in through its plugin hook ``fast_search``: ``(game) -> (FastGame | None, reason)``.
:class:`FastGame` is defined with the games (:mod:`omega_cluster.games.fast`, so that a game's
package, below the search in the layers, can build one) and re-exported here.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass

from omega_cluster._optional import numba_available
from omega_cluster.games.api import Game
from omega_cluster.games.fast import CHANCE_NODE, OVER, FastGame
from omega_cluster.games.registry import game_plugin
from omega_cluster.search._ismcts_config import ISMCTSConfig
from omega_cluster.search._ismcts_root import tree_root

__all__ = ["CHANCE_NODE", "OVER", "FastGame", "FastLeaf", "fast_game", "fast_path"]

_LEAF_ROLLOUT_SEP = "+"


@dataclass(frozen=True)
class FastLeaf:
    """The leaf the compiled tree evaluates: ``"network"``, a rollout name of the game's
    ``FastGame.rollouts`` (``"random_rollout"``), or ``"network+<rollout>"``, whose value is
    ``network_value_weight · network + (1 - network_value_weight) · rollout`` (the prior comes
    from the network)."""

    name: str
    network_value_weight: float = 1.0

    def __post_init__(self) -> None:
        parts = self.name.split(_LEAF_ROLLOUT_SEP)
        ok = (len(parts) == 1 and parts[0] != "") or (
            len(parts) == 2 and parts[0] == "network" and parts[1] not in ("", "network")
        )
        if not ok:
            raise ValueError(
                f"FastLeaf: leaf {self.name!r} must be 'network', a rollout name "
                "(e.g. 'random_rollout') or 'network+<rollout>'"
            )
        w = self.network_value_weight
        if not (isinstance(w, (int, float)) and 0.0 <= w <= 1.0):
            raise ValueError(f"FastLeaf: network_value_weight must be in [0, 1], got {w!r}")

    @property
    def network(self) -> bool:
        """Whether the leaf asks the network (a forward pass per batch of leaves)."""
        return self.name.split(_LEAF_ROLLOUT_SEP)[0] == "network"

    @property
    def rollout(self) -> str | None:
        """The rollout the leaf plays (None: the network alone)."""
        parts = self.name.split(_LEAF_ROLLOUT_SEP)
        if len(parts) == 2:
            return parts[1]
        return None if parts[0] == "network" else parts[0]


_CACHE: weakref.WeakKeyDictionary[Game, tuple[FastGame | None, str | None]] = (
    weakref.WeakKeyDictionary()
)


def fast_game(game: Game) -> tuple[FastGame | None, str | None]:
    """The game's ``FastGame`` (its plugin hook ``fast_search``, built once per game object), or
    ``None`` and the reason there is none."""
    if not numba_available():
        return None, "numba is not installed"
    try:  # a game object that cannot be weakly referenced or hashed is not cached
        cached = _CACHE.get(game)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    hook = game_plugin(game).hook("fast_search")
    answer: tuple[FastGame | None, str | None]
    if hook is None:
        answer = None, f"{game.spec.name} has no compiled search (plugin hook fast_search)"
    else:
        fast, why = hook(game)
        answer = (fast, None) if fast is not None else (None, why or "no compiled search")
    with contextlib.suppress(TypeError):
        _CACHE[game] = answer
    return answer


def _config_obstacle(config: ISMCTSConfig) -> str | None:
    """The first option of ``config`` the compiled tree does not mirror (None: none)."""
    c = config
    for name, bad in (
        ("root_schedule (only tree_root)", c.root_schedule is not tree_root),
        ("time_limit_s", c.time_limit_s is not None),
        ("determinizations × simulations_per_determinization", c.determinizations is not None),
        ("pw_base (progressive widening)", c.pw_base is not None),
        ("root_cap", c.root_cap is not None),
        ("nonroot_cap", c.nonroot_cap is not None),
        ("reuse_tree", c.reuse_tree),
        ("world_constraints", c.world_constraints is not None),
        ("leaves_in_flight > 1", c.leaves_in_flight != 1),
    ):
        if bad:
            return f"the compiled tree does not support {name}"
    return None


def fast_path(
    game: Game, config: ISMCTSConfig, leaf: FastLeaf | None
) -> tuple[FastGame | None, str | None]:
    """The ``FastGame`` when the compiled tree mirrors this search exactly (game, configuration
    and leaf), else ``None`` and the first thing that prevents it."""
    if leaf is None:
        return None, "the evaluator is not a leaf the compiled tree has"
    fast, why = fast_game(game)
    if fast is None:
        return None, why
    obstacle = _config_obstacle(config)
    if obstacle is not None:
        return None, obstacle
    if leaf.network and fast.encode is None:
        return None, f"{fast.name} has no compiled encoder for the network leaf"
    rollout = leaf.rollout
    if rollout is not None and rollout not in fast.rollouts:
        have = ", ".join(sorted(fast.rollouts)) or "none"
        return None, f"{fast.name} has no compiled rollout {rollout!r} (compiled: {have})"
    return fast, None
