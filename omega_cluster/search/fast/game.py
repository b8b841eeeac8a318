"""A game's compiled kernels (:class:`FastGame`), the leaf the compiled tree evaluates
(:class:`FastLeaf`) and the test of whether the compiled tree mirrors a search (:func:`fast_path`).

A game opts in through its plugin hook ``fast_search``: ``(game, encoder=None) -> (FastGame | None,
reason)`` (a hook may take the game alone: its compiled encoder is then the game's default one).
:class:`FastGame` is defined with the games (:mod:`omega_cluster.games.fast`, so that a game's
package, below the search in the layers, can build one) and re-exported here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import weakref
from dataclasses import dataclass
from typing import Any

from omega_cluster._optional import numba_available
from omega_cluster.games.api import Game
from omega_cluster.games.fast import CHANCE_NODE, OVER, FastGame
from omega_cluster.games.registry import game_plugin
from omega_cluster.search._ismcts_config import ISMCTSConfig
from omega_cluster.search._ismcts_root import tree_root

__all__ = [
    "CHANCE_NODE",
    "CRITIC_LEAF",
    "OVER",
    "RANDOM_ROLLOUT",
    "FastGame",
    "FastLeaf",
    "LeafPlan",
    "evaluator_path",
    "fast_game",
    "fast_path",
]

_LEAF_ROLLOUT_SEP = "+"
CRITIC_LEAF = "critic"  # the network's prior, the perfect-information critic's value
RANDOM_ROLLOUT = "random_rollout"  # the compiled uniform random playout (FastGame.rollouts' key)


@dataclass(frozen=True)
class FastLeaf:
    """The leaf the compiled tree evaluates: ``"network"``, a rollout name of the game's
    ``FastGame.rollouts`` (``"random_rollout"``), ``"network+<rollout>"``, whose value is
    ``network_value_weight · network + (1 - network_value_weight) · rollout`` (the prior comes
    from the network), or ``"critic"``: the network's prior and its perfect-information
    critic's value, which also reads the world's hidden codes (the game's ``hidden`` kernel)."""

    name: str
    network_value_weight: float = 1.0

    def __post_init__(self) -> None:
        parts = self.name.split(_LEAF_ROLLOUT_SEP)
        ok = (len(parts) == 1 and parts[0] != "") or (
            len(parts) == 2 and parts[0] == "network" and parts[1] not in ("", "network", "critic")
        )
        if not ok:
            raise ValueError(
                f"FastLeaf: leaf {self.name!r} must be 'network', 'critic', a rollout name "
                "(e.g. 'random_rollout') or 'network+<rollout>'"
            )
        w = self.network_value_weight
        if not (isinstance(w, (int, float)) and 0.0 <= w <= 1.0):
            raise ValueError(f"FastLeaf: network_value_weight must be in [0, 1], got {w!r}")

    @property
    def network(self) -> bool:
        """Whether the leaf asks the network (a forward pass per batch of leaves)."""
        return self.critic or self.name.split(_LEAF_ROLLOUT_SEP)[0] == "network"

    @property
    def critic(self) -> bool:
        """Whether the leaf's value is the critic's (its forward also takes hidden codes)."""
        return self.name == CRITIC_LEAF

    @property
    def rollout(self) -> str | None:
        """The rollout the leaf plays (None: the network alone)."""
        parts = self.name.split(_LEAF_ROLLOUT_SEP)
        if len(parts) == 2:
            return parts[1]
        return None if self.network else parts[0]


_CACHE: weakref.WeakKeyDictionary[Game, tuple[FastGame | None, str | None]] = (
    weakref.WeakKeyDictionary()
)
_BY_ENCODER: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()  # encoder -> cache


def fast_game(game: Game, encoder: Any = None) -> tuple[FastGame | None, str | None]:
    """The game's ``FastGame`` (its plugin hook ``fast_search``, built once per game object and
    encoder), or ``None`` and the reason there is none. With ``encoder`` (the network leaf's),
    the compiled encoder must stand in for it: a hook that takes the encoder decides; a hook
    that does not compiles the game's default encoder, so ``encoder`` must encode as that one."""
    if not numba_available():
        return None, "numba is not installed"
    cache: Any = _CACHE
    if encoder is not None:
        try:
            cache = _BY_ENCODER.setdefault(encoder, weakref.WeakKeyDictionary())
        except TypeError:
            cache = {}
    try:  # a game object that cannot be weakly referenced or hashed is not cached
        cached = cache.get(game)
    except TypeError:
        cached = None
    if cached is not None:
        return cached
    answer = _build(game, encoder)
    with contextlib.suppress(TypeError):
        cache[game] = answer
    return answer


def _build(game: Game, encoder: Any) -> tuple[FastGame | None, str | None]:
    plugin = game_plugin(game)
    hook = plugin.hook("fast_search")
    if hook is None:
        return None, f"{game.spec.name} has no compiled search (plugin hook fast_search)"
    takes_encoder = len(inspect.signature(hook).parameters) > 1
    fast, why = hook(game, encoder) if takes_encoder and encoder is not None else hook(game)
    if fast is None:
        return None, why or "no compiled search"
    if encoder is not None and not takes_encoder and fast.encode is not None:
        default = plugin.hook("encoder")
        same = default is not None and _same_encoding(default(game), encoder)
        if not same:
            fast = dataclasses.replace(fast, encode=None, ectx=None)
    return fast, None


def _same_encoding(a: Any, b: Any) -> bool:
    """Whether two encoders encode alike (same class and the same recorded layout)."""
    try:
        return type(a) is type(b) and a.info().to_json() == b.info().to_json()
    except (AttributeError, TypeError, ValueError):
        return False


def _config_obstacle(config: ISMCTSConfig, fast: FastGame) -> str | None:
    """The first option of ``config`` the compiled tree does not mirror (None: none); of
    ``world_constraints``, only the game's own deductions (``FastGame.world_constraints``)."""
    c = config
    own = c.world_constraints is fast.world_constraints and fast.constrain is not None
    for name, bad in (
        ("root_schedule (only tree_root)", c.root_schedule is not tree_root),
        ("selection='smooth_uct'", c.selection == "smooth_uct"),
        (
            "world_constraints other than the game's own deductions",
            c.world_constraints is not None and not own,
        ),
        ("leaves_in_flight > 1", c.leaves_in_flight != 1),
    ):
        if bad:
            return f"the compiled tree does not support {name}"
    return None


def fast_path(
    game: Game, config: ISMCTSConfig, leaf: FastLeaf | None, *, encoder: Any = None
) -> tuple[FastGame | None, str | None]:
    """The ``FastGame`` when the compiled tree mirrors this search exactly (game, configuration
    and leaf), else ``None`` and the first thing that prevents it."""
    if leaf is None:
        return None, "the evaluator is not a leaf the compiled tree has"
    fast, why = fast_game(game, encoder if leaf.network else None)
    if fast is None:
        return None, why
    obstacle = _config_obstacle(config, fast)
    if obstacle is not None:
        return None, obstacle
    if leaf.network and fast.encode is None:
        return None, f"{fast.name} has no compiled encoder for the network leaf's encoder"
    if leaf.critic and fast.hidden is None:
        return None, f"{fast.name} has no compiled hidden state for the critic leaf"
    rollout = leaf.rollout
    if rollout is not None and rollout not in fast.rollouts:
        have = ", ".join(sorted(fast.rollouts)) or "none"
        return None, f"{fast.name} has no compiled rollout {rollout!r} (compiled: {have})"
    return fast, None


@dataclass(frozen=True)
class LeafPlan:
    """What an evaluator amounts to on the compiled path: its :meth:`fast_leaf` answer.

    An evaluator that the compiled tree can stand in for implements ``fast_leaf() -> (LeafPlan |
    None, reason)``: the rollout evaluator (one rollout of a uniform random player or of a
    player the game compiles, e.g. the Commander), the network evaluator (the network leaf) and
    their blend with weights ``w`` and ``1 - w``. Any other evaluator, a user's included, has
    none, and its searches run the Python loop."""

    leaf: FastLeaf
    forward: Any = None  # the network leaf's forward(obs, feats, mask) -> (priors, values)
    # (the critic leaf's: forward(obs, feats, mask, hidden) -> (priors, critic values))
    encoder: Any = None  # the network's encoder (the compiled one must stand in for it)
    policy: Any = None  # the rollout's player (its own compiled playout, e.g. its weights)


def leaf_plan(evaluator: Any) -> tuple[LeafPlan | None, str]:
    """``evaluator.fast_leaf()``, or ``None`` and why the evaluator has no compiled leaf."""
    hook = getattr(evaluator, "fast_leaf", None)
    if not callable(hook):
        return None, f"the leaf {evaluator!r} has no compiled counterpart"
    plan, why = hook()
    return plan, why


def evaluator_path(
    game: Game, config: ISMCTSConfig, evaluator: Any
) -> tuple[FastGame | None, LeafPlan | None, str | None]:
    """:func:`fast_path` for a search with ``evaluator``: the ``FastGame`` (its rollout the
    evaluator's own player's where the game compiles one per player) and the evaluator's
    :class:`LeafPlan`, or ``None``s and the first thing that prevents the compiled path."""
    plan, why = leaf_plan(evaluator)
    if plan is None:
        return None, None, why
    fast, why2 = fast_path(game, config, plan.leaf, encoder=plan.encoder)
    if fast is None:
        return None, None, why2
    rollout = plan.leaf.rollout
    if rollout is not None and rollout != "random_rollout" and plan.policy is not None:
        entry = fast.rollout_for(plan.policy) if fast.rollout_for is not None else None
        if entry is None:
            return None, None, f"{fast.name} compiles no playout of {plan.policy!r}"
        fast = dataclasses.replace(fast, rollouts={**fast.rollouts, rollout: entry})
    return fast, plan, None
