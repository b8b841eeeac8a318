"""Self-play over a fleet (a mix of table sizes × objectives, omega_cluster/games/fleet.py).

Each game draws its table from the mix by (seed, game index), so a chunk replays the same tables;
every record carries its table's size and parameters (objective included) and replays on them;
the compiled searches (one batch per table) write the records the Python loop writes; the
encoders of every Mexican Train table size share one layout and one network reads rows of mixed
sizes; a game whose encoders differ by table size is refused with one line; the self-play worker
reports its games per slice; the warm start's labelled games are drawn over the same mix, in
the mix's shares.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from fast_helpers import ExactNet
from train_helpers import tiny_net

from omega_cluster.data import Record, ShardStore, table_to_records
from omega_cluster.games.api import CHANCE
from omega_cluster.games.fleet import Fleet, FleetError, fleet_for
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, encoder_for
from omega_cluster.players.leaf import LeafSpec
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import LearnerConfig, SelfPlay, SelfPlayConfig
from omega_cluster.train._tables import Table, table_games
from omega_cluster.train.warm_start import WarmStartConfig, warm_start
from omega_cluster.train.workers import (
    NetworkSpec,
    SelfPlayWorker,
    SelfPlayWorkerConfig,
    Weights,
    chunk_writer_id,
)

PARAMS = {"players": 2, "rounds": 1, "double_set": 9}
SMALL = {"hidden_size": 16, "num_layers": 1, "action_embedding_size": 8,
         "policy_hidden_size": 8, "value_hidden_size": 8}  # fmt: skip


def _fleet(sizes: dict[int, float]) -> Fleet:
    return fleet_for("mexican_train", PARAMS, sizes, ["points", "go_out"])


def _rollout_tables(fleet: Fleet) -> list[Table]:
    return [Table(s.key, g, e, RolloutEvaluator(RandomPlayer(g)))
            for s, g, e in table_games(fleet)]  # fmt: skip


def _index(record: Record) -> int:
    return int(record.game_id.rsplit("-", 1)[1])


def _check_tables(records: list[Record], fleet: Fleet, seed: int) -> Counter[str]:
    """Every record's table is its game's draw and its position replays there; games per slice."""
    games: dict[str, str] = {}
    for r in records:
        drawn = fleet.draw(seed, _index(r))
        params = json.loads(r.game_params)
        assert (r.num_players, params["objective"]) == (drawn.players, drawn.objective)
        assert r.returns.shape == (drawn.players,)
        state = make_game(r.game, **params).replay(r.game_seed, r.history)
        assert r.player in state.current_players
        assert r.legal_actions.tolist() == list(state.legal_actions(r.player))
        games[r.game_id] = drawn.key
    return Counter(games.values())


def test_each_game_draws_its_table_and_its_records_carry_it() -> None:
    fleet = _fleet({2: 1, 3: 1})
    config = SelfPlayConfig(games=8, concurrent_games=4, search=ISMCTSConfig(simulations=8),
                            fast_simulations=4, seed=5)  # fmt: skip
    runner = SelfPlay.over_fleet(fleet, _rollout_tables(fleet), config)
    assert runner.search_path == "compiled", runner.search_path
    records = list(runner.play())
    per_slice = _check_tables(records, fleet, seed=5)
    assert runner.stats.slices == {k: per_slice.get(k, 0) for k in fleet.keys}
    assert sum(runner.stats.slices.values()) == 8 and len(per_slice) >= 2
    again = list(SelfPlay.over_fleet(fleet, _rollout_tables(fleet), config).play())
    assert [(r.game_id, r.history, r.action) for r in again] == [
        (r.game_id, r.history, r.action) for r in records
    ]  # a retried chunk replays the same tables and games
    with pytest.raises(Exception, match="not the fleet's"):
        SelfPlay.over_fleet(fleet, _rollout_tables(fleet)[:1], config)


def test_the_compiled_searches_of_a_fleet_write_the_python_loop_s_records() -> None:
    """One batched search per table and decision round; the records equal the Python loop's."""
    fleet = _fleet({2: 1, 4: 1})
    nets: dict[str, ExactNet] = {}
    tables = []
    for s, g, e in table_games(fleet):
        nets[s.key] = ExactNet(g, e, scale=0.05)
        tables.append(Table(s.key, g, e, nets[s.key]))
    config = SelfPlayConfig(games=6, concurrent_games=6, search=ISMCTSConfig(simulations=16,
                            selection="puct"), fast_simulations=4, full_search_probability=0.5,
                            seed=2)  # fmt: skip
    fast = SelfPlay.over_fleet(fleet, tables, config)
    assert fast.search_path == "compiled"
    records = list(fast.play())
    python = SelfPlay.over_fleet(fleet, tables, config, fast=False)
    assert python.search_path.startswith("python: ") and "players=2" in python.search_path
    expected = list(python.play())
    assert len(records) == len(expected) > 0
    for a, b in zip(records, expected, strict=True):
        assert (a.game_id, a.history, a.player, a.action) == (b.game_id, b.history, b.player,
                                                              b.action)  # fmt: skip
        assert a.game_params == b.game_params and a.policy_weight == b.policy_weight
        assert np.array_equal(a.observation, b.observation)
        assert np.array_equal(a.policy_target, b.policy_target)
        assert np.allclose(a.root_value, b.root_value, atol=1e-6)
    assert len({r.num_players for r in records}) == 2
    played = [n.calls for n in nets.values() if n.calls]
    assert len(played) >= 2 and max(max(c) for c in played) > 1  # a table's games share batches


