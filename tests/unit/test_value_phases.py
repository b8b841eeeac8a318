"""The value report's pieces: Mexican Train's position counts (seat-relative, public or the
seat's own), the phase binning of ``bench/bench_value.py`` and its calibration error, and the
counts it reads off a store of real teacher games (one replay per game) against a fresh replay of
every record."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from bench import bench_value
from omega_cluster.config import load_settings
from omega_cluster.games import make_game
from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState
from omega_cluster.games.mexican_train.position_counts import (
    position_count_names,
    position_counts,
)


def _named(state: MexicanTrainState, player: int) -> dict[str, float]:
    names = position_count_names(state.game.num_players)
    values = position_counts(state, player)
    assert values.shape == (len(names),) and values.dtype == np.float32
    return dict(zip(names, values.tolist(), strict=True))


def test_counts_of_a_fresh_deal() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    assert isinstance(game, MexicanTrainGame)
    state = game.new_initial_state(7)
    c = _named(state, 2)
    assert [c[f"hand_{k}"] for k in range(4)] == [15.0] * 4
    assert [c[f"marker_{k}"] for k in range(4)] == [0.0] * 4
    own = state.hand(2)
    assert c["own_pips"] == state.tiles.mask_pips(own, game.double_blank_value)
    assert c["own_doubles"] == (own & state.tiles.doubles_mask).bit_count()
    assert c["boneyard"] == len(state.boneyard) == game.tiles.num_tiles - 1 - 4 * 15
    assert (
        c["move"] == c["own_train"] == c["mexican_train"] == c["open_doubles"] == c["own_lead"] == 0
    )
    with pytest.raises(ValueError, match="not a seat"):
        position_counts(state, 4)


def test_counts_follow_the_play_seat_relative() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    assert isinstance(game, MexicanTrainGame)
    state = game.new_initial_state(11)
    rng = np.random.default_rng(0)
    marked_seen = False
    for move in range(1, 40):
        if state.is_terminal():
            break
        actor = state.current_player
        state.apply_action(int(rng.choice(state.legal_actions())))
        sizes = state.hand_sizes
        for p in range(3):
            c = _named(state, p)
            assert c["move"] == move
            assert [c[f"hand_{k}"] for k in range(3)] == [sizes[(p + k) % 3] for k in range(3)]
            assert c["own_lead"] == min(sizes[(p + 1) % 3], sizes[(p + 2) % 3]) - sizes[p]
            assert [c[f"marker_{k}"] for k in range(3)] == [
                float(state.is_marked((p + k) % 3)) for k in range(3)
            ]
            assert c["boneyard"] == len(state.boneyard)
            assert c["own_train"] == state.train_length(p)
        marked_seen |= state.is_marked(actor)
        # every tile is in a hand, the boneyard, on a train or the engine
        laid = sum(state.train_length(s) for s in game.train_slots())
        assert sum(sizes) + len(state.boneyard) + laid + 1 == game.tiles.num_tiles
    assert marked_seen  # the random play put a marker up: the marker entries were exercised


def test_round_quarters_and_boneyard_bins() -> None:
    index = np.array([0, 1, 2, 3, 4, 5, 6, 7, 0, 4])
    decisions = np.array([8] * 8 + [5, 5])
    assert bench_value.round_quarter(index, decisions).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 0, 3]
    left = np.array([60, 59, 31, 30, 1, 0, 30])
    dealt = np.array([60] * 6 + [30])
    assert bench_value.boneyard_bin(left, dealt).tolist() == [0, 1, 1, 2, 2, 3, 0]


def test_calibration_error_and_explained_variance() -> None:
    y = np.repeat([0.0, 1.0], 50)
    v = np.repeat([0.2, 0.6], 50)  # two bins' worth of predictions, each off by 0.2 and 0.4
    assert bench_value.calibration_error(y, v, bins=2) == pytest.approx(0.3)
    assert bench_value.calibration_error(y, y.copy(), bins=10) == pytest.approx(0.0)
    assert bench_value.explained_variance(y, y.copy()) == pytest.approx(1.0)
    assert bench_value.explained_variance(y, np.full(100, y.mean())) == pytest.approx(0.0)


def test_positions_of_a_store_match_a_replay_of_every_record(tmp_path: Path) -> None:
    settings = load_settings(["game.params.players=2", "game.params.rounds=1"])
    store = bench_value.teacher_store(settings, 3, 5, tmp_path / "store")
    game = make_game("mexican_train", players=2, rounds=1)
    assert isinstance(game, MexicanTrainGame)
    pos = bench_value.positions(game, store)
    table = bench_value.store_table(store)
    seeds, players = table.column("game_seed").to_numpy(), table.column("player").to_numpy()
    histories = table.column("history").to_pylist()
    for row in range(table.num_rows):
        state = game.replay(int(seeds[row]), [entry[0] for entry in histories[row]])
        assert np.array_equal(pos.counts[row], position_counts(state, int(players[row])))
    quarters = np.stack([pos.phase[q] for q in bench_value.QUARTERS])
    yards = np.stack([pos.phase[b] for b in bench_value.BONEYARD])
    assert (quarters.sum(axis=0) == 1).all() and (yards.sum(axis=0) == 1).all()
    first = table.column("decision_index").to_numpy() == 0
    assert pos.phase["q1"][first].all() and pos.phase["yard=deal"][first].all()
    assert np.allclose(pos.outcome[:, :2].sum(axis=1), 1.0)  # win shares of the two seats


def test_the_search_lever_labels_every_row_with_its_positions_root_value() -> None:
    """Each row of the "search root values" set gets the root value of a search from its own
    position: one value per seat, inside the game's range, the rest of the record unchanged."""
    settings = load_settings(["game.params.players=2", "game.params.rounds=1"])
    games = list(bench_value.teacher_games(settings, 2, seed=5))
    labelled = bench_value.with_root_values(settings, games, seed=6)
    assert [len(g) for g in labelled] == [len(g) for g in games]
    values = []
    for before, after in zip(itertools.chain(*games), itertools.chain(*labelled), strict=True):
        assert after.history == before.history and after.player == before.player
        assert after.root_value is not None and after.root_value.shape == (2,)
        values.append(after.root_value)
    values_ = np.stack(values)
    assert ((values_ >= 0) & (values_ <= 1)).all()
    assert values_.std(axis=0).min() > 0.01  # positions differ: not one constant


