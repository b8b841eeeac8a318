"""A training run's models as players: ``champion:<run dir>[:<simulations>][:version=<k>]``.

The champion of a run (or any version of its registry) plays the way the run's gate plays it
(:func:`omega_cluster.eval.gatekeeper.model_player`): under ``gate.player=search`` the run's own
search with the checkpoint's network in its leaf, else the greedy network. ``simulations``
overrides the bench budget, the Ω reference's "extended thinking (same weights)": a model trained
and gated at 64 simulations per move can play at 400. So a trained champion sits at an arena
table like any other player::

    omega-cluster arena game=mexican_train seats=champion:runs/default:400,commander games=200

The run's resolved ``config.yaml`` decides the search; the table's game must be the run's game
(same name and number of players), else a clear error names both. Other game parameters may
differ (a network trained on single rounds of Mexican Train plays a full campaign, round by
round; the arena's ``rounds=1`` matches the default run).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from omegaconf import OmegaConf

from omega_cluster.config import Settings, validate
from omega_cluster.games.api import Game
from omega_cluster.games.player import Player

__all__ = ["champion_player", "load_run_settings"]


def load_run_settings(run_dir: str | Path, overrides: Sequence[str] = ()) -> Settings:
    """A run's resolved config, with ``key=value`` overrides (e.g. ``gate.bench_simulations=400``)."""
    path = Path(run_dir) / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: not a run directory (no config.yaml)")
    merged = OmegaConf.merge(OmegaConf.structured(Settings), OmegaConf.load(path),
                             OmegaConf.from_dotlist(list(overrides)))  # fmt: skip
    settings = OmegaConf.to_object(merged)
    assert isinstance(settings, Settings)
    return validate(settings)


def champion_player(
    game: Game, run: str, simulations: int | None = None, version: int | None = None
) -> Player:
    """The champion of the run in directory ``run`` (or its model ``version``), playing ``game``
    as the run's gate plays it, at ``simulations`` per move (default: the run's bench budget)."""
    from omega_cluster.config.build import build_game
    from omega_cluster.eval.gatekeeper import model_player
    from omega_cluster.model.registry import ModelRegistry

    if simulations is not None and (isinstance(simulations, bool) or simulations < 1):
        raise ValueError(f"champion: simulations must be a positive int, got {simulations!r}")
    settings = load_run_settings(run)
    trained = build_game(settings)
    if (trained.spec.name, trained.num_players) != (game.spec.name, game.num_players):
        raise ValueError(
            f"champion: run {run} trained {trained.spec.name} with {trained.num_players} "
            f"players; this table is {game.spec.name} with {game.num_players}"
        )
    registry = ModelRegistry(run, game=settings.game.name)
    model = registry.champion if version is None else registry.get(int(version))
    if model is None:
        raise ValueError(f"champion: run {run} has no champion yet")
    budget = settings.gate.bench_simulations if simulations is None else simulations
    player = model_player(settings, game, model.uri, simulations=budget)
    searched = settings.gate.player != "network"
    player.name = f"champion:{Path(run).name}:v{model.version}" + (f":{budget}" if searched else "")
    return player
