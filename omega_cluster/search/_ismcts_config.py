"""ISMCTS configuration: :class:`ISMCTSConfig`, every knob with its meaning, validated on
construction (errors name the field and the allowed range). Re-exported by
:mod:`omega_cluster.search.ismcts`, which documents the algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omega_cluster.games.api import State
from omega_cluster.search._defaults import C_UCT, SIMULATIONS
from omega_cluster.search._ismcts_root import RootSchedule, tree_root

__all__ = ["ISMCTSConfig", "WorldConstraints"]

WorldConstraints = Callable[[State, int], Any]
"""``(state, player) -> constraints``: public deductions about hidden information, passed to every
``state.sample_world(player, rng, constraints)`` of a search (``None``: no deductions); a game
gives its own as the plugin hook ``world_constraints`` (the search players' ``deduce=true``)."""

_SELECTIONS = ("uct", "puct", "smooth_uct")
_FINAL_POLICIES = ("visits", "max_visits", "max_value")


def _check_int(name: str, value: Any, minimum: int, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        none = " or None" if optional else ""
        raise ValueError(f"ISMCTSConfig.{name} must be an int >= {minimum}{none}, got {value!r}")


def _check_float(
    name: str,
    value: Any,
    low: float,
    high: float = math.inf,
    *,
    open_low: bool = False,
) -> None:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = number and math.isfinite(value)
    if ok:
        ok = (value > low if open_low else value >= low) and value <= high
    if not ok:
        lo = f"> {low:g}" if open_low else f">= {low:g}"
        hi = "" if high == math.inf else f" and <= {high:g}"
        raise ValueError(f"ISMCTSConfig.{name} must be a finite number {lo}{hi}, got {value!r}")


def _refuse_clashes(what: str, *options: tuple[str, bool]) -> None:
    """A ValueError naming every option set (``(name, is set)``) that ``what`` excludes."""
    clash = [name for name, bad in options if bad]
    if clash:
        raise ValueError(f"ISMCTSConfig: {what}; it does not combine with {', '.join(clash)}")


@dataclass(frozen=True, kw_only=True)
class ISMCTSConfig:
    """Every knob of one ISMCTS; validated on construction (errors name the field and the range)."""

    simulations: int = SIMULATIONS  # total simulations per search (ignored when D×S is given)
    determinizations: int | None = None  # D worlds drawn with sample_world ...
    simulations_per_determinization: int | None = None  # ... each used for S simulations
    time_limit_s: float | None = None  # wall-clock budget; the search stops at the first limit
    selection: str = "uct"  # "uct" | "puct" (PUCT uses the evaluator's prior; uniform if none) |
    # "smooth_uct" (UCT mixed with the node's average policy: converges in imperfect-information
    # games, where UCT's visits need not; _ismcts_bandit)
    c_uct: float = C_UCT  # UCT exploration constant: mean + c·sqrt(ln N_available / n)
    c_puct: float = 1.5  # PUCT constant: mean + c·prior·sqrt(N_available) / (1 + n)
    root_schedule: RootSchedule = tree_root  # how the root spends the budget: tree_root |
    # paired_root (every root move on the same worlds) | a function of one's own (_ismcts_root)
    final_policy: str = "visits"  # "visits" (normalised) | "max_visits" | "max_value"
    temperature: float = 0.0  # 0: play the final policy's argmax; > 0: sample ∝ visits^(1/T)
    dirichlet_alpha: float = 0.3  # root noise concentration (AlphaZero: ~10 / typical branching)
    dirichlet_fraction: float = 0.0  # weight of the noise in the root prior; 0 = off (PUCT only)
    pw_base: float | None = None  # progressive widening: admitted = base + scale·sqrt(visits)
    pw_scale: float = 1.0  # (None: every candidate admitted at once)
    root_cap: int | None = None  # keep at most this many root candidates (+ must-keep actions)
    nonroot_cap: int | None = None  # the same below the root
    reuse_tree: bool = False  # keep the tree for this player's next move (reset() forgets it)
    leaves_in_flight: int = 1  # > 1: select several leaves per yield, with virtual loss
    world_constraints: WorldConstraints | None = None  # deductions every determinization honours

    def __post_init__(self) -> None:
        self._check_budget()
        self._check_selection()
        self._check_tree_shape()
        self._check_hooks()

    def _check_budget(self) -> None:
        """The simulations, the D×S pair (both or neither) and the time limit."""
        _check_int("simulations", self.simulations, 1)
        _check_int("determinizations", self.determinizations, 1, optional=True)
        _check_int(
            "simulations_per_determinization",
            self.simulations_per_determinization,
            1,
            optional=True,
        )
        if (self.determinizations is None) != (self.simulations_per_determinization is None):
            raise ValueError(
                "ISMCTSConfig: set both determinizations (D) and simulations_per_determinization "
                f"(S) for a D×S budget, or neither; got D={self.determinizations!r}, "
                f"S={self.simulations_per_determinization!r}"
            )
        if self.time_limit_s is not None:
            _check_float("time_limit_s", self.time_limit_s, 0.0, open_low=True)

    def _check_selection(self) -> None:
        """The bandit rule and its constants, the final policy and the root noise."""
        if self.selection not in _SELECTIONS:
            raise ValueError(
                f"ISMCTSConfig.selection must be one of {_SELECTIONS}, got {self.selection!r}"
            )
        _check_float("c_uct", self.c_uct, 0.0)
        _check_float("c_puct", self.c_puct, 0.0)
        if self.final_policy not in _FINAL_POLICIES:
            raise ValueError(
                f"ISMCTSConfig.final_policy must be one of {_FINAL_POLICIES}, "
                f"got {self.final_policy!r}"
            )
        _check_float("temperature", self.temperature, 0.0)
        _check_float("dirichlet_alpha", self.dirichlet_alpha, 0.0, open_low=True)
        _check_float("dirichlet_fraction", self.dirichlet_fraction, 0.0, 1.0)
        if self.dirichlet_fraction > 0.0 and self.selection != "puct":
            raise ValueError(
                "ISMCTSConfig: dirichlet_fraction > 0 perturbs the root prior, which only "
                "selection='puct' uses; set selection='puct' (a rollout evaluator gives a "
                "uniform prior) or dirichlet_fraction=0"
            )

    def _check_tree_shape(self) -> None:
        """Progressive widening, the candidate caps, tree reuse and the leaves in flight."""
        if self.pw_base is not None:
            _check_float("pw_base", self.pw_base, 0.0, open_low=True)
        _check_float("pw_scale", self.pw_scale, 0.0)
        _check_int("root_cap", self.root_cap, 1, optional=True)
        _check_int("nonroot_cap", self.nonroot_cap, 1, optional=True)
        if not isinstance(self.reuse_tree, bool):
            raise ValueError(f"ISMCTSConfig.reuse_tree must be a bool, got {self.reuse_tree!r}")
        _check_int("leaves_in_flight", self.leaves_in_flight, 1)

    def _check_hooks(self) -> None:
        """The functions passed in (root schedule, world constraints)."""
        if not callable(self.root_schedule):
            raise ValueError(
                "ISMCTSConfig.root_schedule must be a function (run) -> root move index, e.g. "
                f"tree_root or paired_root, got {self.root_schedule!r}"
            )
        if self.root_schedule is not tree_root:
            _refuse_clashes(
                "a root schedule other than tree_root draws its own worlds and compares the "
                "root's moves on them afresh",
                ("determinizations", self.determinizations is not None),
                ("reuse_tree", self.reuse_tree),
                ("dirichlet_fraction", self.dirichlet_fraction > 0.0),
            )
        if self.world_constraints is not None and not callable(self.world_constraints):
            raise ValueError(
                "ISMCTSConfig.world_constraints must be None or a callable (state, player) -> "
                f"constraints for sample_world, got {self.world_constraints!r}"
            )

    @property
    def budget(self) -> int:
        """Simulations per search: D×S when given, else ``simulations``."""
        if self.determinizations is not None and self.simulations_per_determinization is not None:
            return self.determinizations * self.simulations_per_determinization
        return self.simulations

    @property
    def simulations_per_world(self) -> int:
        return self.simulations_per_determinization or 1
