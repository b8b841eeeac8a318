"""Self-play: records that replay, determinism under concurrency, playout caps, per-round credit."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest
from train_helpers import leduc_records, tiny_net

from omega_cluster.data import Record, records_to_table
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import NetworkEvaluator, encoder_for
from omega_cluster.search import RolloutEvaluator
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import SelfPlay, SelfPlayConfig, SelfPlayError, play_games
from omega_cluster.train._records import round_outcomes
from omega_cluster.train.selfplay import TeacherEvaluator

SEARCH_KNOBS = (
    "simulations",
    "selection",
    "c_uct",
    "c_puct",
    "dirichlet_alpha",
    "dirichlet_fraction",
)


def _rollout_play(name: str, params: dict[str, object], **config: object) -> list[Record]:
    """Self-play with random rollouts; the search's own knobs go to its ISMCTSConfig."""
    game = make_game(name, **params)
    search = {k: config.pop(k) for k in SEARCH_KNOBS if k in config}
    cfg = SelfPlayConfig(search=ISMCTSConfig(**search), **config)  # type: ignore[arg-type]
    records, _ = play_games(
        game, encoder_for(game), cfg, evaluator=RolloutEvaluator(RandomPlayer(game))
    )
    return records


def test_records_replay_to_the_position_they_encode() -> None:
    game = make_game("leduc_poker")
    encoder = encoder_for(game)
    records = _rollout_play("leduc_poker", {}, games=12, concurrent_games=4, simulations=16)
    assert len(records) > 12
    by_game: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        state = game.replay(r.game_seed, r.history)
        assert state.current_players == (r.player,)
        assert r.legal_actions.tolist() == list(state.legal_actions(r.player))
        assert np.array_equal(r.observation, encoder.encode_observation(state, r.player))
        assert np.array_equal(
            r.action_features, encoder.encode_actions(state, r.player, r.legal_actions.tolist())
        )
        assert r.policy_target is not None and abs(float(r.policy_target.sum()) - 1.0) < 1e-5
        assert r.policy_weight == 1.0 and r.encoder_version == encoder.version
        assert r.root_value is not None and r.round_outcome is None  # Leduc has no rounds
        by_game[r.game_id].append(r)
    for rows in by_game.values():
        assert [r.decision_index for r in rows] == list(range(len(rows)))
        assert len({tuple(r.returns.tolist()) for r in rows}) == 1
        last = rows[-1]  # the last decision's action ends the hand: the returns are its outcome
        end = game.replay(last.game_seed, (*last.history, last.action))
        assert end.is_terminal() and tuple(last.returns.tolist()) == end.returns()
    records_to_table(records)  # the schema accepts them


def test_concurrent_games_give_the_same_records_as_one_at_a_time() -> None:
    """Searches yielding one leaf each are batched without changing what any search sees."""
    config = {"games": 6, "simulations": 12, "seed": 3}
    alone = _rollout_play(
        "mexican_train", {"players": 2, "rounds": 1}, concurrent_games=1, **config
    )
    together = _rollout_play(
        "mexican_train", {"players": 2, "rounds": 1}, concurrent_games=6, **config
    )
    key = lambda r: (r.game_id, r.decision_index)  # noqa: E731
    assert sorted(alone, key=key) == sorted(together, key=key)
    assert len({r.game_id for r in alone}) == 6


def test_playout_cap_randomisation_records_fast_searches_without_policy_weight() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    config = SelfPlayConfig(
        games=4,
        concurrent_games=4,
        search=ISMCTSConfig(simulations=20),
        fast_simulations=4,
        full_search_probability=0.5,
        temperature_moves=0,
    )
    runner = SelfPlay(
        game, encoder_for(game), config, evaluator=RolloutEvaluator(RandomPlayer(game))
    )
    records = list(runner.play())
    stats = runner.stats
    full = sum(r.policy_weight == 1.0 for r in records)
    assert {r.policy_weight for r in records} == {0.0, 1.0}
    assert stats.full_searches == full and stats.searches == len(records) == stats.records
    assert stats.simulations == 20 * full + 4 * (len(records) - full)  # the budgets as configured
    assert 0.25 < full / len(records) < 0.75  # p = 0.5 over ~100 searches
    assert stats.games == 4 and stats.decisions > stats.searches  # forced moves are not searched
    assert stats.decisions_per_s > 0 and stats.simulations_per_s > stats.decisions_per_s
    assert stats.evaluator_calls > 0 and stats.mean_batch > 1.0  # K games share evaluator calls


def test_round_outcomes_label_each_decision_with_its_round() -> None:
    """Mexican Train over two rounds: every record's label is its own round's win share."""
    game = make_game("mexican_train", players=2, rounds=2, double_set=9)
    records = _rollout_play(
        "mexican_train",
        {"players": 2, "rounds": 2, "double_set": 9},
        games=3,
        concurrent_games=3,
        simulations=8,
        record_forced=True,
    )
    by_game: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_game[r.game_id].append(r)
    differs = went_out = 0
    for rows in by_game.values():
        last = rows[-1]  # with record_forced every decision is recorded: the history is complete
        final = game.replay(last.game_seed, (*last.history, last.action))
        assert final.is_terminal() and len(final.round_results) == 2
        for r in rows:
            round_index = final.round_of_decision(len(r.history))
            winners = final.round_results[round_index].round_winners("points")
            expected = np.zeros(2, np.float32)
            expected[list(winners)] = 1.0 / len(winners)
            assert r.round_outcome is not None and np.array_equal(r.round_outcome, expected)
            differs += not np.array_equal(r.round_outcome, r.returns)
            # aux targets: the round's pips in the acting player's seat order, then who went out
            result = final.round_results[round_index]
            pips = [result.pips[(r.player + k) % 2] / 100 for k in range(2)]
            out = 8 if result.went_out is None else (result.went_out - r.player) % 2
            assert r.aux_targets is not None and r.aux_targets.shape == (17,)
            assert r.aux_targets[:2].tolist() == pytest.approx(pips)
            assert not r.aux_targets[2:8].any() and r.aux_targets[8 + out] == 1.0
            assert r.aux_targets[8:].sum() == 1.0
            went_out += result.went_out == r.player
        forced = [r for r in rows if r.legal_actions.size == 1]
        assert forced and all(r.policy_weight == 0.0 for r in forced)
    assert differs > 0  # some round was won by the campaign's loser: the labels are per round
    assert went_out > 0  # the one-hot names relative seat 0 when the acting player went out


