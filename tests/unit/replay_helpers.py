"""A tiny run directory for the game viewer's tests: real Arrow shards of real games.

:func:`make_run` plays a few games (chance drawn, every seat uniformly random), records each
decision as self-play does (the seed, the history before it, the legal moves, a visit
distribution, the move played, the final returns) and writes them with the data layer's
:class:`~omega_cluster.data.ShardWriter` into ``<run>/shards``, beside a ``pipeline.json`` with
ratings, an ``elo_log.jsonl`` and a ``plots/rating.png``, as a training run leaves them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from omega_cluster.data import Record, ShardStore, ShardWriter
from omega_cluster.games.api import CHANCE
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.registry import make_game

# a 1x1 PNG (what matters is that the bytes come back unchanged)
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


def play_records(name: str, params: dict, seed: int, game_id: str) -> list[Record]:
    """One random game of ``name`` as self-play records (visits: a fixed peaked distribution)."""
    game = make_game(name, **params)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    pending = []
    while not state.is_terminal():
        (actor,) = state.current_players
        if actor == CHANCE:
            state.apply_action(sample_chance(state.chance_outcomes(), rng.random()))
            continue
        legal = np.asarray(sorted(state.legal_actions(actor)), np.int32)
        visits = np.linspace(1.0, 2.0, legal.size, dtype=np.float32)
        action = int(rng.choice(legal.tolist()))
        pending.append((tuple(state.history), actor, legal, visits / visits.sum(), action))
        state.apply_action(action)
    returns = np.asarray(state.returns(), np.float32)
    return [
        Record(
            game=game.spec.name,
            game_params=json.dumps(params, sort_keys=True),
            game_seed=seed,
            history=history,
            decision_index=i,
            player=actor,
            num_players=game.num_players,
            champion_version=1,
            encoder_version=1,
            observation=np.zeros(3, np.float32),
            legal_actions=legal,
            action_features=None,
            policy_target=visits,
            policy_weight=1.0,
            action=action,
            returns=returns,
            round_outcome=None,
            root_value=returns * 0.5,
            weight=1.0,
            actor="test",
            game_id=game_id,
        )
        for i, (history, actor, legal, visits, action) in enumerate(pending)
    ]


def make_run(
    root: Path,
    name: str = "kuhn-run",
    games: int = 3,
    game: str = "kuhn_poker",
    params: dict | None = None,
) -> Path:
    """A run directory with ``games`` games (ids ``<prefix>-<g>``, seeds ``100 + g``) in two
    shards of whole games (one when ``games`` is 1), ratings and a plot; Kuhn heads-up unless told otherwise."""
    run = root / name
    params = {"players": 2} if params is None else params
    prefix = game.split("_")[0]
    writer = ShardWriter(ShardStore(run / "shards"), writer_id="test")
    per_game = [play_records(game, params, 100 + g, f"{prefix}-{g}") for g in range(games)]
    half = (games + 1) // 2  # whole games per shard: the store holds each game once
    writer.write([r for rs in per_game[:half] for r in rs])
    if per_game[half:]:
        writer.write([r for rs in per_game[half:] for r in rs])
    rating = {"version": 1, "rating": "anchored", "objective": "default", "player": "network",
              "elo": 1234.0, "low": 1100.0, "high": 1350.0, "games": 20}  # fmt: skip
    state = {"game": game, "games": games, "promotions": 1, "ratings": [rating]}
    (run / "pipeline.json").write_text(json.dumps(state))
    gate = {"version": 1, "parent": 0, "elo": 1300.0, "promoted": True}
    (run / "elo_log.jsonl").write_text(json.dumps(rating) + "\n" + json.dumps(gate) + "\n")
    (run / "plots").mkdir()
    (run / "plots" / "rating.png").write_bytes(PNG)
    return run
