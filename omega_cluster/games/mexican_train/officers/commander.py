"""Commander, the strongest Mexican Train officer: a weighted sum of named heuristic terms.

Each legal move gets the feature vector of :func:`~omega_cluster.games.mexican_train.officers.terms.
move_features` (dumped pips, hand flexibility, own train, open doubles, Mexican and marked
trains, danger of an opponent going out, …); its score is ``Σ weight × feature`` with the
weights of :class:`~omega_cluster.games.mexican_train.officers.weights.CommanderWeights`. The best score is
played; ties go to the lowest action id, so the Commander is deterministic (``rng`` is unused) and
:meth:`Commander.act` always plays the first move of :meth:`Commander.explain`, which returns the
same scores split per term, so it can say in named terms why it plays a move.
Used as an arena anchor and as the rollout policy of ISMCTS (the rollout leaf); as the
latter it plays whole rounds compiled (:meth:`Commander.playout_returns`,
:mod:`~omega_cluster.games.mexican_train.officers._commander_jit`: the same moves, faster;
``bench/bench_officers.py`` measures by how much).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from omega_cluster._optional import numba_available
from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train.officers.lieutenant import check_mexican_train
from omega_cluster.games.mexican_train.officers.terms import (
    DEFAULT_CHAIN_BUDGET,
    move_features,
    move_scores,
)
from omega_cluster.games.mexican_train.officers.weights import TERMS, CommanderWeights

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState

__all__ = ["Commander", "MoveExplanation", "format_explanation"]


@dataclass(frozen=True)
class MoveExplanation:
    """One legal move and why the Commander scores it as it does."""

    action: int  # action id
    description: str  # game.describe_action(action), e.g. "6|4 on Mexican train"
    total: float  # the move's score: the sum of ``terms`` (in TERMS order)
    terms: Mapping[str, float] = field(hash=False)  # term -> weight × feature, every term
    features: Mapping[str, float] = field(hash=False)  # term -> raw feature value


def _score(weights: Sequence[float], features: Sequence[float]) -> float:
    """``Σ weight × feature`` in TERMS order (act and explain share it, so they agree exactly)."""
    total = 0.0
    for w, f in zip(weights, features, strict=True):
        total += w * f
    return total


def _compiled_commander(
    game: Game,
    weights: Sequence[float] | Sequence[Sequence[float]],
    danger: int | Sequence[int],
    budget: int,
) -> Any:
    """A :class:`~._commander_jit.CompiledCommander` (one set of weights, or one per seat)."""
    # numba is an optional dependency: the compiled module is imported only when it is used
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    return CompiledCommander(cast("MexicanTrainGame", game), weights, danger, budget)


class Commander:
    """Plays the legal move with the highest weighted sum of named terms (see the module doc).

    ``weights``: a :class:`CommanderWeights`, a mapping of its field names (unknown ones
    rejected) or a preset (:meth:`~omega_cluster.games.mexican_train.officers.weights.CommanderWeights.preset`:
    ``commander:weights=<preset name or .json path>``). ``chain_budget``: expansions of the longest-chain search
    per decision before it falls back to following the heaviest tile. ``compiled``: whether
    :meth:`playout_returns` runs compiled (``None``: when numba is installed).
    """

    name = "commander"

    def __init__(
        self,
        game: Game,
        *,
        weights: CommanderWeights | Mapping[str, Any] | str | None = None,
        chain_budget: int = DEFAULT_CHAIN_BUDGET,
        compiled: bool | None = None,
    ) -> None:
        self.game = check_mexican_train(game, "Commander")
        if weights is None:
            weights = CommanderWeights()
        elif isinstance(weights, str):
            weights = CommanderWeights.preset(weights)
        elif not isinstance(weights, CommanderWeights):
            weights = CommanderWeights.from_dict(weights)
        if isinstance(chain_budget, bool) or not isinstance(chain_budget, int) or chain_budget < 1:
            raise ValueError(f"chain_budget must be an int >= 1, got {chain_budget!r}")
        if compiled is not None and not isinstance(compiled, bool):
            raise ValueError(f"compiled must be None (automatic), True or False, got {compiled!r}")
        if compiled and not numba_available():
            raise ValueError("compiled=True needs numba (pip install 'omega-cluster[fast]')")
        self.weights = weights
        self.chain_budget = chain_budget
        self._vector = weights.vector()
        self.compiled = numba_available() if compiled is None else compiled
        self._jit: Any = None  # the CompiledCommander, built on first use

    def _features(self, state: State, player: int, legal: Sequence[int]) -> list[tuple[float, ...]]:
        return move_features(
            cast("MexicanTrainState", state),
            player,
            legal,
            danger_hand_size=self.weights.danger_hand_size,
            chain_budget=self.chain_budget,
        )

    def _scores(self, state: State, player: int, legal: Sequence[int]) -> list[float]:
        """Each legal move's score: the same floats as ``_score`` over the features, without
        building them."""
        return move_scores(
            cast("MexicanTrainState", state),
            player,
            legal,
            self._vector,
            danger_hand_size=self.weights.danger_hand_size,
            chain_budget=self.chain_budget,
        )

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if len(legal) == 1:
            return legal[0]
        scores = self._scores(state, player, legal)
        best, best_total = legal[0], float("-inf")
        for a, total in zip(legal, scores, strict=True):
            if total > best_total:  # strict: ties keep the lower action id
                best, best_total = a, total
        return best

    def playout_returns(self, state: State, rng: random.Random) -> tuple[float, ...] | None:
        """The returns after this Commander plays every seat from ``state`` (left unchanged)
        to the end, compiled — the very moves of ``play_out(state, [self] * n)``, faster —
        or ``None`` where the compiled playout does not reach (numba missing, ``compiled=False``,
        a campaign with rounds still to deal): the caller then plays in Python.
        :class:`~omega_cluster.search.evaluators.RolloutEvaluator` asks for it. ``rng`` is
        unused (the Commander is deterministic; the boneyard's order is in the state).
        """
        if not self.compiled:
            return None
        if self._jit is None:
            self._jit = _compiled_commander(
                self.game, self._vector, self.weights.danger_hand_size, self.chain_budget
            )
        return cast("tuple[float, ...] | None", self._jit.playout_returns(state))

    def explain(self, state: State, player: int) -> tuple[MoveExplanation, ...]:
        """Every legal move of ``player`` with its per-term contributions, best first.

        The order is (score descending, action id ascending): the first entry is what
        :meth:`act` plays.
        """
        legal = list(state.legal_actions(player))
        vector = self._vector
        out = []
        for a, f in zip(legal, self._features(state, player, legal), strict=True):
            out.append(
                MoveExplanation(
                    action=a,
                    description=self.game.describe_action(a),
                    total=_score(vector, f),
                    terms=MappingProxyType(
                        {name: w * x for name, w, x in zip(TERMS, vector, f, strict=True)}
                    ),
                    features=MappingProxyType(dict(zip(TERMS, f, strict=True))),
                )
            )
        out.sort(key=lambda m: (-m.total, m.action))
        return tuple(out)

    def __repr__(self) -> str:
        changed = {
            k: v for k, v in self.weights.as_dict().items() if v != getattr(CommanderWeights, k)
        }
        return f"Commander(weights={changed or 'defaults'})"


def format_explanation(
    moves: Sequence[MoveExplanation], *, top: int | None = None, all_terms: bool = False
) -> str:
    """A readable table: one block per move (best first), its total and its nonzero terms.

    ``top`` limits the number of moves shown; ``all_terms`` also lists zero contributions.
    """
    if top is not None and top < 1:
        raise ValueError(f"top must be None or an int >= 1, got {top!r}")
    lines = []
    for rank, m in enumerate(moves[:top] if top else moves, start=1):
        lines.append(f"{rank:>2}. {m.description:<28} total {m.total:+9.2f}  (action {m.action})")
        for name, value in sorted(m.terms.items(), key=lambda kv: -abs(kv[1])):
            if value or all_terms:
                lines.append(f"      {name:<18} {value:+9.2f}  (feature {m.features[name]:g})")
    return "\n".join(lines)
