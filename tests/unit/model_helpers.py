"""Helpers shared by the model tests (imported as a plain module from ``tests/unit``)."""

from __future__ import annotations

import torch

from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, PolicyValueNet, encoder_for

# (registry name, parameters): one small configuration of every game with an encoder
GAMES: list[tuple[str, dict[str, object]]] = [
    ("mexican_train", {"players": 3, "rounds": 2}),
    ("mexican_train", {"players": 2, "rounds": 1, "double_set": 9, "first_turn_chain": True}),
    ("kuhn_poker", {"players": 3}),
    ("leduc_poker", {}),
    ("leduc_poker", {"players": 3, "suit_isomorphism": True}),
    ("goofspiel", {"num_cards": 5}),
    ("goofspiel", {"num_cards": 5, "players": 3, "imp_info": True}),
    ("openspiel:leduc_poker", {}),
]


def game_id(case: tuple[str, dict[str, object]]) -> str:
    name, params = case
    return name + "".join(f"-{k}={v}" for k, v in params.items())


def small_net(
    game: Game, encoder: Encoder, *, randomize: bool = True, seed: int = 0, **overrides: object
) -> PolicyValueNet:
    """A small network for ``encoder``; ``randomize`` replaces the neutral zero-initialized
    output layers with random weights so outputs differ between positions."""
    torch.manual_seed(seed)
    kwargs: dict[str, object] = {
        "hidden_size": 32,
        "num_layers": 1,
        "action_embedding_size": 16,
        "policy_hidden_size": 16,
        "value_hidden_size": 16,
    }
    kwargs.update(overrides)
    config = ModelConfig.for_encoder(encoder, game, **kwargs)  # type: ignore[arg-type]
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    if randomize:
        with torch.no_grad():
            for p in net.parameters():
                if p.dim() > 1:
                    p.normal_(0.0, 0.3)
    return net.eval()


def leduc() -> tuple[Game, Encoder]:
    game = make_game("leduc_poker")
    return game, encoder_for(game)