def test_every_mexican_train_table_size_has_one_layout_and_one_network_reads_them_all() -> None:
    encoders = {n: encoder_for(make_game("mexican_train", players=n)) for n in range(2, 9)}
    sizes = {(e.observation_size, e.action_feature_size, e.max_players) for e in encoders.values()}
    assert len(sizes) == 1 and next(iter(sizes))[2] == 8
    infos = {n: e.info() for n, e in encoders.items()}
    assert all(i.observation_layout == infos[2].observation_layout for i in infos.values())
    net = tiny_net(make_game("mexican_train"), encoders[2], **SMALL)
    obs, feats, legal = [], [], []
    for n, encoder in encoders.items():  # a position of every table size, encoded by its encoder
        game = make_game("mexican_train", players=n, rounds=1)
        state = game.new_initial_state(n)
        while state.current_players[0] == CHANCE:  # the deal
            state.apply_action(state.chance_outcomes()[0][0])
        player = state.current_players[0]
        moves = list(state.legal_actions(player))
        obs.append(encoder.encode_observation(state, player))
        feats.append(encoder.encode_actions(state, player, moves))
        legal.append(len(moves))
    width = max(legal)
    padded = np.zeros((len(feats), width, feats[0].shape[1]), np.float32)
    for k, f in enumerate(feats):
        padded[k, : len(f)] = f
    mask = torch.arange(width)[None, :] < torch.tensor(legal)[:, None]
    with torch.no_grad():
        out = net(torch.from_numpy(np.stack(obs)), torch.from_numpy(padded), mask)
    assert out.values.shape == (7, 8) and torch.isfinite(out.values).all()
    assert torch.isfinite(out.logits[mask]).all() and torch.isinf(out.logits[~mask]).all()


def test_a_fleet_whose_encoders_differ_by_table_size_is_refused_in_one_line() -> None:
    fleet = fleet_for("kuhn_poker", {"players": 2}, {2: 1, 3: 1})
    with pytest.raises(FleetError, match=r"^game\.fleet: one network .* 2 players .* 3 players"):
        table_games(fleet)
    spec = NetworkSpec("kuhn_poker", {"players": 3}, ModelConfig(), fleet=fleet)
    with pytest.raises(FleetError, match=r"at 3 players \(17 observation.* at 2 players"):
        spec.table_games()  # the network's own table (game.params) is the reference


def _worker(tmp_path: Path, fleet: Fleet) -> tuple[SelfPlayWorker, Weights]:
    game = make_game("mexican_train", **PARAMS)
    model = ModelConfig.for_encoder(encoder_for(game), game, **SMALL)  # type: ignore[arg-type]
    spec = NetworkSpec("mexican_train", PARAMS, model, fleet=fleet)
    config = SelfPlayWorkerConfig(spec, LeafSpec("network"), SelfPlayConfig(
        concurrent_games=8, search=ISMCTSConfig(simulations=8, selection="puct"),
        fast_simulations=4), run_seed=3)  # fmt: skip
    worker = SelfPlayWorker(config, actor=0, store_uri=str(tmp_path))
    return worker, Weights.of(worker.model, version=0, uri="")


