"""From :class:`~omega_cluster.config.schema.Settings` to the pure components' own configs.

The Hydra groups speak the user's language (one ``search`` group, one ``learner`` group); the
pure components keep their own frozen, validated dataclasses (``SelfPlayConfig``,
``LearnerConfig``, ``ModelConfig``, ``GateConfig`` and the workers' configs that bundle them).
This module, in the service layer next to :mod:`omega_cluster.service`, is the only translation
between the two, so a knob that exists in a group reaches exactly one place, and no worker,
learner, gatekeeper or arena imports the settings.

* the run's game, encoder and first network: :func:`build_game`, :func:`build_encoder`,
  :func:`build_model` (one :class:`~omega_cluster.train.workers.NetworkSpec`);
* the workers' configs: :func:`selfplay_worker_config`, :func:`learner_worker_config`,
  :func:`gate_service_config`, :func:`warm_start_config`;
* the workers themselves, built from the settings (what the in-process backend and the Ray
  actors construct): :func:`selfplay_worker`, :func:`learner_worker`, :func:`gate_service`,
  :func:`warm_start`;
* a run's champion as an arena player: :func:`champion_player`
  (``champion:<run dir>[:<simulations>][:version=<k>]``) and :func:`load_run_settings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from omega_cluster.config import ConfigError, Settings, validate
from omega_cluster.config.schema import SEARCH_KNOBS
from omega_cluster.errors import UserError, one_line
from omega_cluster.eval.gate import GateConfig
from omega_cluster.eval.gatekeeper import (
    GateService,
    GateServiceConfig,
    ModelPlayerSpec,
    model_player,
)
from omega_cluster.games.api import Game
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.fleet import Fleet, fleet_for
from omega_cluster.games.player import Player
from omega_cluster.games.registry import game_plugin, make_game
from omega_cluster.model.network import ModelConfig, PolicyValueNet
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.players.leaf_spec import LeafSpec, parse_leaf
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import warm_start as _warm_start
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig
from omega_cluster.train.workers import (
    LearnerWorker,
    LearnerWorkerConfig,
    NetworkSpec,
    SelfPlayWorker,
    SelfPlayWorkerConfig,
)

__all__ = [
    "RunDirError",
    "build_encoder",
    "build_fleet",
    "build_game",
    "build_model",
    "champion_player",
    "gate_config",
    "gate_service",
    "gate_service_config",
    "leaf_spec",
    "learner_config",
    "learner_worker",
    "learner_worker_config",
    "load_run_settings",
    "model_config",
    "network_spec",
    "run_registry",
    "search_config",
    "selfplay_config",
    "selfplay_worker",
    "selfplay_worker_config",
    "warm_start",
    "warm_start_config",
]


# -- the game and the network -----------------------------------------------------------------
def build_game(settings: Settings) -> Game:
    """The game of the run, with its parameters."""
    return make_game(settings.game.name, **dict(settings.game.params))


def build_fleet(settings: Settings) -> Fleet:
    """The run's tables (``game.fleet`` × ``game.objectives``; the one table of ``game.params``
    without them)."""
    g = settings.game
    return fleet_for(g.name, dict(g.params), g.fleet, g.objectives)


def build_encoder(settings: Settings, game: Game | None = None) -> Encoder:
    return NetworkSpec.build_encoder(game or build_game(settings))


def model_config(settings: Settings, game: Game, encoder: Encoder) -> ModelConfig:
    m = settings.model
    return ModelConfig.for_encoder(
        encoder,
        game,
        trunk=m.trunk,
        hidden_size=m.hidden_size,
        num_layers=m.num_layers,
        action_embedding_size=m.action_embedding_size,
        policy_hidden_size=m.policy_hidden_size,
        value_hidden_size=m.value_hidden_size,
        dropout=m.dropout,
        belief_head=m.belief_head,
        critic=m.critic,
    )


def network_spec(settings: Settings, game: Game | None = None) -> NetworkSpec:
    """The run's game and network sizes, for a worker to rebuild in its own process."""
    game = game or build_game(settings)
    return _spec(settings, model_config(settings, game, build_encoder(settings, game)))


def _spec(settings: Settings, model: ModelConfig) -> NetworkSpec:
    """The network of the run and its tables (every table's encoder checked to share the
    layout of the run's own table: one network plays them all)."""
    g = settings.game
    spec = NetworkSpec(g.name, dict(g.params), model, settings.model.init_seed,
                       fleet=build_fleet(settings))  # fmt: skip
    spec.table_games()  # a FleetError names the two tables whose layouts differ
    return spec


def build_model(settings: Settings, game: Game, encoder: Encoder) -> PolicyValueNet:
    """A freshly initialised network (seeded by ``model.init_seed``: the first champion)."""
    spec = _spec(settings, model_config(settings, game, encoder))
    return spec.fresh_model(encoder)


