"""The Hydra configuration (``conf/`` + ``omega_cluster.config``): every preset composes into a
valid :class:`Settings`, overrides apply, and every bad input fails at load time with a
:class:`ConfigError` that names the key and what is allowed."""

from __future__ import annotations

import copy
import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import OmegaConf

from omega_cluster import wiring
from omega_cluster.config import (
    CONF_ENV,
    ConfigError,
    GameSettings,
    SearchSettings,
    Settings,
    conf_dir,
    flat_params,
    load_settings,
    to_yaml,
    validate,
)

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "conf"
PRESETS = sorted(
    (group.name, path.stem)
    for group in CONF.iterdir()
    if group.is_dir()
    for path in group.glob("*.yaml")
)


@pytest.fixture(scope="module")
def default() -> Settings:
    """The composed default configuration (run=default)."""
    return load_settings()


@pytest.fixture(scope="module")
def base() -> Settings:
    """Mexican Train 2p with the schema's plain values (uct, random rollouts): the starting point
    of the bad-value tests, so each breaks exactly one rule."""
    return validate(Settings(game=GameSettings("mexican_train", {"players": 2, "rounds": 1})))


def fails(overrides: list[str]) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(overrides)
    return str(info.value)


def invalid(settings: Settings, **changes: Any) -> ConfigError:
    """``validate`` of a copy of ``settings`` with ``{"section__field": value}`` changed."""
    changed = copy.deepcopy(settings)
    for dotted, value in changes.items():
        section, name = dotted.split("__")
        setattr(getattr(changed, section), name, value)
    with pytest.raises(ConfigError) as info:
        validate(changed)
    return info.value


# --- presets ---------------------------------------------------------------------------------


def test_conf_dir_is_the_repository_conf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONF_ENV, raising=False)
    assert conf_dir() == CONF
    assert {"game", "search", "model", "learner", "gate", "cluster", "tracking", "run"} <= {
        group for group, _ in PRESETS
    }


def test_default_is_the_60_minute_mexican_train_2p_run(default: Settings) -> None:
    assert isinstance(default, Settings)
    assert isinstance(default.game, GameSettings) and isinstance(default.search, SearchSettings)
    assert default.game == GameSettings("mexican_train", {"players": 2, "rounds": 1})
    assert default.run.name == "default" and default.run.max_minutes == 60.0
    assert (default.cluster.backend, default.cluster.address) == ("ray", None)
    assert default.gate.mode == "sprt" and default.model.hidden_size == 128
    assert isinstance(default.game.params, dict)
    assert default.gate.anchors == {}  # the game's own ladder, not merged with the schema's
    officers = {"ensign": 1000.0, "lieutenant": 1200.0, "commander": 1400.0}
    assert wiring.gate_service_config(default).anchors == officers
    leduc = load_settings(["game=leduc_poker"])
    assert wiring.gate_service_config(leduc).anchors == {"random": 1000.0, "heuristic": 1400.0}


def test_an_anchors_override_replaces_the_mapping_whole() -> None:
    s = load_settings(["gate.anchors={commander:1500}"])
    assert s.gate.anchors == {"commander": 1500.0}
    smoke = load_settings(["run=smoke", "game=kuhn_poker", "gate.anchors={random:900}"])
    assert smoke.gate.anchors == {"random": 900.0}


def test_smoke_overrides_the_other_groups() -> None:
    s = load_settings(["run=smoke"])
    assert (s.run.name, s.run.iterations, s.run.games_per_iteration) == ("smoke", 3, 16)
    assert (s.search.simulations, s.search.fast_simulations) == (16, 8)
    assert s.model.hidden_size == 32  # model=small
    assert (s.learner.steps_per_candidate, s.learner.min_rows, s.learner.batch_size) == (60, 32, 64)
    assert (s.gate.mode, s.gate.games_per_slice, s.gate.anchor_games) == ("fixed", 20, 10)
    assert s.gate.anchors == {"random": 1000.0, "heuristic": 1400.0}
    assert s.cluster.games_per_chunk == 8 and s.tracking.flush_every_s == 1.0


