"""SM-MCTS configuration: :class:`SMMCTSConfig`, every knob with its meaning, validated on
construction (errors name the field and the allowed values), and the selection rules by name.
Re-exported by :mod:`omega_cluster.search.smmcts`, which documents
the algorithm.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from omega_cluster.fields import FieldError, budget_problem
from omega_cluster.search import _bandits
from omega_cluster.search._defaults import C_UCT, SIMULATIONS
from omega_cluster.search._layout import smm_bytes

__all__ = ["SELECTION_RULES", "SMMCTSConfig"]

SELECTION_RULES = {
    "ucb": _bandits.UCB,
    "exp3": _bandits.EXP3,
    "regret_matching": _bandits.REGRET_MATCHING,
}
_FINAL = ("visits", "average")


@dataclass(frozen=True, kw_only=True)
class SMMCTSConfig:
    """Tuning knobs of :class:`~.smmcts.SMMCTS` (validated on construction)."""

    simulations: int = SIMULATIONS  # iterations per search (>= 1); the budget
    time_limit_s: float | None = None  # also stop after this many seconds (first limit wins);
    # a time limit makes the result depend on the machine, not only on the rng
    selection: str = "ucb"  # per-player rule: "ucb" (decoupled UCB1), "exp3", "regret_matching"
    # (Exp3 and regret matching explore uniformly with γ = _bandits.GAMMA = 0.1)
    c_uct: float = C_UCT  # UCB1 exploration constant, on rewards rescaled to [0, 1]
    final_strategy: str = "visits"  # the returned mixed strategy: "visits" = normalised root visit
    # counts (any rule); "average" = the average strategy with exploration removed (Exp3, RM;
    # for UCB it equals "visits"). Use "average" with Exp3/RM for an equilibrium estimate.
    temperature: float = 1.0  # the action is drawn from policy^(1/T); 0 = argmax (random ties)

    def __post_init__(self) -> None:
        def bad(key: str, allowed: str) -> ValueError:
            return ValueError(
                f"SMMCTSConfig.{key}={getattr(self, key)!r} is invalid; allowed: {allowed}"
            )

        def number(key: str) -> float:
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise bad(key, "a finite number")
            return float(v)

        sims = self.simulations
        if isinstance(sims, bool) or not isinstance(sims, int) or sims < 1:
            raise bad("simulations", "an int >= 1 (the budget must be positive)")
        # its compiled tree on the smallest game: the least any search of that budget takes (a
        # time limit stops the search first: its tree, the Python one, grows as it runs)
        problem = budget_problem(sims, lambda n: smm_bytes(1, n), "the search tree")
        if problem is not None and self.time_limit_s is None:
            raise FieldError.refuse("SMMCTSConfig", "simulations", sims, problem)
        if self.time_limit_s is not None and not number("time_limit_s") > 0:
            raise bad("time_limit_s", "None or a number > 0")
        if self.selection not in SELECTION_RULES:
            raise bad("selection", ", ".join(repr(k) for k in SELECTION_RULES))
        if number("c_uct") < 0:
            raise bad("c_uct", "a number >= 0")
        if self.final_strategy not in _FINAL:
            raise bad("final_strategy", ", ".join(repr(k) for k in _FINAL))
        if number("temperature") < 0:
            raise bad("temperature", "a number >= 0 (0 = argmax)")
