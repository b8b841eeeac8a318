"""A game of your own: ``<module>:<Class>`` names, the generic encoder, the example's plugin.

``make_game("<module>:<Class>")`` imports the user's module and takes its ``PLUGIN``; every way
that can go wrong is one line naming the path. A game without an encoder of its own gets the
generic one when its observation is a fixed-length vector of numbers, and a clear refusal
naming the game otherwise. ``examples/blind_war/`` is the game of the README, as one package.
"""

from __future__ import annotations

import random
import textwrap
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from omega_cluster.cluster.runtime_env import game_module_path, run_runtime_env
from omega_cluster.config import ConfigError, load_settings
from omega_cluster.games.api import InvalidParameterError
from omega_cluster.games.plugin import GamePlugin
from omega_cluster.games.registry import game_plugin, make_game
from omega_cluster.model import EncoderError, encoder_for, encoder_from_info, random_positions
from omega_cluster.model.encoders import GenericEncoder
from omega_cluster.model.encoders.generic import flatten_observation

ROOT = Path(__file__).resolve().parents[2]


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> None:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))


# -- the generic encoder --------------------------------------------------------------------------


def test_generic_encoder_flattens_a_fixed_length_observation(race_to_n: ModuleType) -> None:
    game = race_to_n.RaceGame(target=7)
    encoder = encoder_for(game)  # no plugin, no encoder of its own: the generic one
    assert isinstance(encoder, GenericEncoder)
    assert encoder.observation_size == 2 + 4 and encoder.action_feature_size == 2
    info = encoder.info()
    assert [s.name for s in info.observation_layout] == ["seat", "observation"]
    assert sum(s.size for s in info.observation_layout) == encoder.observation_size
    for state, player in random_positions(game, 20, seed=1):
        obs = encoder.encode_observation(state, player)
        assert obs.dtype == np.float32 and obs.shape == (encoder.observation_size,)
        assert obs[player] == 1.0 and obs[1 - player] == 0.0  # the seat, one-hot
        np.testing.assert_array_equal(obs[2:], flatten_observation(state.observation(player)))
        feats = encoder.encode_actions(state, player, [1])
        np.testing.assert_array_equal(feats, [[0.0, 1.0]])
    rebuilt = encoder_from_info(game, info)  # what a checkpoint records rebuilds the same
    assert isinstance(rebuilt, GenericEncoder) and rebuilt.info() == info


def test_flatten_observation_takes_numbers_sequences_and_arrays() -> None:
    assert flatten_observation((1, (True, 2.5), [np.int64(3)], np.zeros((2, 2)))) == [
        1.0, 1.0, 2.5, 3.0, 0.0, 0.0, 0.0, 0.0,
    ]  # fmt: skip
    with pytest.raises(TypeError, match="str"):
        flatten_observation((1, "two"))


def test_generic_encoder_refuses_what_is_not_a_fixed_length_vector(
    blind_war: ModuleType, race_to_n: ModuleType
) -> None:
    with pytest.raises(EncoderError, match=r"game 'blind_war'.*not fixed-length.*encoder hook"):
        GenericEncoder(blind_war.BlindWarGame())  # its observation is a growing move log

    class Worded(race_to_n.RaceState):
        def observation(self, player: int) -> tuple[object, ...]:
            return ("count", self.count)

    class WordedGame(race_to_n.RaceGame):
        name = "worded_test"

        def new_initial_state(self, seed: int = 0) -> Worded:
            return Worded(self)

    with pytest.raises(EncoderError, match=r"game 'worded_test'.*not numeric .*a str"):
        encoder_for(WordedGame())


def test_a_plugin_encoder_wins_over_the_generic_one(blind_war: ModuleType) -> None:
    game = make_game("blind_war:BlindWarGame", players=3)
    encoder = encoder_for(game)
    assert isinstance(encoder, blind_war.BlindWarEncoder)
    assert type(encoder_from_info(game, encoder.info())) is blind_war.BlindWarEncoder


# -- <module>:<Class> ----------------------------------------------------------------------------


