"""From :class:`~omega_cluster.config.schema.Settings` to the pure components' own configs.

The Hydra groups speak the user's language (one ``search`` group, one ``learner`` group); the
pure components keep their own validated dataclasses (``SelfPlayConfig``, ``LearnerConfig``,
``ModelConfig``, ``GateConfig``). This module is the only translation between the two, so a
knob that exists in a group reaches exactly one place.
"""

from __future__ import annotations

from typing import Any

import torch

from omega_cluster.config.schema import Settings
from omega_cluster.eval.gate import GateConfig
from omega_cluster.games.api import Game
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for
from omega_cluster.model.encoders import Encoder
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig

__all__ = [
    "build_encoder",
    "build_game",
    "build_model",
    "gate_config",
    "leaf_evaluator",
    "learner_config",
    "model_config",
    "selfplay_config",
    "uses_network",
]


def build_game(settings: Settings) -> Game:
    """The game of the run, with its parameters."""
    return make_game(settings.game.name, **dict(settings.game.params))


def build_encoder(settings: Settings, game: Game | None = None) -> Encoder:
    return encoder_for(game or build_game(settings))


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
    )


def build_model(settings: Settings, game: Game, encoder: Encoder) -> PolicyValueNet:
    """A freshly initialised network (seeded by ``model.init_seed``: the first champion)."""
    config = model_config(settings, game, encoder)
    state = torch.random.get_rng_state()
    torch.manual_seed(settings.model.init_seed)
    try:
        return PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    finally:
        torch.random.set_rng_state(state)


def selfplay_config(
    settings: Settings, *, games: int, seed: int, champion_version: int, actor: str
) -> SelfPlayConfig:
    s = settings.search
    options: dict[str, Any] = {}
    return SelfPlayConfig(
        games=games,
        concurrent_games=min(settings.cluster.concurrent_games, games),
        mode="search",
        simulations=s.simulations,
        fast_simulations=s.fast_simulations,
        full_search_probability=s.full_search_probability,
        selection=s.selection,
        c_uct=s.c_uct,
        c_puct=s.c_puct,
        temperature=s.temperature,
        temperature_moves=s.temperature_moves,
        final_temperature=s.final_temperature,
        dirichlet_alpha=s.dirichlet_alpha,
        dirichlet_fraction=s.dirichlet_fraction,
        search_options=options,
        max_moves=s.max_moves,
        seed=seed,
        champion_version=champion_version,
        actor=actor,
    )


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


NETWORK_LEAF = "network"


def uses_network(leaf: str) -> bool:
    """Whether a leaf reads the network: ``network`` or ``network+<rollout leaf>``."""
    return leaf == NETWORK_LEAF or leaf.startswith(NETWORK_LEAF + "+")


def leaf_evaluator(
    settings: Settings, game: Game, model: PolicyValueNet | None, encoder: Encoder | None
) -> Evaluator:
    """The search leaf ``search.leaf`` names.

    * ``network`` — the network's prior and value (the Ω reference's Path A);
    * a rollout leaf (``random``, ``commander_rollout``, …) — rollouts only (Path B);
    * ``network+<rollout leaf>`` — the network's prior with a value mixed from both,
      ``search.network_value_weight`` on the network (AlphaGo's λ-mix; 0 = rollout values only).
    """
    from omega_cluster.model.inference import NetworkEvaluator
    from omega_cluster.players.search import build_leaf_evaluator
    from omega_cluster.search.evaluators import BlendEvaluator

    leaf, s = settings.search.leaf, settings.search
    if not uses_network(leaf):
        return build_leaf_evaluator(game, leaf, rollouts=s.rollouts)
    if model is None or encoder is None:
        raise ValueError(f"search.leaf={leaf!r} needs the network")
    network = NetworkEvaluator(model, encoder, device="cpu")
    if leaf == NETWORK_LEAF:
        return network
    rollout = build_leaf_evaluator(game, leaf.split("+", 1)[1], rollouts=s.rollouts)
    w = s.network_value_weight
    return BlendEvaluator(network, rollout, weight_a=w, weight_b=1.0 - w)
