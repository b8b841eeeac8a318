"""Turning one finished self-play game into :class:`~omega_cluster.data.Record` rows.

Self-play (:mod:`.selfplay`) keeps a :class:`PendingDecision` per recorded decision while a game
runs (everything known at decision time: the encoded inputs, the search's visit distribution, the
chosen action); when the game ends, :func:`game_records` adds what only the end knows — the final
returns of every player and, where the game has rounds, each decision's **round outcome**: per-round
credit assignment (label each decision by its round's outcome, not the campaign winner: campaign
points are the sum of independent rounds, so the round's result is the target that the decision
actually affects) — and, where the encoder offers auxiliary heads with
end-of-round labels (Mexican Train: this round's pips per seat and who went out), each decision's
flat **aux targets** (:func:`aux_targets`). Each decision also keeps the **hidden state** the
true position held for the acting player (``State.hidden_state``: the other hands, the boneyard),
taken at decision time: a training-only column that no player or search ever reads.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.data import Record
from omega_cluster.games.api import Game, HistoryEntry, State

__all__ = [
    "PendingDecision",
    "aux_targets",
    "game_params_json",
    "game_records",
    "round_outcomes",
]


def game_params_json(game: Game) -> str:
    """The resolved parameters as sorted JSON (``make_game(name, **json.loads(...))`` rebuilds)."""
    return json.dumps(_plain(dict(game.params)), sort_keys=True)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, eq=False)
class PendingDecision:
    """A decision of a game still in progress (the targets that need the end come later)."""

    history: tuple[HistoryEntry, ...]  # the actions before this decision
    player: int  # the acting seat
    observation: np.ndarray  # float32[D], encoded for ``player``
    legal: np.ndarray  # int32[L], ascending
    features: np.ndarray | None  # float32[L, F]
    policy: np.ndarray | None  # float32[L]: visit distribution; None without search
    policy_weight: float  # 1: a full search (policy target); 0: a fast one or no search
    action: int  # the action played
    root_value: np.ndarray | None  # float32[N]: the search's (or network's) root value
    hidden_state: np.ndarray | None = None  # float32[H]: the TRUE state's hidden_state(player)


def round_outcomes(state: State, history_indices: Sequence[int]) -> list[np.ndarray | None]:
    """Per decision (by the index of its history entry), the win share of its round per player.

    Games that publish ``round_results`` and ``round_of_decision`` (Mexican Train) get the round
    winners of ``RoundResult.round_winners(objective)`` sharing 1 (a blocked go-out round: all
    zero); every other game gets ``None`` (the learner then falls back to the final returns).
    """
    results = getattr(state, "round_results", None)
    locate = getattr(state, "round_of_decision", None)
    if results is None or locate is None:
        return [None] * len(history_indices)
    n = state.game.num_players
    objective = state.game.spec.objective
    shares: dict[int, np.ndarray] = {}
    out: list[np.ndarray | None] = []
    for index in history_indices:
        r = int(locate(index))
        if r not in shares:
            if r >= len(results):  # the round never finished (cannot happen at a game's end)
                raise ValueError(f"decision at history index {index} is in unfinished round {r}")
            winners = results[r].round_winners(objective)
            vector = np.zeros(n, np.float32)
            for w in winners:
                vector[w] = 1.0 / len(winners)
            shares[r] = vector
        out.append(shares[r])
    return out


def aux_targets(
    final: State, decisions: Sequence[PendingDecision], encoder: object | None
) -> list[np.ndarray | None]:
    """Per decision, the flat aux targets of ``encoder.aux_target_vector(final, history index,
    player)`` (the record column ``aux_targets``); all None when the encoder has no such method."""
    vector = getattr(encoder, "aux_target_vector", None)
    if vector is None:
        return [None] * len(decisions)
    return [np.asarray(vector(final, len(d.history), d.player), np.float32) for d in decisions]


def game_records(
    final: State,
    decisions: Sequence[PendingDecision],
    *,
    game_seed: int,
    game_id: str,
    params_json: str,
    champion_version: int,
    encoder_version: int,
    actor: str,
    weight: float = 1.0,
    encoder: object | None = None,
) -> list[Record]:
    """The finished game's decisions as records (returns, round outcomes and, with an encoder
    that offers them, aux targets filled in)."""
    game = final.game
    returns = np.asarray(final.returns(), np.float32)
    rounds = round_outcomes(final, [len(d.history) for d in decisions])
    aux = aux_targets(final, decisions, encoder)
    return [
        Record(
            game=game.spec.name,
            game_params=params_json,
            game_seed=game_seed,
            history=d.history,
            decision_index=i,
            player=d.player,
            num_players=game.num_players,
            champion_version=champion_version,
            encoder_version=encoder_version,
            observation=d.observation,
            legal_actions=d.legal,
            action_features=d.features,
            policy_target=d.policy,
            policy_weight=d.policy_weight,
            action=d.action,
            returns=returns,
            round_outcome=round_outcome,
            root_value=d.root_value,
            weight=weight,
            actor=actor,
            game_id=game_id,
            aux_targets=aux_target,
            hidden_state=d.hidden_state,
        )
        for i, (d, round_outcome, aux_target) in enumerate(zip(decisions, rounds, aux, strict=True))
    ]