def test_the_worker_plays_the_mix_with_one_network_and_its_shard_counts_games_per_table(
    tmp_path: Path,
) -> None:
    fleet = _fleet({2: 1, 3: 1})
    worker, weights = _worker(tmp_path, fleet)
    report = worker.play_chunk(weights, 4, 8)
    assert report.search_path == "compiled" and report.games == 8
    (entry,) = worker.store.entries()
    assert entry.writer_id == chunk_writer_id(4)
    records = table_to_records(worker.store.read(entry))
    seed = records[0].game_id.split("-")[1]
    per_slice = _check_tables(records, fleet, seed=int(seed))
    tables = {fleet.key_of(players, params): n for players, params, n in entry.tables or ()}
    assert tables == dict(per_slice) and sum(tables.values()) == 8
    replayed = worker.play_chunk(weights, 4, 8, retry=True)
    assert replayed.replayed and replayed.games == report.games
    evaluators: list[Any] = [t.evaluator for t in worker._tables]
    assert len({id(e.model) for e in evaluators}) == 1  # one network at every table


def test_the_warm_start_draws_its_teacher_s_games_over_the_mix_in_its_shares(
    tmp_path: Path,
) -> None:
    fleet = fleet_for("mexican_train", PARAMS, {2: 1, 4: 3}, ["points", "go_out"])
    game = make_game("mexican_train", **PARAMS)
    encoder = encoder_for(game)
    learner = LearnerConfig(batch_size=16, device="cpu", seed=11)
    config = WarmStartConfig(games=160, steps=2, learner=learner, fleet=fleet)
    stats = warm_start(config, game, encoder, tiny_net(game, encoder, **SMALL), tmp_path)
    assert stats.games == 160 and stats.teacher
    (entry,) = ShardStore(str(tmp_path)).entries()
    records = table_to_records(ShardStore(str(tmp_path)).read(entry))
    per_slice = _check_tables(records, fleet, seed=11)
    assert sum(per_slice.values()) == 160
    for s in fleet.slices:  # shares 1/8, 1/8, 3/8, 3/8; sd over 160 games below 0.04
        assert abs(per_slice[s.key] / 160 - s.weight) < 0.12, (s.key, per_slice)


def test_the_draw_covers_the_whole_mix_in_its_shares() -> None:
    fleet = fleet_for("mexican_train", PARAMS, {2: 1, 3: 1, 4: 2, 6: 1, 8: 1}, ["points", "go_out"])
    drawn = Counter(fleet.draw(7, i).key for i in range(3000))
    for s in fleet.slices:  # sd of a share over 3000 draws: below 0.01
        assert abs(drawn[s.key] / 3000 - s.weight) < 0.03, (s.key, drawn)
    assert fleet.draw(7, 12) == fleet.draw(7, 12)


def test_a_run_without_a_fleet_plays_the_records_it_played_before() -> None:
    """The worker's one-table fleet (no game.fleet) writes what one game's self-play writes."""
    game = make_game("mexican_train", **PARAMS)
    (table,) = _rollout_tables(fleet_for("mexican_train", PARAMS))
    config = SelfPlayConfig(games=4, concurrent_games=4, search=ISMCTSConfig(simulations=8),
                            fast_simulations=4, full_search_probability=0.5, seed=9)  # fmt: skip
    alone = SelfPlay(game, encoder_for(game), config, evaluator=table.evaluator)
    records = list(alone.play())
    fleet = list(SelfPlay.over_fleet(fleet_for("mexican_train", PARAMS), [table], config).play())
    assert len(records) == len(fleet) > 0
    for a, b in zip(records, fleet, strict=True):
        assert (a.game_id, a.game_params, a.history, a.action) == (b.game_id, b.game_params,
                                                                   b.history, b.action)  # fmt: skip
        assert np.array_equal(a.policy_target, b.policy_target)
    assert alone.stats.slices == {"players=2,objective=points": 4}