@pytest.mark.parametrize(("group", "option"), PRESETS)
def test_every_preset_file_composes(group: str, option: str) -> None:
    """Each file of each group is an option; each game also with the smoke preset, or with
    run=zero for a game preset of package _global_ (a game without a rule-based player, which
    sets its search and gate keys: connect_four)."""
    expected = OmegaConf.to_container(OmegaConf.load(CONF / group / f"{option}.yaml"))
    zero = group == "game" and isinstance(expected, dict) and "game" in expected
    run = "zero" if zero else "smoke"
    overrides = [f"{group}={option}"] + ([f"run={run}"] if group == "game" else [])
    s = load_settings(overrides)
    assert isinstance(s, Settings)
    if group == "run":
        assert s.run.name == option
    if group == "game":
        assert isinstance(expected, dict)
        game = expected["game"] if zero else expected
        assert isinstance(game, dict)
        name = game.get("name", GameSettings.name)  # a preset says only what differs
        assert (s.game.name, s.game.params) == (name, game.get("params", {}))
        assert s.run.name == run


def test_cluster_and_gate_presets() -> None:
    local = load_settings(["cluster=local"]).cluster
    assert (local.backend, local.address) == ("ray", "auto")
    multi = load_settings(["cluster=multi_node"]).cluster
    assert multi.address == "auto" and multi.learner_gpus == 1 and multi.self_play_actors > 1
    inprocess = load_settings(["cluster=inprocess"]).cluster
    assert (inprocess.backend, inprocess.address) == ("local", None)
    fixed = load_settings(["gate=fixed"]).gate
    assert (fixed.mode, fixed.games_per_slice, fixed.margin) == ("fixed", 40, 0.0)


# --- overrides -------------------------------------------------------------------------------


def test_overrides_of_the_issue() -> None:
    s = load_settings(
        ["game=goofspiel", "cluster.self_play_actors=8", "run=smoke", "+game.params.num_cards=4"]
    )
    assert s.game.name == "goofspiel" and s.game.params["num_cards"] == 4
    assert s.cluster.self_play_actors == 8 and s.run.iterations == 3


@pytest.mark.parametrize(("group", "option"), [p for p in PRESETS if p[0] != "run"])
def test_presets_say_only_what_differs_from_the_schema(group: str, option: str) -> None:
    """No line of a group's preset repeats the schema's default (the run presets, which override
    other groups' presets, may: ``cluster.games_per_chunk: 16`` beats ``cluster=multi_node``)."""
    preset = OmegaConf.to_container(OmegaConf.load(CONF / group / f"{option}.yaml")) or {}
    assert isinstance(preset, dict)
    defaults = dataclasses.asdict(Settings())[group]
    repeated = [k for k, v in preset.items() if k != "defaults" and defaults.get(k) == v]
    assert not repeated, f"conf/{group}/{option}.yaml repeats the schema's defaults: {repeated}"


def test_any_schema_key_overrides_whether_a_preset_names_it_or_not() -> None:
    """The presets name few keys; ``key=value``, ``+key=value`` and ``~key`` work on every key
    the schema knows (Hydra alone refuses a ``key=value`` the composed YAML does not have)."""
    s = load_settings(["cluster.self_play_actors=3", "+learner.batch_size=32", "tracking.uri=x"])
    assert (s.cluster.self_play_actors, s.learner.batch_size, s.tracking.uri) == (3, 32, "x")
    assert load_settings(["run=smoke", "~learner.batch_size"]).learner.batch_size == 256
    assert load_settings(["run=smoke", "~gate.anchors"]).gate.anchors == {}
    assert load_settings(["run=smoke", "gate.anchors={random:900}"]).gate.anchors == {
        "random": 900.0
    }
    assert load_settings(["gate.anchors={random:900}"]).gate.anchors == {"random": 900.0}


def test_game_params_entries_add_or_replace_with_or_without_plus() -> None:
    goofspiel = ["game=goofspiel", "gate.anchors={random:1000,heuristic:1400}"]
    assert load_settings([*goofspiel, "game.params.num_cards=4"]).game.params["num_cards"] == 4
    added = load_settings(["game.params.objective=go_out", "+game.params.double_set=9"])
    assert added.game.params == {"players": 2, "rounds": 1, "objective": "go_out", "double_set": 9}
    assert load_settings(["~game.params.rounds"]).game.params == {"players": 2}