# -- self-play, the learner, the warm start ---------------------------------------------------
def leaf_spec(settings: Settings) -> LeafSpec:
    s = settings.search
    return parse_leaf(s.leaf, rollouts=s.rollouts, network_value_weight=s.network_value_weight)


def search_config(settings: Settings) -> ISMCTSConfig:
    """The full search's knobs of ``search.*``, validated by the search itself."""
    return ISMCTSConfig(**{name: getattr(settings.search, name) for name in SEARCH_KNOBS})


def selfplay_config(
    settings: Settings, *, games: int, seed: int, champion_version: int, actor: str
) -> SelfPlayConfig:
    s = settings.search
    return SelfPlayConfig(
        games=games,
        concurrent_games=min(settings.cluster.concurrent_games, games),
        mode="search",
        search=search_config(settings),
        fast_simulations=s.fast_simulations,
        full_search_probability=s.full_search_probability,
        temperature=s.temperature,
        temperature_moves=s.temperature_moves,
        final_temperature=s.final_temperature,
        max_moves=s.max_moves,
        seed=seed,
        champion_version=champion_version,
        actor=actor,
    )


def selfplay_worker_config(settings: Settings) -> SelfPlayWorkerConfig:
    c = settings.cluster
    template = selfplay_config(settings, games=c.concurrent_games, seed=0, champion_version=0,
                               actor="selfplay")  # fmt: skip
    return SelfPlayWorkerConfig(network_spec(settings), leaf_spec(settings), template,
                                run_seed=settings.run.seed, torch_threads=c.torch_threads)  # fmt: skip


def learner_config(settings: Settings, *, seed: int) -> LearnerConfig:
    lr = settings.learner
    return LearnerConfig(
        mode=lr.mode,
        value_target=lr.value_target,
        lr=lr.lr,
        weight_decay=lr.weight_decay,
        schedule=lr.schedule,
        warmup_steps=lr.warmup_steps,
        batch_size=lr.batch_size,
        steps_per_call=lr.steps_per_candidate,
        grad_clip=lr.grad_clip,
        device=lr.device,
        threads=lr.threads,
        seed=seed,
    )


def learner_worker_config(settings: Settings) -> LearnerWorkerConfig:
    lr = settings.learner
    learner = learner_config(settings, seed=derive_seed(settings.run.seed, "learner"))
    return LearnerWorkerConfig(network_spec(settings), learner, window_rows=lr.window_rows,
                               min_rows=lr.min_rows,
                               max_samples_per_row=lr.max_samples_per_row,
                               fleet=build_fleet(settings),
                               balance_slices=lr.balance_slices)  # fmt: skip


def warm_start_config(settings: Settings) -> _warm_start.WarmStartConfig:
    lr = settings.learner
    learner = learner_config(settings, seed=derive_seed(settings.run.seed, "warm_start"))
    return _warm_start.WarmStartConfig(games=lr.warm_start_games, steps=lr.warm_start_steps,
                                       learner=learner, max_moves=settings.search.max_moves,
                                       fleet=build_fleet(settings))  # fmt: skip


def selfplay_worker(settings: Settings, *, actor: int, store_uri: str) -> SelfPlayWorker:
    return SelfPlayWorker(selfplay_worker_config(settings), actor=actor, store_uri=store_uri)


def learner_worker(settings: Settings, *, run_dir: str | Path, store_uri: str) -> LearnerWorker:
    return LearnerWorker(learner_worker_config(settings), run_dir=run_dir, store_uri=store_uri)


def warm_start(
    settings: Settings, game: Game, encoder: Encoder, model: PolicyValueNet, directory: Path
) -> _warm_start.WarmStartStats:
    """The run's ``v0`` from the game's rule-based teacher (:mod:`omega_cluster.train.warm_start`)."""
    return _warm_start.warm_start(warm_start_config(settings), game, encoder, model, directory)


# -- the gate ---------------------------------------------------------------------------------
def gate_config(settings: Settings) -> GateConfig:
    g = settings.gate
    return GateConfig(
        mode=g.mode,
        games_per_slice=g.games_per_slice,
        margin=g.margin,
        elo0=g.elo0,
        elo1=g.elo1,
        alpha=g.alpha,
        beta=g.beta,
        min_games=g.min_games,
        max_games=g.max_games,
        slice_level=g.slice_level,
        require_no_worse_slice=g.require_no_worse_slice,
    )


def model_player_spec(settings: Settings) -> ModelPlayerSpec:
    """How the run's checkpoints play at the gate (``gate.player``, the run's search leaf)."""
    s = settings.search
    return ModelPlayerSpec(settings.gate.player, leaf_spec(settings),
                           simulations=settings.gate.bench_simulations, c_uct=s.c_uct,
                           c_puct=s.c_puct)  # fmt: skip