def test_a_user_game_by_import_path_brings_its_plugin(blind_war: ModuleType) -> None:
    game = make_game("blind_war:BlindWarGame", players=3, deck=10)
    assert type(game) is blind_war.BlindWarGame and game.num_players == 3
    assert game_plugin(game) is blind_war.PLUGIN is game_plugin("blind_war:BlindWarGame")
    # registered under its own name too: what its shards and checkpoints record
    assert type(make_game("blind_war", players=2)) is blind_war.BlindWarGame
    assert make_game("blind_war:PLUGIN").spec.name == "blind_war"  # a plugin names it too
    heuristic = blind_war.PLUGIN.player("heuristic")(game)
    state = game.new_initial_state(seed=4)
    assert heuristic.act(state, 0, random.Random(0)) == min(state.hands[0]) - 1  # leads low


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("no_such_module_xyz:Game", r"cannot import no_such_module_xyz: .*on PYTHONPATH"),
        ("blind_war:NoSuchGame", r"module blind_war has no attribute NoSuchGame"),
        ("blind_war:CheapWinner", r"CheapWinner.* is neither a Game subclass nor a GamePlugin"),
        ("blind_war:", r"a user's game is named '<module>:<Class>'"),
        ("omega_cluster.games.kuhn_poker:KuhnPokerGame", r"named 'kuhn_poker', a name .*reserves"),
    ],
)
def test_import_path_errors_are_one_line(blind_war: ModuleType, path: str, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message) as err:
        make_game(path)
    assert path in str(err.value) and "\n" not in str(err.value)


def test_a_module_whose_plugin_is_not_a_plugin_is_refused(
    race_to_n: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "from race_to_n import RaceGame\n\nPLUGIN = 'not a plugin'\n"
    _module(tmp_path, monkeypatch, "tests_bad_plugin", source)
    with pytest.raises(InvalidParameterError, match=r"PLUGIN is a str, not a GamePlugin"):
        make_game("tests_bad_plugin:RaceGame")


def test_an_unregistered_game_instance_finds_its_modules_plugin(
    race_to_n: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ray worker may unpickle a game it never built by name: its module's PLUGIN serves."""
    source = """
        from omega_cluster.games.plugin import GamePlugin
        from race_to_n import RaceGame

        class OwnRace(RaceGame):
            name = "own_race_test"

        PLUGIN = GamePlugin(name="own_race_test", game=OwnRace, players={"heuristic": print})
    """
    _module(tmp_path, monkeypatch, "tests_own_race", source)
    import tests_own_race  # type: ignore[import-not-found]

    assert game_plugin(tests_own_race.OwnRace()) is tests_own_race.PLUGIN
    bare = game_plugin(race_to_n.RaceGame())  # a module without a PLUGIN: a bare plugin
    assert isinstance(bare, GamePlugin) and bare.encoder is None and bare.name == "race_to_n"


# -- training settings and the Ray workers ---------------------------------------------------------


def test_game_name_as_import_path_passes_the_config_check(blind_war: ModuleType) -> None:
    base = ["run=smoke", "~game.params", "gate.anchors={random:1000}"]
    settings = load_settings([*base, "game.name=blind_war:BlindWarGame", "game.params.players=3"])
    assert settings.game.name == "blind_war:BlindWarGame" and settings.game.params == {"players": 3}
    with pytest.raises(ConfigError, match=r"game.name='blind_war:Nope': .*no attribute Nope"):
        load_settings([*base, "game.name=blind_war:Nope"])
    with pytest.raises(ConfigError, match=r"not a registered game; allowed: .*<module>:<Class>"):
        load_settings([*base, "game.name=chess"])


def test_the_run_ships_the_users_module_to_ray_workers(
    blind_war: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert game_module_path("blind_war:BlindWarGame") == (ROOT / "examples" / "blind_war")
    assert game_module_path("blind_war.game:BlindWarGame") == (ROOT / "examples" / "blind_war")
    assert game_module_path("kuhn_poker") is None
    assert game_module_path("openspiel:kuhn_poker") is None
    settings = load_settings(["run=smoke", "~game.params", "gate.anchors={random:1000}",
                              "game.name=blind_war:BlindWarGame"])  # fmt: skip
    assert run_runtime_env(settings) == {"py_modules": [str(ROOT / "examples" / "blind_war")]}
    # a submitted job that ships its own modules keeps them (Ray refuses to merge two lists)
    monkeypatch.setenv("RAY_JOB_CONFIG_JSON_ENV_VAR", '{"runtime_env": {"py_modules": ["x"]}}')
    assert run_runtime_env(settings) is None


# -- the example's encoder -------------------------------------------------------------------------


def test_blind_war_encoder_sees_only_what_the_player_knows(blind_war: ModuleType) -> None:
    game = make_game("blind_war:BlindWarGame", players=3)
    encoder = encoder_for(game)
    rng = random.Random(3)
    for state, player in random_positions(game, 40, seed=2):
        obs = encoder.encode_observation(state, player)
        legal = state.legal_actions(player)
        feats = encoder.encode_actions(state, player, legal)
        assert obs.shape == (encoder.observation_size,) and feats.shape == (len(legal), 14)
        for _ in range(3):  # a determinization changes only what the player cannot see
            world = state.sample_world(player, rng)
            np.testing.assert_array_equal(encoder.encode_observation(world, player), obs)
            np.testing.assert_array_equal(encoder.encode_actions(world, player, legal), feats)