def test_the_training_sets_thin_and_label_the_same_pool(tmp_path: Path) -> None:
    """One pool of games gives every set: "all-search" is every row of every game, each with a
    root value; "thin-search" at most k rows of each game, a subset of those positions."""
    settings = load_settings(["game.params.players=2", "game.params.rounds=1"])
    stores = bench_value.training_stores(settings, 2, 3, 2, 7, tmp_path,
                                         {"all", "all-search", "thin-search"})  # fmt: skip
    tables = {name: bench_value.store_table(store) for name, store in stores.items()}
    assert tables["all-search"].num_rows == tables["all"].num_rows
    assert tables["all-search"].column("root_value").null_count == 0
    keys = {name: set(zip(t.column("game_id").to_pylist(), t.column("decision_index").to_pylist(),
                          strict=True)) for name, t in tables.items()}  # fmt: skip
    assert keys["all-search"] == keys["all"]
    assert keys["thin-search"] < keys["all"] and len(keys["thin-search"]) <= 2 * 3


def test_the_gap_to_the_counts_model_is_resampled_by_game() -> None:
    """The EV gap's point is the difference of the two EVs; a model against itself has no gap and
    no spread; a perfect prediction against the mean gains an EV of 1 in every resample; a gap
    measured on few games has a wider interval than on many, and one at a phase too few games
    reach has none (NaN)."""
    rng = np.random.default_rng(0)

    def pos(games: int) -> bench_value.Positions:
        ids = np.repeat(np.arange(games), 10)
        y = np.repeat(rng.random(games), 10).astype(np.float32)  # one outcome per game
        phase = {"all": np.ones(ids.size, bool), "q1": np.arange(ids.size) % 10 < 3}
        return bench_value.Positions(None, np.zeros((ids.size, 1), np.float32),  # type: ignore[arg-type]
                                     np.stack([y, 1 - y], axis=1), np.ones((ids.size, 2), bool),
                                     phase, ids)  # fmt: skip

    p = pos(200)
    y = p.outcome[:, 0]
    noisy = (y + rng.normal(0, 0.3, y.size)).astype(np.float32)
    same = bench_value.ev_gaps(p, noisy, noisy, seed=1)
    assert all(g == (0.0, 0.0, 0.0) for g in same.values())
    perfect = bench_value.ev_gaps(p, y, np.full_like(y, y.mean()), seed=1)
    assert perfect["all"][0] == pytest.approx(1.0) and perfect["all"][1] > 0.99
    point, lo, hi = bench_value.ev_gaps(p, noisy, np.full_like(y, 0.5), seed=1)["all"]
    want = bench_value.explained_variance(y, noisy) - bench_value.explained_variance(
        y, np.full_like(y, 0.5)
    )
    assert point == pytest.approx(want) and lo < point < hi
    few = pos(20)
    yf = few.outcome[:, 0]
    wide = bench_value.ev_gaps(few, (yf + rng.normal(0, 0.3, yf.size)).astype(np.float32),
                               np.full_like(yf, 0.5), seed=1)["all"]  # fmt: skip
    assert wide[2] - wide[1] > hi - lo
    # a phase two games reach: half the resamples draw one game twice and have no EV there
    p.phase["q1"] = p.games < 2
    rare = bench_value.ev_gaps(p, noisy, np.full_like(y, 0.5), seed=1)["q1"]
    assert np.isfinite(rare[0]) and np.isnan(rare[1]) and np.isnan(rare[2])


def test_the_spread_of_networks_trained_alike_counts_those_short_beyond_the_noise() -> None:
    """``--nets``: per phase the mean gap, the range over the networks and how many of them are
    short beyond the noise (interval below 0); a phase no network has is left out."""
    rows = [{"gaps": {"all": (-0.02, -0.03, -0.01), "q1": (0.01, -0.01, 0.03)}},
            {"gaps": {"all": (0.00, -0.01, 0.01), "q1": (-0.03, -0.05, -0.01)}}]  # fmt: skip
    text = bench_value.spread_text(rows)
    assert text == "all -0.010 [-0.020 .. +0.000] 1/2 short, q1 -0.010 [-0.030 .. +0.010] 1/2 short"
