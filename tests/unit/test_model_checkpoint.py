"""Checkpoints: round trip (weights, metadata, optimizer state), resume equivalence, atomic
writes and every bad-input error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from model_helpers import leduc, small_net

from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    CheckpointError,
    encode_batch,
    encoder_for,
    load_checkpoint,
    load_weights,
    random_positions,
    read_metadata,
    save_checkpoint,
)


def _train(net, optimizer, batch, steps: int) -> None:  # type: ignore[no-untyped-def]
    obs, feats, mask = batch
    for _ in range(steps):
        out = net(obs, feats, mask)
        loss = (out.values**2).mean() - torch.log_softmax(out.logits, -1)[:, 0].mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_round_trip_and_resume_gives_the_same_weights(tmp_path: Path) -> None:
    game, encoder = leduc()
    batch = encode_batch(encoder, random_positions(game, 12, seed=0))
    torch.manual_seed(0)
    reference = small_net(game, encoder)
    reference.train()
    opt = torch.optim.AdamW(reference.parameters(), lr=1e-2)
    _train(reference, opt, batch, 3)
    meta = save_checkpoint(
        tmp_path / "v3",
        reference,
        game=game,
        encoder=encoder,
        optimizer=opt,
        step=3,
        version=3,
        parent_version=2,
        metrics={"value_loss": 0.25},
        training_state={"manifest_position": 17, "shards": ["a", "b"]},
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v3"]  # no temporary left behind
    loaded = load_checkpoint(tmp_path / "v3", expected_game=game, expected_encoder=encoder)
    assert loaded.metadata == meta == read_metadata(tmp_path / "v3")
    assert meta.game == "leduc_poker" and meta.encoder.version == encoder.version
    assert meta.metrics == {"value_loss": 0.25} and meta.parent_version == 2 and meta.created
    assert meta.training_state == {"manifest_position": 17, "shards": ("a", "b")}
    for name, tensor in reference.state_dict().items():
        assert torch.equal(tensor, loaded.model.state_dict()[name])
    # continue both: the restored optimizer gives bit-identical weights
    _train(reference, opt, batch, 2)
    resumed = loaded.model.train()
    opt2 = torch.optim.AdamW(resumed.parameters(), lr=1e-2)
    assert loaded.optimizer_state is not None
    opt2.load_state_dict(loaded.optimizer_state)
    _train(resumed, opt2, batch, 2)
    for name, tensor in reference.state_dict().items():
        assert torch.equal(tensor, resumed.state_dict()[name]), name
    # no pickle anywhere: every file is JSON or safetensors
    assert sorted(p.name for p in (tmp_path / "v3").iterdir()) == [
        "metadata.json",
        "model.safetensors",
        "optimizer.json",
        "optimizer.safetensors",
    ]


def test_overwrite_is_explicit_and_atomic(tmp_path: Path) -> None:
    game, encoder = leduc()
    save_checkpoint(
        tmp_path / "c", small_net(game, encoder, seed=1), game=game, encoder=encoder, step=1
    )
    with pytest.raises(CheckpointError, match="already exists; pass overwrite=True"):
        save_checkpoint(tmp_path / "c", small_net(game, encoder), game=game, encoder=encoder)
    save_checkpoint(
        tmp_path / "c",
        small_net(game, encoder, seed=2),
        game=game,
        encoder=encoder,
        step=2,
        overwrite=True,
    )
    assert read_metadata(tmp_path / "c").step == 2
    assert load_checkpoint(tmp_path / "c").optimizer_state is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_bad_checkpoints_get_clear_errors(tmp_path: Path) -> None:
    game, encoder = leduc()
    net = small_net(game, encoder)
    path = tmp_path / "ok"
    save_checkpoint(path, net, game=game, encoder=encoder)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="metadata.json is missing"):
        load_checkpoint(tmp_path / "empty")
    with pytest.raises(CheckpointError, match="is for game 'leduc_poker', not 'kuhn_poker'"):
        load_checkpoint(path, expected_game="kuhn_poker")
    with pytest.raises(
        CheckpointError, match="trained with encoder 'leduc_poker', not 'kuhn_poker'"
    ):
        load_checkpoint(path, expected_encoder="kuhn_poker")
    with pytest.raises(CheckpointError, match="encoder leduc_poker version 1, expected version 2"):
        load_checkpoint(path, expected_encoder_version=2)
    other = encoder_for(make_game("leduc_poker", players=3))
    with pytest.raises(
        CheckpointError, match="observation_size is 37, the expected encoder has 60"
    ):
        load_checkpoint(path, expected_encoder=other)
    # weights that do not fit the model config: name the tensor and both shapes
    meta = json.loads((path / "metadata.json").read_text())
    meta["model_config"]["hidden_size"] = 48
    (path / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(
        CheckpointError,
        match=r"tensor 'policy_dot.weight' has shape \(16, 32\) in the file, the model expects \(16, 48\)",
    ):
        load_checkpoint(path)
    bigger = small_net(game, encoder, num_layers=2)
    with pytest.raises(CheckpointError, match="missing tensors.*trunk.blocks.1"):
        load_weights(bigger, path)
    with pytest.raises(CheckpointError, match="unknown model config field"):
        meta["model_config"]["widths"] = 3
        (path / "metadata.json").write_text(json.dumps(meta))
        load_checkpoint(path)
    (path / "metadata.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="not valid checkpoint metadata"):
        load_checkpoint(path)


def test_corrupt_weights_are_refused(tmp_path: Path) -> None:
    game, encoder = leduc()
    save_checkpoint(tmp_path / "c", small_net(game, encoder), game=game, encoder=encoder)
    weights = tmp_path / "c" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="checksum mismatch"):
        load_checkpoint(tmp_path / "c")
