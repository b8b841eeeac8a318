"""The player of an exported RLlib policy (omega_cluster/players/rllib.py), without Ray: a
hand-written policy directory, its forward pass, masking, and the one-line refusals."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from omega_cluster.errors import UserError
from omega_cluster.games.registry import make_game
from omega_cluster.model.encoders import encoder_for
from omega_cluster.players.registry import make_player
from omega_cluster.players.rllib import POLICY_FORMAT, POLICY_META, POLICY_WEIGHTS


def _write(directory: Path, game_name: str, sizes: tuple[int, ...], **meta: object) -> Path:
    """A policy of Linear layers ``sizes[0] -> ... -> sizes[-1]``, tanh between them."""
    game = make_game(game_name)
    rng = np.random.default_rng(0)
    tensors, layers = {}, []
    for k, (a, b) in enumerate(itertools.pairwise(sizes)):
        tensors[f"layer{k}.weight"] = rng.normal(size=(b, a)).astype(np.float32)
        tensors[f"layer{k}.bias"] = rng.normal(size=b).astype(np.float32)
        layers.append(
            {"name": f"layer{k}", "activation": "tanh" if k < len(sizes) - 2 else "linear"}
        )
    directory.mkdir(parents=True)
    save_file(tensors, str(directory / POLICY_WEIGHTS))
    info = {"format": POLICY_FORMAT, "version": 1, "game": game_name,
            "params": json.loads(json.dumps(dict(game.params))), "layers": layers, **meta}  # fmt: skip
    (directory / POLICY_META).write_text(json.dumps(info))
    return directory


def test_the_forward_pass_masks_and_samples_legal_moves(tmp_path: Path) -> None:
    game = make_game("leduc_poker")
    size = encoder_for(game).observation_size
    policy = _write(tmp_path / "out" / "policy", "leduc_poker", (size, 8, 3))
    player = make_player(f"rllib:{tmp_path / 'out'}", game)  # the baseline's out dir works too
    greedy = make_player(f"rllib:{policy}:greedy", game)
    state = game.new_initial_state(0)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    seat = state.current_players[0]
    obs = encoder_for(game).encode_observation(state, seat)
    w0, b0 = player.layers[0][0], player.layers[0][1]
    w1, b1 = player.layers[1][0], player.layers[1][1]
    np.testing.assert_allclose(
        player.logits(state, seat), w1 @ np.tanh(w0 @ obs + b0) + b1, rtol=1e-5
    )
    legal = list(state.legal_actions(seat))
    assert 0 not in legal  # no fold before a bet
    picks = {player.act(state, seat, random.Random(s)) for s in range(50)}
    assert picks <= set(legal)
    best = legal[int(np.argmax(player.logits(state, seat)[legal]))]
    assert greedy.act(state, seat, random.Random(0)) == best


def test_bad_policy_directories_are_one_line_errors(tmp_path: Path) -> None:
    leduc = make_game("leduc_poker")
    with pytest.raises(UserError, match="no policy.json"):
        make_player(f"rllib:{tmp_path / 'none'}", leduc)
    kuhn = _write(
        tmp_path / "kuhn", "kuhn_poker", (encoder_for(make_game("kuhn_poker")).observation_size, 2)
    )
    with pytest.raises(UserError, match="the policy plays kuhn_poker .*not leduc_poker"):
        make_player(f"rllib:{kuhn}", leduc)
    wrong = _write(tmp_path / "wrong", "leduc_poker", (5, 3))
    with pytest.raises(UserError, match="maps 5 inputs to 3 actions; leduc_poker observes"):
        make_player(f"rllib:{wrong}", leduc)
    odd = _write(
        tmp_path / "odd", "leduc_poker", (encoder_for(leduc).observation_size, 3), version=2
    )
    with pytest.raises(UserError, match="not a policy of version 1"):
        make_player(f"rllib:{odd}", leduc)
