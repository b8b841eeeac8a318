"""ISMCTS configuration: :class:`ISMCTSConfig`, every knob with its meaning, validated on
construction (errors name the field and the allowed range). Re-exported by
:mod:`omega_cluster.search.ismcts`, which documents the algorithm.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omega_cluster.fields import FieldError, budget_problem
from omega_cluster.games.api import State
from omega_cluster.search._defaults import C_UCT, SIMULATIONS
from omega_cluster.search._ismcts_root import RootSchedule, tree_root
from omega_cluster.search._layout import ismcts_bytes

__all__ = ["ISMCTSConfig", "WorldConstraints", "simulation_bytes"]

WorldConstraints = Callable[[State, int], Any]
"""``(state, player) -> constraints``: public deductions about hidden information, passed to every
``state.sample_world(player, rng, constraints)`` of a search (``None``: no deductions); a game
gives its own as the plugin hook ``world_constraints`` (the search players' ``deduce=true``)."""

_SELECTIONS = ("uct", "puct", "smooth_uct")


def simulation_bytes(simulations: int, searches: int = 1) -> int:
    """The least bytes ``searches`` ISMCTS trees of ``simulations`` take: the compiled tree's
    arrays on the smallest game (:func:`~omega_cluster.search._layout.ismcts_bytes`; the Python
    tree's objects are larger)."""
    return ismcts_bytes(searches, simulations)


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"ISMCTSConfig.{name} must be an int >= {minimum}, got {value!r}")


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

    simulations: int = SIMULATIONS  # total simulations per search
    selection: str = "uct"  # "uct" | "puct" (PUCT uses the evaluator's prior; uniform if none) |
    # "smooth_uct" (UCT mixed with the node's average policy: converges in imperfect-information
    # games, where UCT's visits need not; _ismcts_bandit)
    c_uct: float = C_UCT  # UCT exploration constant: mean + c·sqrt(ln N_available / n)
    c_puct: float = 1.5  # PUCT constant: mean + c·prior·sqrt(N_available) / (1 + n)
    root_schedule: RootSchedule = tree_root  # how the root spends the budget: tree_root |
    # paired_root (every root move on the same worlds) | a function of one's own (_ismcts_root)
    temperature: float = 0.0  # 0: play the final policy's argmax; > 0: sample ∝ visits^(1/T)
    dirichlet_alpha: float = 0.3  # root noise concentration (AlphaZero: ~10 / typical branching)
    dirichlet_fraction: float = 0.0  # weight of the noise in the root prior; 0 = off (PUCT only)
    leaves_in_flight: int = 1  # > 1: select several leaves per yield, with virtual loss
    world_constraints: WorldConstraints | None = None  # deductions every determinization honours

    def __post_init__(self) -> None:
        self._check_budget()
        self._check_selection()
        self._check_tree_shape()
        self._check_hooks()

    def _check_budget(self) -> None:
        """The simulations: an int >= 1 whose tree fits in memory (its compiled arrays on the
        smallest game: the least any search of that budget takes)."""
        _check_int("simulations", self.simulations, 1)
        problem = budget_problem(self.simulations, simulation_bytes, "the search tree")
        if problem is not None:
            raise FieldError.refuse("ISMCTSConfig", "simulations", self.simulations, problem)

    def _check_selection(self) -> None:
        """The bandit rule and its constants, the final policy and the root noise."""
        if self.selection not in _SELECTIONS:
            raise ValueError(
                f"ISMCTSConfig.selection must be one of {_SELECTIONS}, got {self.selection!r}"
            )
        _check_float("c_uct", self.c_uct, 0.0)
        _check_float("c_puct", self.c_puct, 0.0)
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
        """The leaves in flight."""
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
                ("dirichlet_fraction", self.dirichlet_fraction > 0.0),
            )
        if self.world_constraints is not None and not callable(self.world_constraints):
            raise ValueError(
                "ISMCTSConfig.world_constraints must be None or a callable (state, player) -> "
                f"constraints for sample_world, got {self.world_constraints!r}"
            )