def test_another_game_name_starts_from_its_own_parameters() -> None:
    """``game.name=`` naming another game than the preset's drops the preset's parameters (they
    are Mexican Train's); the same name, a chosen preset or ``game.params=`` keep them."""
    anchors = "gate.anchors={random:1000,heuristic:1400}"  # the default run's: Mexican Train's
    assert load_settings(["game.name=kuhn_poker", anchors]).game.params == {}
    three = load_settings(["game.name=kuhn_poker", "game.params.players=3", anchors])
    assert three.game.params == {"players": 3}
    kept = load_settings(["game.name=mexican_train", "game.params.players=3"]).game.params
    assert kept == {"players": 3, "rounds": 1}
    goof = load_settings(["game=goofspiel", "game.name=goofspiel", anchors]).game.params
    assert goof["num_cards"] == 6


def test_command_line_beats_the_smoke_preset() -> None:
    s = load_settings(["run=smoke", "model=default", "search.simulations=32", "gate.mode=sprt"])
    assert (s.model.hidden_size, s.search.simulations, s.gate.mode) == (128, 32, "sprt")


def test_repeated_loads_and_an_enclosing_hydra_are_left_alone() -> None:
    with initialize_config_dir(version_base=None, config_dir=str(CONF)):
        first = load_settings(["run=smoke"])
        second = load_settings()
        assert GlobalHydra.instance().is_initialized()
        assert compose("config").run.iterations == 200  # the caller's Hydra still works
    assert (first.run.name, second.run.name) == ("smoke", "default")


def test_config_dir_and_env_var(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copied = tmp_path / "conf"
    shutil.copytree(CONF, copied)
    run_default = copied / "run" / "default.yaml"  # the preset that sets the default budget
    text = run_default.read_text()
    assert "  simulations: 800\n" in text
    run_default.write_text(text.replace("  simulations: 800\n", "  simulations: 7\n"))
    assert load_settings(config_dir=copied).search.simulations == 7
    monkeypatch.setenv(CONF_ENV, str(copied))
    assert conf_dir() == copied.resolve() and load_settings().search.simulations == 7
    monkeypatch.setenv(CONF_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ConfigError, match=rf"nowhere.*config\.yaml.*{CONF_ENV}"):
        conf_dir()


# --- bad input at load time ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            ["search.simulationz=3"],
            ["unknown key 'search.simulationz'", "keys of 'search'", "leaf"],
        ),
        (["+search.simulationz=3"], ["unknown key 'search.simulationz'", "simulations"]),
        (["serch.simulations=3"], ["unknown key 'serch'", "did you mean 'search'", "learner"]),
        (["search.simulations.x=1"], ["unknown key 'search.simulations.x'", "(int)"]),
        (["game=chess"], ["'chess'", "'game'", "goofspiel", "mexican_train_4p", "leduc_poker"]),
        (["model=huge"], ["'huge'", "'model'", "default, small"]),
        (["search.simulations=abc"], ["search.simulations='abc'", "expected int"]),
        (["search.simulations=null"], ["search.simulations=None", "expected int"]),
        (["run.max_minutes=soon"], ["run.max_minutes='soon'", "float | None"]),
        (["gate.anchors=random"], ["gate.anchors='random'", "dict[str, float]"]),
        (["search=3"], ["search=3"]),
        (["search.simulations=="], ["search.simulations=="]),
        (["game.name=chess"], ["game.name='chess'", "mexican_train", "openspiel:<name>"]),
        (["game=goofspiel", "game.params.num_cardz=4"], ["game.params", "num_cardz", "num_cards"]),
        (["game.params.players=9"], ["game.params", "players=9", "[2, 8]"]),
    ],
)
def test_bad_overrides_name_the_key_and_the_allowed_values(
    overrides: list[str], expected: list[str]
) -> None:
    message = fails(overrides)
    for text in expected:
        assert text in message


def test_overrides_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match="list of strings"):
        load_settings("run=smoke")  # a str is a Sequence[str]: caught at run time


# --- bad values (validate) -------------------------------------------------------------------


