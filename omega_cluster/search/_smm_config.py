"""SM-MCTS configuration: :class:`SMMCTSConfig`, every knob with its meaning, validated on
construction (errors name the field and the allowed values), the selection rules by name and the
opponent-policy hook's type. Re-exported by :mod:`omega_cluster.search.smmcts`, which documents
the algorithm.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from omega_cluster.games.api import State
from omega_cluster.search import _bandits
from omega_cluster.search._defaults import C_UCT, SIMULATIONS

__all__ = ["SELECTION_RULES", "OpponentPolicy", "SMMCTSConfig"]

OpponentPolicy = Callable[[State, int, random.Random], int]
"""``(state, player, rng) -> action``: picks ``player``'s action at a node in place of its bandit."""
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
    c_uct: float = C_UCT  # UCB1 exploration constant, on rewards rescaled to [0, 1]
    exp3_gamma: float = 0.1  # Exp3 uniform exploration γ in (0, 1]; learning rate η = γ/K
    rm_gamma: float = 0.1  # regret-matching uniform exploration γ in [0, 1]
    final_strategy: str = "visits"  # the returned mixed strategy: "visits" = normalised root visit
    # counts (any rule); "average" = the average strategy with exploration removed (Exp3, RM;
    # for UCB it equals "visits"). Use "average" with Exp3/RM for an equilibrium estimate.
    temperature: float = 1.0  # the action is drawn from policy^(1/T); 0 = argmax (random ties)
    pw_c: float | None = None  # progressive widening per player: a bandit visited n times
    pw_alpha: float = 0.5  # considers k = max(1, ceil(pw_c · n^pw_alpha)) actions (None: all)
    reuse_tree: bool = False  # keep the subtree of the move actually played for the next search
    opponent_policy: OpponentPolicy | None = None  # picks every other player's action in the tree

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
        if self.time_limit_s is not None and not number("time_limit_s") > 0:
            raise bad("time_limit_s", "None or a number > 0")
        if self.selection not in SELECTION_RULES:
            raise bad("selection", ", ".join(repr(k) for k in SELECTION_RULES))
        if number("c_uct") < 0:
            raise bad("c_uct", "a number >= 0")
        if not 0 < number("exp3_gamma") <= 1:
            raise bad("exp3_gamma", "a number in (0, 1]")
        if not 0 <= number("rm_gamma") <= 1:
            raise bad("rm_gamma", "a number in [0, 1]")
        if self.final_strategy not in _FINAL:
            raise bad("final_strategy", ", ".join(repr(k) for k in _FINAL))
        if number("temperature") < 0:
            raise bad("temperature", "a number >= 0 (0 = argmax)")
        if self.pw_c is not None and not number("pw_c") > 0:
            raise bad("pw_c", "None (no widening) or a number > 0")
        if not 0 < number("pw_alpha") <= 1:
            raise bad("pw_alpha", "a number in (0, 1]")
        if not isinstance(self.reuse_tree, bool):
            raise bad("reuse_tree", "True or False")
        if self.opponent_policy is not None and not callable(self.opponent_policy):
            raise bad("opponent_policy", "None or a callable (state, player, rng) -> action")
