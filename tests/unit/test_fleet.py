"""The fleet: a run's mix of tables (games/fleet.py) and its checks at start."""

from __future__ import annotations

import collections

import pytest

from omega_cluster.config import ConfigError, load_settings
from omega_cluster.games.fleet import FleetError, fleet_for, slice_key
from omega_cluster.wiring import build_fleet

MIX = {2: 1, 3: 1, 4: 2, 6: 1, 8: 1}


def test_the_mix_gives_one_slice_per_size_and_objective_with_shares_summing_to_one() -> None:
    fleet = fleet_for("mexican_train", {"rounds": 1}, MIX, ["points", "go_out"])
    assert len(fleet.slices) == 10
    assert fleet.player_counts == (2, 3, 4, 6, 8)
    assert fleet.objectives == ("points", "go_out")
    assert sum(fleet.weights().values()) == pytest.approx(1.0)
    four = fleet.get(slice_key(4, "go_out"))
    assert four.weight == pytest.approx(2 / 6 / 2)
    assert dict(four.params) == {"rounds": 1, "players": 4, "objective": "go_out"}
    assert four.build("mexican_train").num_players == 4


def test_draws_follow_the_weights_and_repeat_for_the_same_seed() -> None:
    fleet = fleet_for("mexican_train", {"rounds": 1}, MIX, ["points", "go_out"])
    draws = collections.Counter(fleet.draw(7, "game", i).key for i in range(6000))
    for s in fleet.slices:
        assert draws[s.key] / 6000 == pytest.approx(s.weight, abs=0.03)
    assert [fleet.draw(7, "game", i) for i in range(20)] == [
        fleet.draw(7, "game", i) for i in range(20)
    ]


def test_without_a_fleet_the_run_has_its_one_table() -> None:
    fleet = fleet_for("kuhn_poker", {"players": 3})
    assert not fleet.mixed
    assert [s.key for s in fleet.slices] == ["players=3,objective=chips"]
    assert dict(fleet.slices[0].params) == {"players": 3}
    assert fleet.draw(1, "x") is fleet.slices[0]


def test_a_record_is_keyed_by_its_table_size_and_objective() -> None:
    fleet = fleet_for("mexican_train", {}, {2: 1, 4: 1}, ["points", "go_out"])
    assert fleet.key_of(4, '{"objective": "go_out", "players": 4}') == "players=4,objective=go_out"
    assert fleet.key_of(2, {"players": 2}) == "players=2,objective=points"


@pytest.mark.parametrize(
    ("fleet", "objectives", "words"),
    [
        ({9: 1}, [], "9 players is outside mexican_train's 2..8"),
        ({2: 0}, [], "the weight of 2 players must be > 0"),
        ({}, ["fastest"], "'fastest' not objectives of mexican_train; allowed: points, go_out"),
    ],
)
def test_a_bad_mix_is_one_line_naming_the_key(
    fleet: dict[int, float], objectives: list[str], words: str
) -> None:
    with pytest.raises(FleetError, match=words):
        fleet_for("mexican_train", {}, fleet, objectives)
    overrides = [f"game.fleet={{{','.join(f'{k}:{v}' for k, v in fleet.items())}}}",
                 f"game.objectives=[{','.join(objectives)}]"]  # fmt: skip
    with pytest.raises(ConfigError) as err:
        load_settings(overrides)
    key = "game.objectives" if objectives else "game.fleet"
    assert str(err.value).startswith(key) and words in str(err.value)
    assert "\n" not in str(err.value)


def test_a_mix_of_tables_one_network_cannot_read_is_refused_before_the_run_starts() -> None:
    """Kuhn poker's encoder grows with the players: a 2+3 player mix is refused by the config
    check, one line naming the key, not by the workers after the run directory exists."""
    with pytest.raises(ConfigError) as err:
        load_settings(["run=smoke", "game=kuhn_poker", "game.fleet={2:1,3:1}"])
    assert str(err.value).startswith("game.fleet") and "\n" not in str(err.value)
    assert "encoder at 2 players" in str(err.value) and "at 3 players" in str(err.value)


def test_a_fleet_override_replaces_the_presets_mix() -> None:
    settings = load_settings(["game.fleet={2:1,4:2}", "game.objectives=[points,go_out]"])
    assert build_fleet(settings).player_counts == (2, 4)
    again = load_settings(["game.fleet={2:1,4:2}", "game.fleet={3:1}"])
    assert build_fleet(again).player_counts == (3,)


def test_the_fleet_preset_is_every_mexican_train_table_on_both_objectives() -> None:
    settings = load_settings(["run=fleet"])
    fleet = build_fleet(settings)
    assert fleet.player_counts == (2, 3, 4, 6, 8) and fleet.objectives == ("points", "go_out")
    assert settings.learner.balance_slices and settings.gate.mode == "sprt"
    assert settings.cluster.concurrent_games <= settings.cluster.games_per_chunk
