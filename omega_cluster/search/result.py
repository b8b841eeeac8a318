"""What a search returns: the policy target, the chosen move, the root value and diagnostics.

Shared by :mod:`.ismcts` and :mod:`.smmcts`; self-play records the visit distribution as the policy
target and the root value as the search's own value estimate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SearchDiagnostics", "SearchResult"]


@dataclass(frozen=True)
class SearchDiagnostics:
    """How the search went (for logs, benchmarks and tests)."""

    simulations: int  # simulations (iterations) run
    determinizations: int  # worlds drawn with sample_world (0 for perfect information)
    seconds: float  # wall-clock time of the search
    leaf_evaluations: int  # leaves sent to the evaluator
    tree_nodes: int  # nodes in the tree(s) after the search
    max_depth: int  # deepest selection path, in decisions
    depth_histogram: tuple[int, ...]  # int[d]: simulations whose selection path had depth d
    extra: dict[str, float] = field(default_factory=dict)  # search-specific figures

    @property
    def simulations_per_second(self) -> float:
        return self.simulations / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True)
class SearchResult:
    """The answer of one search for ``player`` at the root.

    ``policy`` is the final policy over ``legal``: the normalised visits for ISMCTS, the mixed
    strategy for SM-MCTS.
    """

    player: int  # whose move was searched
    action: int  # the chosen action (sampled from policy at temperature > 0, else its argmax)
    legal: tuple[int, ...]  # legal actions of player at the root, ascending
    policy: tuple[float, ...]  # float[len(legal)], sums to 1: the policy target
    visits: tuple[int, ...]  # int[len(legal)]: root visits per action
    action_values: tuple[
        float, ...
    ]  # float[len(legal)]: mean value for player per action (nan if unvisited)
    root_value: tuple[float, ...]  # float[N]: estimated return of every player at the root
    diagnostics: SearchDiagnostics

    def policy_dict(self) -> dict[int, float]:
        return dict(zip(self.legal, self.policy, strict=True))
