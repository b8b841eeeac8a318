"""Search: ISMCTS for hidden information, SM-MCTS for simultaneous moves, pluggable batched leaves.

Both searches are written as resumable steps (generators that yield leaf requests), so many
searches in one process share one batched evaluator call (:mod:`.batching`).
"""

from omega_cluster.search.batched import BatchedSearch, Budget, batched_search
from omega_cluster.search.batching import BatchStats, run_search, run_searches
from omega_cluster.search.evaluators import (
    BlendEvaluator,
    Evaluator,
    EvaluatorError,
    FunctionEvaluator,
    HeuristicEvaluator,
    Leaf,
    LeafEvaluation,
    PriorEvaluator,
    RolloutEvaluator,
    check_evaluations,
)
from omega_cluster.search.ismcts import (
    ISMCTS,
    IllegalSearchStateError,
    ISMCTSConfig,
    RootRun,
    RootSchedule,
    paired_root,
    tree_root,
)
from omega_cluster.search.result import SearchDiagnostics, SearchResult
from omega_cluster.search.smmcts import SMMCTS, SMMCTSConfig

__all__ = [
    "ISMCTS",
    "SMMCTS",
    "BatchStats",
    "BatchedSearch",
    "BlendEvaluator",
    "Budget",
    "Evaluator",
    "EvaluatorError",
    "FunctionEvaluator",
    "HeuristicEvaluator",
    "ISMCTSConfig",
    "IllegalSearchStateError",
    "Leaf",
    "LeafEvaluation",
    "PriorEvaluator",
    "RolloutEvaluator",
    "RootRun",
    "RootSchedule",
    "SMMCTSConfig",
    "SearchDiagnostics",
    "SearchResult",
    "batched_search",
    "check_evaluations",
    "paired_root",
    "run_search",
    "run_searches",
    "tree_root",
]
