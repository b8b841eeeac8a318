"""The game viewer's reading of a run: game ids from real Arrow shards, positions rebuilt."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from replay_helpers import make_run, play_records

from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.games.errors import ReplayError
from omega_cluster.games.registry import make_game
from omega_cluster.play.replay import NoShardsError, RunGames, UnknownGameId
from omega_cluster.play.session import seat_view


def test_games_lists_every_game_with_its_seed_params_and_decisions(tmp_path: Path) -> None:
    run = make_run(tmp_path, games=3)
    games = {g.game_id: g for g in RunGames(run).games()}
    assert sorted(games) == ["kuhn-0", "kuhn-1", "kuhn-2"]
    for index, gid in enumerate(sorted(games)):
        g = games[gid]
        expected = play_records("kuhn_poker", {"players": 2}, 100 + index, gid)
        assert (g.game, g.params, g.seed, g.players) == (
            "kuhn_poker",
            {"players": 2},
            100 + index,
            2,
        )
        assert g.decisions == len(expected) >= 2
        assert g.returns == tuple(float(x) for x in expected[0].returns)


def test_replay_rebuilds_every_position_with_the_recorded_policy(tmp_path: Path) -> None:
    run = make_run(tmp_path, games=3)
    game = make_game("kuhn_poker", players=2)
    for gid, seed in (("kuhn-0", 100), ("kuhn-1", 101), ("kuhn-2", 102)):  # kuhn-1 spans 2 shards
        records = play_records("kuhn_poker", {"players": 2}, seed, gid)
        positions = RunGames(run).replay(gid)
        assert [p.step for p in positions] == list(range(len(records)))
        for p, r in zip(positions, records, strict=True):
            state = game.replay(seed, r.history)
            assert p.text == state.render()
            assert p.seat == r.player == state.current_players[0]
            assert [m["action"] for m in p.moves] == r.legal_actions.tolist()
            assert [m["name"] for m in p.moves] == [
                game.describe_action(a) for a in r.legal_actions
            ]
            assert [m["policy"] for m in p.moves] == pytest.approx(
                r.policy_target.tolist(), abs=1e-4
            )
            assert (p.action, p.action_name) == (r.action, game.describe_action(r.action))
            assert p.returns == pytest.approx(r.returns.tolist())
            assert p.root_value == pytest.approx((r.returns * 0.5).tolist())


def test_a_mexican_train_game_replays_from_its_json_parameters(tmp_path: Path) -> None:
    params = {"players": 2, "double_set": 9, "rounds": 1}
    store = ShardStore(tmp_path / "mt" / "shards")
    records = play_records("mexican_train", params, 7, "mt-0")
    ShardWriter(store, writer_id="t").write(records)
    positions = RunGames(tmp_path / "mt").replay("mt-0")
    game = make_game("mexican_train", **params)
    assert len(positions) == len(records) > 10
    last = records[-1]
    assert positions[-1].text == game.replay(7, last.history).render()
    assert positions[-1].action_name == game.describe_action(last.action)
    # each position carries the deciding seat's view, as the table draws it
    for p, r in zip(positions, records, strict=True):
        assert p.view == seat_view(game.replay(7, r.history), r.player)
        assert p.view["kind"] == "dominoes"
        if r.action < game.tiles.draw_action:  # the tile played is among the seat's plays
            assert r.action in [play["action"] for play in p.view["plays"]]


def test_a_game_id_not_in_the_shards_is_one_line_naming_the_run(tmp_path: Path) -> None:
    run = make_run(tmp_path, games=2)
    with pytest.raises(UnknownGameId) as err:
        RunGames(run).replay("no-such-game")
    message = str(err.value)
    assert "\n" not in message and "'no-such-game'" in message and str(run) in message
    assert "2 games" in message
    with pytest.raises(UnknownGameId, match="no decision 99"):
        RunGames(run).state_at("kuhn-0", 99)


def test_a_directory_without_shards_is_refused_and_left_untouched(tmp_path: Path) -> None:
    with pytest.raises(NoShardsError, match="no shard store") as err:
        RunGames(tmp_path)
    assert str(tmp_path) in str(err.value)
    assert list(tmp_path.iterdir()) == []  # no store dirs made


def test_new_shards_of_a_running_run_show_up(tmp_path: Path) -> None:
    run = make_run(tmp_path, games=1)
    games = RunGames(run)
    assert [g.game_id for g in games.games()] == ["kuhn-0"]
    writer = ShardWriter(ShardStore(run / "shards"), writer_id="later")
    writer.write(play_records("kuhn_poker", {"players": 2}, 5, "kuhn-late"))
    assert [g.game_id for g in games.games()] == ["kuhn-0", "kuhn-late"]
    _, state, record = games.state_at("kuhn-late", 0)
    assert record.game_id == "kuhn-late" and state.current_players == (record.player,)


def test_a_record_that_no_longer_replays_is_an_error_naming_the_step(tmp_path: Path) -> None:
    records = play_records("kuhn_poker", {"players": 2}, 3, "kuhn-bad")
    bad = records[1]
    broken = dataclasses.replace(bad, history=(*bad.history[:2], 1, 1, 1))  # after the showdown
    ShardWriter(ShardStore(tmp_path / "r" / "shards"), writer_id="t").write([records[0], broken])
    with pytest.raises(ReplayError, match=r"replay of seed 3 fails at step 4") as err:
        RunGames(tmp_path / "r").replay("kuhn-bad")
    assert "\n" not in str(err.value)