def test_heads_that_need_a_hidden_state_are_refused_where_the_encoder_has_none() -> None:
    message = fails(["game=goofspiel", "model.belief_head=true", "model.critic=true"])
    assert "model.belief_head=true predicts where each hidden item is" in message
    assert "goofspiel's encoder declares no hidden state: set it to false" in message
    assert "model.critic=true reads the records' hidden state" in message
    message = fails(["learner.value_target=critic"])
    assert "learner.value_target=critic regresses the value head" in message
    assert "set model.critic=true" in message


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("search.algorithm", "mcts", "auto, ismcts, smmcts"),
        ("search.leaf", "neural", "network, random, random_rollout, <player>_rollout"),
        ("search.leaf", "network+neural", "network+<one of the rollout leaves>"),
        ("search.network_value_weight", 1.5, "in [0, 1]"),
        ("search.selection", "ucb", "'uct', 'puct'"),  # ISMCTSConfig's own check
        ("search.simulations", 0, "an int >= 1"),
        ("search.full_search_probability", 1.5, "in [0, 1]"),
        ("search.dirichlet_alpha", 0.0, "> 0"),
        ("search.max_moves", 0, ">= 1 or null"),
        ("model.trunk", "cnn", "mlp, transformer"),
        ("model.dropout", 1.0, "in [0, 1)"),
        ("model.belief_head", "yes", "true or false"),
        ("model.critic", 1, "true or false"),
        ("learner.mode", "ppo", "alphazero, actor_critic"),
        ("learner.value_target", "td", "final, round, search, mixed"),
        ("learner.schedule", "step", "constant, cosine"),
        ("learner.device", "gpu", "auto, cpu, mps, cuda, cuda:<index>"),
        ("learner.device", "cuda:x", "cuda:<index>"),
        ("learner.lr", 0.0, "> 0"),
        ("learner.threads", 0, ">= 1 or null"),
        ("learner.balance_slices", "yes", "true or false"),
        ("gate.mode", "bayes", "fixed, sprt"),
        ("gate.player", "human", "network, search"),
        ("gate.alpha", 0.7, "in (0, 0.5)"),
        ("gate.slice_level", 1.0, "in (0, 1)"),
        ("gate.margin", 1.0, "in [-1, 1)"),
        ("gate.opening_moves", -1, "an int >= 0"),
        ("cluster.backend", "k8s", "ray, local"),
        ("cluster.mode", "semi", "sync, async"),
        ("cluster.self_play_actors", 0, "an int >= 1"),
        ("cluster.bench_workers", -1, "an int >= 0"),
        ("cluster.learner_gpus", -1.0, ">= 0 or null"),
        ("tracking.flush_every_s", 0.0, "> 0"),
        ("tracking.experiment", "", "non-empty string"),
        ("tracking.enabled", "yes", "true or false"),
        ("run.iterations", 0, "an int >= 1"),
        ("run.seed", True, "an int >= 0"),
        ("run.max_minutes", -5.0, "> 0 or null"),
    ],
)
def test_each_bad_value_names_its_key_and_the_allowed_values(
    base: Settings, key: str, value: Any, allowed: str
) -> None:
    error = invalid(base, **{key.replace(".", "__"): value})
    assert len(error.problems) == 1
    assert error.problems[0].startswith(f"{key}={value!r}")
    assert allowed in str(error)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"search__selection": "puct"}, ["search.selection=puct", "search.leaf=network"]),
        ({"search__dirichlet_fraction": 0.25}, ["search.dirichlet_fraction", "selection='puct'"]),
        ({"learner__min_rows": 10, "learner__window_rows": 5}, ["learner.min_rows=10", "<= "]),
        ({"gate__elo0": 10.0, "gate__elo1": 5.0}, ["gate.elo1=5.0", "gate.elo0=10.0"]),
        ({"gate__min_games": 50, "gate__max_games": 40}, ["gate.max_games=40", ">= gate.min"]),
        (
            {"model__trunk": "transformer", "model__hidden_size": 130},
            ["model.hidden_size=130", "num_heads=4"],
        ),
        ({"cluster__backend": "local", "cluster__address": "auto"}, ["cluster.address", "ray"]),
        ({"gate__anchors": {"random": 1000, "nobody": 1300}}, ["gate.anchors.nobody", "commander"]),
        ({"gate__anchors": {"random": "high"}}, ["gate.anchors.random='high'", "finite number"]),
        ({"gate__anchors": {}, "gate__anchor_games": 4}, []),  # the game's own ladder
        ({"gate__anchors": ["random"]}, ["gate.anchors=['random'] must map player specs to Elo"]),
        ({"search__leaf": "commander_rollout"}, []),  # Mexican Train has Commander
        ({"search__leaf": "network+commander_rollout", "search__selection": "puct"}, []),
    ],
)
def test_cross_field_rules(base: Settings, changes: dict[str, Any], expected: list[str]) -> None:
    if not expected:
        changed = copy.deepcopy(base)
        for dotted, value in changes.items():
            section, name = dotted.split("__")
            setattr(getattr(changed, section), name, value)
        assert validate(changed) is changed
        return
    message = str(invalid(base, **changes))
    for text in expected:
        assert text in message


