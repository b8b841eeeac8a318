"""Synthetic records of a chosen size, for tests and benchmarks of the data layer.

The rows are random but valid (:class:`.schema.Record` checks them): observations of ``D`` floats,
``L`` legal actions (varying per row when ``vary_legal``) with ``F`` features each, a visit
distribution, returns summing to zero, a history mixing single and joint actions, and (with
``aux_size``) flat aux targets on every other row and (with ``hidden_size``) a hidden state of
location codes on every third row. Every call's games are new: their ids hold a number counted
per process (``<actor>-<call>-<game>``, 40 rows a game), so shards of several calls never store
one game twice (:meth:`.shards.ShardStore.commit` refuses that).
"""

from __future__ import annotations

import itertools
import json

import numpy as np

from omega_cluster.data.schema import HistoryEntry, Record

__all__ = ["synthetic_records"]

_CALLS = itertools.count()  # numbers each call's games (no rng draw: the rows stay as seeded)


def synthetic_records(
    count: int,
    rng: np.random.Generator,
    *,
    observation_size: int = 300,
    num_legal: int = 10,
    feature_size: int | None = 16,
    num_players: int = 2,
    num_actions: int = 64,
    history_length: int = 20,
    vary_legal: bool = True,
    game: str = "synthetic",
    champion_version: int = 0,
    encoder_version: int = 1,
    actor: str = "synthetic",
    aux_size: int | None = None,
    hidden_size: int | None = None,
) -> list[Record]:
    """``count`` valid records; ``vary_legal`` draws L in 1..num_legal per row (else exactly L)."""
    if not 1 <= num_legal <= num_actions:
        raise ValueError(f"num_legal must be in 1..num_actions={num_actions}, got {num_legal}")
    records = []
    call = next(_CALLS)
    for index in range(count):
        size = int(rng.integers(1, num_legal + 1)) if vary_legal else num_legal
        legal = np.sort(rng.choice(num_actions, size=size, replace=False)).astype(np.int32)
        visits = rng.random(size).astype(np.float32)
        returns = rng.normal(size=num_players).astype(np.float32)
        returns -= returns.mean()
        history = _history(rng, history_length, num_actions)
        features = None
        if feature_size is not None:
            features = rng.normal(size=(size, feature_size)).astype(np.float32)
        records.append(
            Record(
                game=game,
                game_params=json.dumps({"players": num_players}, sort_keys=True),
                game_seed=int(rng.integers(0, 2**62)),
                history=history,
                decision_index=index,
                player=index % num_players,
                num_players=num_players,
                champion_version=champion_version,
                encoder_version=encoder_version,
                observation=rng.normal(size=observation_size).astype(np.float32),
                legal_actions=legal,
                action_features=features,
                policy_target=visits / visits.sum(),
                policy_weight=float(index % 4 != 3),  # playout cap: every 4th is a fast search
                action=int(rng.choice(legal)),
                returns=returns,
                round_outcome=returns * 0.5 if index % 2 else None,
                root_value=np.tanh(returns) if index % 3 else None,
                weight=float(rng.uniform(0.5, 1.5)),
                actor=actor,
                game_id=f"{actor}-{call}-{index // 40}",
                aux_targets=None
                if aux_size is None or index % 2
                else rng.random(aux_size).astype(np.float32),
                hidden_state=None
                if hidden_size is None or index % 3
                else rng.integers(0, num_players + 1, hidden_size).astype(np.float32),
            )
        )
    return records


def _history(rng: np.random.Generator, length: int, num_actions: int) -> tuple[HistoryEntry, ...]:
    """Random action ids, every fifth a joint action of two players."""
    return tuple(
        tuple(int(a) for a in rng.integers(0, num_actions, size=2))
        if step % 5 == 4
        else int(rng.integers(0, num_actions))
        for step in range(length)
    )
