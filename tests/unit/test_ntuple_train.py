"""Training n-tuple tables in one process: chains, a toy value learned, validation, resume."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from omega_cluster.games.registry import make_game
from omega_cluster.search.ntuple import TablesError
from omega_cluster.train.ntuple import (
    TablesSetupError,
    TableTrainConfig,
    TableTrainer,
    play_chains,
    train_tables,
)
from tests.unit.ntuple_helpers import Constant, GreedyPolicy, KuhnInfoSet

KUHN = make_game("kuhn_poker")


class Counting:
    """Plays the first legal action and counts the calls per seat."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = [0, 0]

    def act(self, state, player: int, rng: random.Random) -> int:
        self.calls[player] += 1
        return state.legal_actions(player)[-1]


def test_chains_skip_forced_moves_and_end_in_each_rounds_shares() -> None:
    game = make_game("mexican_train", players=2, rounds=2)
    player = Counting()
    chains, state, decisions = play_chains(game, [player, player], Constant(), seed=3, outputs=2)
    assert decisions == sum(player.calls) > 0
    assert len(chains) == 4  # (seat, round), sorted
    for seat in range(2):
        mine = chains[2 * seat : 2 * seat + 2]
        # one position per decision with a choice, but the two that ended a round
        assert player.calls[seat] - 2 <= sum(len(c.positions) for c in mine) <= player.calls[seat]
        for r, chain in enumerate(mine):
            winners = state.round_results[r].round_winners("points")
            share = [1.0 / len(winners) if p in winners else 0.0 for p in range(2)]
            np.testing.assert_allclose(chain.target, [share[seat], share[1 - seat]])


def test_a_game_without_rounds_ends_in_the_final_shares() -> None:
    player = Counting()
    chains, state, _ = play_chains(KUHN, [player, player], KuhnInfoSet(), seed=1, outputs=1)
    assert [len(c.positions) for c in chains] == player.calls
    assert [c.target[0] for c in chains] == list(state.win_shares())


def _trainer(**kw) -> TableTrainer:
    settings = {"watch_games": 400, "games": 400, "lam": 1.0, "validate_every": 0}
    settings.update(kw)
    return TableTrainer(KUHN, TableTrainConfig(**settings), GreedyPolicy(), patterns=KuhnInfoSet())


def _prediction_error(trainer: TableTrainer, seeds: range) -> float:
    """Mean squared error of the tables' value of each position against the game's outcome."""
    heuristic = trainer.kit.heuristic
    assert heuristic is not None
    errors = []
    for seed in seeds:
        players = [heuristic(KUHN), heuristic(KUHN)]
        chains, _, _ = play_chains(KUHN, players, trainer.kit.patterns, seed, 1)
        for chain in chains:
            errors += [
                (trainer.tables.value(ix)[0] - chain.target[0]) ** 2 for ix in chain.positions
            ]
    return float(np.mean(errors))


def test_watched_games_teach_a_toy_value() -> None:
    trainer = _trainer()
    fresh = range(10_000, 10_200)
    blank = _prediction_error(trainer, fresh)
    counters = train_tables(trainer)
    assert counters.games == counters.watched == 400 and counters.positions > 400
    learned = _prediction_error(trainer, fresh)
    assert learned < 0.6 * blank
    # seat 0's first move (bets 1, then 0 pass / 1 bet): the rule player bets the king and
    # passes the others; the jack then never wins, the queen sometimes, the king's bet always
    w = trainer.tables.weights[:, 0]
    king_bet, queen_pass, jack_pass = 3 * 4 + 2 + 1, 2 * 4 + 1 + 1, 2 * 4 + 0 + 1
    assert w[king_bet] > w[queen_pass] + 0.2 and w[queen_pass] > w[jack_pass] + 0.3


def test_validation_scores_the_policy_against_the_heuristic() -> None:
    trainer = _trainer(games=48, watch_games=16, validate_every=16, validation_games=10)
    seen = []
    train_tables(trainer, report=lambda t, v: seen.append(v) if v is not None else None)
    assert [v.games_trained for v in seen] == [16, 32, 48]
    assert all(0.0 <= v.score <= 1.0 and v.games == 10 and v.fair == 0.5 for v in seen)
    assert trainer.counters.watched == 16


def test_resume_continues_exactly(tmp_path) -> None:
    straight = _trainer(games=64, watch_games=24, lam=0.5)
    train_tables(straight)
    first = _trainer(games=32, watch_games=24, lam=0.5)
    train_tables(first, out=tmp_path / "run")
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["counters"]["games"] == 32
    config = TableTrainConfig(watch_games=24, games=64, lam=0.5, validate_every=0)
    again = TableTrainer.resume(
        tmp_path / "run", KUHN, config, GreedyPolicy(), patterns=KuhnInfoSet()
    )
    assert again.counters.games == 32
    train_tables(again, out=tmp_path / "run")
    np.testing.assert_allclose(again.tables.weights, straight.tables.weights, atol=1e-6)
    assert again.counters.games == 64 and again.counters.watched == 24


def test_resume_refuses_another_run_in_one_line(tmp_path) -> None:
    train_tables(_trainer(games=8), out=tmp_path / "run")
    config = TableTrainConfig(games=16, seed=5)
    with pytest.raises(TablesError, match=r"holds a run with seed=0, not 5") as err:
        TableTrainer.resume(tmp_path / "run", KUHN, config, None, patterns=KuhnInfoSet())
    assert "\n" not in str(err.value)
    three = make_game("kuhn_poker", players=3)
    with pytest.raises(TablesError, match="params="):
        TableTrainer.resume(
            tmp_path / "run", three, TableTrainConfig(games=16), None, patterns=KuhnInfoSet()
        )
    with pytest.raises(TablesError, match="state.json is missing"):
        TableTrainer.resume(
            tmp_path, KUHN, TableTrainConfig(games=16), None, patterns=KuhnInfoSet()
        )
    (tmp_path / "run" / "state.json").write_text("[1, 2")
    with pytest.raises(TablesError, match="state.json is unreadable"):
        TableTrainer.resume(
            tmp_path / "run", KUHN, TableTrainConfig(games=16), None, patterns=KuhnInfoSet()
        )


def test_setup_errors_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import omega_cluster.games.kuhn_poker as kuhn

    monkeypatch.setattr(kuhn, "PLUGIN", dataclasses.replace(kuhn.PLUGIN, players={}))
    with pytest.raises(TablesSetupError, match="no 'heuristic' player for the watched games"):
        TableTrainer(KUHN, TableTrainConfig(games=1), None, patterns=KuhnInfoSet())
    alone = TableTrainConfig(games=4, watch_games=0, validate_every=0)
    assert (
        train_tables(TableTrainer(KUHN, alone, GreedyPolicy(), patterns=KuhnInfoSet())).games == 4
    )
    monkeypatch.undo()
    with pytest.raises(TablesSetupError, match="declares no n-tuple patterns"):
        TableTrainer(KUHN, TableTrainConfig(games=1), None)
    with pytest.raises(ValueError, match="needs games= or minutes="):
        TableTrainConfig()
    with pytest.raises(ValueError, match=r"lam=2 must be in \[0, 1\]"):
        TableTrainConfig(games=1, lam=2)