def test_puct_with_the_network_leaf_and_root_noise_is_valid(base: Settings) -> None:
    changed = copy.deepcopy(base)
    changed.search = dataclasses.replace(
        changed.search, selection="puct", leaf="network", dirichlet_fraction=0.25
    )
    assert validate(changed) is changed


def test_game_dependent_rules() -> None:
    goofspiel = load_settings(["game=goofspiel", "search.selection=uct", "gate.anchors={random:1}"])
    message = str(
        invalid(
            goofspiel,
            search__algorithm="ismcts",
            search__leaf="commander_rollout",
            gate__anchors={"commander": 1400.0},
        )
    )
    assert message.startswith("3 problems in the configuration")
    assert "search.algorithm=ismcts" in message and "allowed: auto, smmcts" in message
    assert "search.leaf='commander_rollout' cannot play goofspiel" in message
    mixed = str(invalid(goofspiel, search__leaf="network+commander_rollout"))
    assert mixed.startswith("search.leaf='network+commander_rollout' cannot play goofspiel")
    assert "gate.anchors.commander: not a player for goofspiel" in message
    assert "another game: gate.anchors={random:1000,heuristic:1400}" in message
    bad_params = str(invalid(goofspiel, game__params={"num_cards": 100}))
    assert bad_params.startswith("game.params=") and "num_cards=100" in bad_params


def test_every_problem_is_reported(base: Settings) -> None:
    error = invalid(base, search__selection="ucb", model__trunk="cnn", run__iterations=0)
    assert [p.split("=")[0] for p in error.problems] == [
        "search.selection",
        "model.trunk",
        "run.iterations",
    ]
    assert str(error).startswith("3 problems in the configuration")


def test_every_bad_value_of_one_component_is_reported(base: Settings) -> None:
    """A section checked by its component's config (LearnerConfig, GateConfig) still reports
    every bad value, under the settings keys (steps_per_candidate is LearnerConfig's
    steps_per_call), and not a rule that would judge a refused value's default."""
    error = invalid(base, learner__lr=0, learner__batch_size=0, learner__steps_per_candidate=0)
    assert error.problems == (
        "learner.lr=0 must be a finite number > 0",
        "learner.batch_size=0 must be an int >= 1",
        "learner.steps_per_candidate=0 must be an int >= 1",
    )
    error = invalid(base, gate__elo0="x", gate__elo1=-5.0, gate__slice_level=1.0)
    assert error.problems == (
        "gate.elo0='x' must be a finite number",
        "gate.slice_level=1.0 must be a finite number in (0, 1)",
    )


def test_validate_rejects_what_is_not_settings(base: Settings) -> None:
    with pytest.raises(ConfigError, match="Settings"):
        validate({"game": {}})  # type: ignore[arg-type]
    broken = copy.deepcopy(base)
    broken.search = None  # type: ignore[assignment]
    with pytest.raises(ConfigError, match="search must be a SearchSettings"):
        validate(broken)


# --- rendering -------------------------------------------------------------------------------


def _leaf_keys(node: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(value):
            keys |= _leaf_keys(value, f"{key}.")
        elif isinstance(value, dict) and value:
            keys |= {f"{key}.{k}" for k in value}
        else:
            keys.add(key)
    return keys


def test_flat_params_are_dotted_complete_and_text(default: Settings) -> None:
    flat = flat_params(default)
    assert set(flat) == _leaf_keys(default)
    assert all(isinstance(v, str) for v in flat.values())
    assert {"game.params.players", "game.params.rounds", "search.simulations"} <= set(flat)
    assert flat["search.simulations"] == str(default.search.simulations)
    assert (flat["run.dir"], flat["gate.paired"]) == ("null", "true")
    assert (flat["gate.anchors"], flat["game.fleet"]) == (
        "{}",
        "{}",
    )  # the game's ladder; one table
    empty = copy.deepcopy(default)
    empty.game.params = {}
    assert flat_params(empty)["game.params"] == "{}"


def test_to_yaml_round_trips(default: Settings) -> None:
    text = to_yaml(default)
    assert "simulations: 800" in text and text.index("game:") < text.index("run:")
    again = OmegaConf.to_object(OmegaConf.merge(Settings, OmegaConf.create(text)))
    assert again == default