def gate_service_config(settings: Settings) -> GateServiceConfig:
    g = settings.gate
    return GateServiceConfig(
        game=settings.game.name,
        game_params=dict(settings.game.params),
        gate=gate_config(settings),
        player=model_player_spec(settings),
        run_seed=settings.run.seed,
        chunk_games=g.chunk_games,
        paired=g.paired,
        opening_moves=g.opening_moves,
        anchors=dict(g.anchors) or game_plugin(settings.game.name).rating_anchors(),
        anchor_games=g.anchor_games,
        anchor_network_games=g.anchor_network_games,
        fleet=build_fleet(settings),
        torch_threads=settings.cluster.torch_threads,
    )


def gate_service(settings: Settings) -> GateService:
    """The gatekeeper with one in-process bench worker (no Ray)."""
    return GateService(gate_service_config(settings))


# -- a run's champion at an arena table -------------------------------------------------------
class RunDirError(UserError, FileNotFoundError):
    """A directory given as a run (``run.resume``, ``champion:<run>``) that is not one."""


def load_run_settings(run_dir: str | Path, overrides: Sequence[str] = ()) -> Settings:
    """A run's resolved config, with ``key=value`` overrides (e.g. ``gate.bench_simulations=400``).
    A config that does not parse or no longer fits the schema is a :class:`ConfigError` naming
    the file."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise RunDirError(f"{run_dir}: not a run directory (no config.yaml)")
    try:
        merged = OmegaConf.merge(OmegaConf.structured(Settings), OmegaConf.load(path),
                                 OmegaConf.from_dotlist(list(overrides)))  # fmt: skip
        settings = OmegaConf.to_object(merged)
    except (OSError, yaml.YAMLError, OmegaConfBaseException) as err:
        given = f" with overrides {' '.join(overrides)}" if overrides else ""
        raise ConfigError(f"{path}{given} is not a valid run config: {one_line(err)}") from err
    assert isinstance(settings, Settings)
    return validate(settings)


def run_registry(run_dir: str | Path, settings: Settings) -> ModelRegistry:
    """The model registry of the run at ``run_dir``, opened under the game name the run recorded
    (the game's own name: a user's game is configured by its import path)."""
    return ModelRegistry(run_dir, game=build_game(settings).spec.name)


def champion_player(
    game: Game,
    run: str,
    simulations: int | None = None,
    version: int | None = None,
    leaf: str | None = None,
) -> Player:
    """The champion of the run in directory ``run`` (or its model ``version``), playing ``game``
    the way the run's gate plays it (:func:`omega_cluster.eval.gatekeeper.model_player`): under
    ``gate.player=search`` the run's own search with the checkpoint's network in its leaf, else
    the greedy network. ``simulations`` overrides the bench budget ("extended thinking" with the
    same weights: a model trained and gated at 64 simulations per move can play at 400)::

        omega-cluster arena game=mexican_train seats=champion:runs/default:400,commander games=200

    The run's resolved ``config.yaml`` decides the search; the table's game must be the run's
    game (same name, and a table size the run trained: one of its fleet's), else a clear error
    names both. Other game parameters
    may differ (a network trained on single rounds of Mexican Train plays a full campaign).
    ``leaf`` plays the checkpoint in the search with another leaf (``search.leaf``, e.g.
    ``champion:runs/default:64:leaf=critic``): the same weights, searched with the critic's
    value or a rollout at the leaf, whatever the run's gate played."""
    for key, value, low, kind in (("simulations", simulations, 1, "a positive"),
                                  ("version", version, 0, "a non-negative")):  # fmt: skip
        if value is not None and (type(value) is not int or value < low):
            raise PlayerSpecError(f"champion: {key} must be {kind} int, got {value!r}")
    run = str(run)  # a spec argument that looks like a number parses as one
    changes = [] if leaf is None else [f"search.leaf={leaf}", "gate.player=search"]
    try:
        settings = load_run_settings(run, changes)
    except ConfigError as err:
        if leaf is None:
            raise
        raise PlayerSpecError(f"champion: leaf={leaf} for run {run}: {one_line(err)}") from None
    trained = build_game(settings)
    sizes = build_fleet(settings).player_counts
    if trained.spec.name != game.spec.name or game.num_players not in sizes:
        counts = " or ".join(map(str, sizes))
        raise PlayerSpecError(
            f"champion: run {run} trained {trained.spec.name} with {counts} players; this table "
            f"is {game.spec.name} with {game.num_players}"
        )
    registry = run_registry(run, settings)
    model = registry.champion if version is None else registry.get(version)
    if model is None:
        why = "" if registry.path.exists() else f" (no {registry.path.name})"
        raise PlayerSpecError(f"champion: run {run} has no champion yet{why}")
    budget = settings.gate.bench_simulations if simulations is None else simulations
    player = model_player(model_player_spec(settings), game, model.uri, simulations=budget)
    searched = settings.gate.player != "network"
    player.name = f"champion:{Path(run).name}:v{model.version}" + (f":{budget}" if searched else "")
    player.name += "" if leaf is None else f":leaf={leaf}"
    return player