def test_round_outcomes_are_none_for_games_without_rounds() -> None:
    state = make_game("kuhn_poker").new_initial_state(0)
    assert round_outcomes(state, [0, 1]) == [None, None]
    assert all(r.aux_targets is None and r.round_outcome is None for r in leduc_records())


def test_simultaneous_moves_give_one_record_per_acting_player() -> None:
    records = _rollout_play(
        "goofspiel", {"num_cards": 4, "players": 3, "imp_info": True}, games=3, simulations=16
    )
    by_node: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in records:
        by_node[(r.game_id, len(r.history))].append(r.player)
        assert all(isinstance(e, int) or len(e) == 3 for e in r.history)
    assert all(sorted(players) == [0, 1, 2] for players in by_node.values())
    assert len(records) == 3 * 3 * 3  # 3 games × 3 contested bids (the last is forced) × 3 players


def test_network_mode_samples_the_policy_in_one_batch_per_round_of_moves() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    evaluator = NetworkEvaluator(tiny_net(game, encoder), encoder, cache_size=0, threads=1)
    config = SelfPlayConfig(games=4, concurrent_games=4, mode="network", temperature_moves=1000)
    runner = SelfPlay(game, encoder, config, evaluator=evaluator)
    records = list(runner.play())
    assert records and all(r.policy_target is None and r.policy_weight == 0.0 for r in records)
    assert all(r.root_value is not None for r in records)
    assert runner.stats.searches == 0 and runner.stats.simulations == 0
    assert runner.stats.mean_batch > 1.5  # the K games' positions go through one forward pass
    assert evaluator.stats.forward_calls == runner.stats.evaluator_calls


def test_a_teacher_s_moves_become_one_hot_policy_targets_with_record_prior() -> None:
    """Commander-labelled games (a warm start): the teacher plays and its move is the target."""
    game = make_game("mexican_train", players=2, rounds=1, double_set=9)
    config = SelfPlayConfig(
        games=3, concurrent_games=3, mode="network", record_prior=True, record_weight=0.5
    )
    teacher = TeacherEvaluator(Commander(game), 2, neutral_value=0.5)
    records = list(SelfPlay(game, encoder_for(game), config, evaluator=teacher).play())
    assert records and all(r.policy_weight == 1.0 and r.weight == 0.5 for r in records)
    for r in records:
        assert r.policy_target is not None and r.root_value is None and r.aux_targets is not None
        chosen = int(np.flatnonzero(r.legal_actions == r.action)[0])
        assert r.policy_target[chosen] == 1.0 and r.policy_target.sum() == 1.0
        state = game.replay(r.game_seed, r.history)
        assert Commander(game).act(state, r.player, random.Random(0)) == r.action
    with pytest.raises(SelfPlayError, match="record_prior.*set mode='network'"):
        SelfPlayConfig(record_prior=True)


def test_max_moves_abandons_games_and_drops_their_rows() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    config = SelfPlayConfig(games=3, concurrent_games=2, search=ISMCTSConfig(simulations=4),
                            max_moves=3)  # fmt: skip
    runner = SelfPlay(
        game, encoder_for(game), config, evaluator=RolloutEvaluator(RandomPlayer(game))
    )
    assert list(runner.play()) == []
    assert runner.stats.truncated_games == 3 and runner.stats.games == 3


def test_dirichlet_noise_with_puct_and_record_weights() -> None:
    records = _rollout_play(
        "leduc_poker",
        {},
        games=4,
        simulations=16,
        selection="puct",
        dirichlet_fraction=0.25,
        temperature=0.0,
        record_weight=0.5,  # a weak teacher's rows, down-weighted
    )
    assert records and all(r.policy_target is not None for r in records)
    assert all(r.weight == 0.5 for r in records)


def test_bad_configuration_and_evaluators_are_refused() -> None:
    with pytest.raises(SelfPlayError, match="mode='bogus'.*allowed"):
        SelfPlayConfig(mode="bogus")
    with pytest.raises(ValueError, match="selection='puct'"):  # the search's own check
        SelfPlayConfig(search=ISMCTSConfig(dirichlet_fraction=0.25))
    with pytest.raises(SelfPlayError, match="full_search_probability"):
        SelfPlayConfig(full_search_probability=1.5)
    leduc, kuhn = make_game("leduc_poker"), make_game("kuhn_poker")
    with pytest.raises(SelfPlayError, match="serves kuhn_poker, not leduc_poker"):
        SelfPlay(
            leduc, encoder_for(kuhn), SelfPlayConfig(), evaluator=RolloutEvaluator(RandomPlayer())
        )
    runner = SelfPlay(
        leduc,
        encoder_for(leduc),
        SelfPlayConfig(games=1, mode="network"),
        evaluator=RolloutEvaluator(RandomPlayer()),
    )
    with pytest.raises(SelfPlayError, match="returned none"):
        list(runner.play())
