"""The learner: steps, exact resume, NaN stop, quarantined shards, refused checkpoints."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import torch
from train_helpers import (
    leduc_learner,
    leduc_records,
    leduc_store,
    mexican_train_records,
    tiny_net,
)

from omega_cluster.data import (
    SCHEMA_VERSION,
    ReplayWindow,
    ShardStore,
    ShardWriter,
    records_to_table,
    table_to_batch,
)
from omega_cluster.data.schema import SCHEMA_VERSION_KEY
from omega_cluster.games.leduc_poker.encoder import LeducPokerEncoder
from omega_cluster.games.registry import make_game
from omega_cluster.model import CheckpointError, encoder_for, load_checkpoint
from omega_cluster.train import Learner, LearnerConfig, LearnerError, NonFiniteLossError


def _weights(learner: Learner) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in learner.model.state_dict().items()}


def test_training_lowers_the_loss_of_the_data(tmp_path: Path) -> None:
    learner = leduc_learner()
    batch = table_to_batch(records_to_table(list(leduc_records())))
    before = learner.evaluate(batch)
    window = learner.window(leduc_store(tmp_path))
    stats = learner.train_steps(window, 60)
    after = learner.evaluate(batch)
    assert after["loss"] < before["loss"] and after["value_loss"] < before["value_loss"]
    assert stats.steps == 60 and learner.step == 60 and stats.samples == 60 * 32
    assert stats.samples_per_s > 0 and stats.grad_norm > 0 and stats.window_rows == window.rows


def test_a_learner_with_aux_heads_trains_them_on_the_records_aux_targets(tmp_path: Path) -> None:
    """Mexican Train records carry round pips and who went out; the aux heads learn them."""
    game = make_game("mexican_train", players=2, rounds=1, double_set=9)
    encoder = encoder_for(game)
    records = list(mexican_train_records())
    assert all(r.aux_targets is not None for r in records)
    store = ShardStore(tmp_path)
    ShardWriter(store, writer_id="test").write(records)
    config = LearnerConfig(batch_size=32, lr=3e-3, device="cpu", seed=3, threads=1, aux_coef=1.0)
    net = tiny_net(game, encoder, aux=True)
    assert [h.name for h in net.config.aux_heads] == ["round_pips", "goes_out"]
    learner = Learner(net, config, game=game, encoder=encoder)
    batch = table_to_batch(records_to_table(records))
    before = learner.evaluate(batch)
    stats = learner.train_steps(learner.window(store), 80)
    after = learner.evaluate(batch)
    # who goes out starts at ln 9 (uniform over 8 seats + blocked); 2p rounds use 3 classes
    assert before["aux_loss"] > 2.0 and after["aux_loss"] < 0.6 * before["aux_loss"]
    assert stats.aux_loss > 0 and after["loss"] < before["loss"]
    plain = Learner(tiny_net(game, encoder), config, game=game, encoder=encoder)
    assert plain.evaluate(batch)["aux_loss"] == 0.0  # no heads: the column is ignored


def test_prefetch_is_chosen_by_the_device_unless_set() -> None:
    assert leduc_learner().prefetch is False  # on a CPU: its step would lose a core to it
    assert leduc_learner(prefetch=True).prefetch is True


@pytest.mark.parametrize("mode", ["alphazero", "actor_critic"])
def test_interrupted_and_resumed_training_equals_uninterrupted(tmp_path: Path, mode: str) -> None:
    store = leduc_store(tmp_path / "store")
    schedule = {"mode": mode, "schedule": "cosine", "warmup_steps": 3, "total_steps": 20}
    schedule["prefetch"] = mode == "alphazero"  # either way the same batches are drawn
    straight = leduc_learner(**schedule)
    straight_window = straight.window(store)
    straight.train_steps(straight_window, 8)
    straight.train_steps(straight_window, 7)

    first = leduc_learner(**schedule)
    first.train_steps(first.window(store), 8)
    first.save(tmp_path / "ckpt")
    del first
    resumed = Learner.load(tmp_path / "ckpt")
    assert resumed.step == 8 and resumed.config.mode == mode
    assert resumed.window_position == straight_window.position
    resumed.train_steps(resumed.window(store), 7)
    expected, got = _weights(straight), _weights(resumed)
    assert expected.keys() == got.keys()
    for name in expected:
        assert torch.equal(expected[name], got[name]), name  # bitwise on CPU
    assert resumed.step == straight.step == 15


def test_a_nan_loss_stops_with_a_clear_error_and_keeps_the_last_good_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the store refuses NaN records (test_data_values); the learner's own guard is the last line
    monkeypatch.setattr("omega_cluster.data.schema.value_problem", lambda table: None)
    store = ShardStore(tmp_path / "store")
    writer = ShardWriter(store, writer_id="w")
    writer.write(list(leduc_records()))
    learner = leduc_learner()
    window = learner.window(store)
    learner.train_steps(window, 5)
    learner.save(tmp_path / "good")
    good = _weights(learner)
    poisoned = [
        dataclasses.replace(
            r, observation=np.full_like(r.observation, np.nan), game_id=f"{r.game_id}-nan"
        )  # other games: a game is stored once
        for r in leduc_records()
    ]
    writer.write(poisoned)
    with pytest.raises(NonFiniteLossError, match="not applied.*step 5 \\(the last good one\\)"):
        learner.train_steps(learner.window(store, window_rows=len(poisoned)), 3)
    assert learner.step == 5
    assert all(torch.equal(good[k], v) for k, v in _weights(learner).items())
    kept = load_checkpoint(tmp_path / "good")  # the checkpoint on disk is intact
    assert kept.metadata.step == 5
    assert all(torch.equal(good[k], v) for k, v in kept.model.state_dict().items())


def _hand_written_shard(store: ShardStore, path: Path, version: int) -> None:
    """A shard of another schema version (and NaN observations), with a manifest that lies."""
    records = [
        dataclasses.replace(
            r, observation=np.full_like(r.observation, np.nan), game_id=f"{r.game_id}-nan"
        )  # other games: a game is stored once
        for r in leduc_records()
    ]
    table = records_to_table(records)
    table = table.replace_schema_metadata({SCHEMA_VERSION_KEY: str(version).encode()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as ipc:
        ipc.write_table(table)
    payload = sink.getvalue().to_pybytes()
    name = "00000000000000000001-hand-000001"
    (path / "shards" / f"{name}.arrow").write_bytes(payload)
    entry = {
        "key": "09999999999999999999-hand-000002",
        "shard_path": f"shards/{name}.arrow",
        "rows": table.num_rows,
        "bytes": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
        "schema_version": SCHEMA_VERSION,
        "encoder_versions": [LeducPokerEncoder.version],
        "champion_versions": [0],
        "games": ["leduc_poker"],
        "writer_id": "hand",
        "node_id": "here",
        "created_unix": 0.0,
    }
    (path / "manifest" / f"{entry['key']}.json").write_text(json.dumps(entry))


def test_a_shard_of_another_schema_version_is_quarantined_and_never_trained_on(
    tmp_path: Path,
) -> None:
    store = leduc_store(tmp_path, shards=1)
    good_rows = store.entries()[0].rows
    _hand_written_shard(store, tmp_path, SCHEMA_VERSION + 1)
    learner = leduc_learner()
    window = learner.window(store)
    stats = learner.train_steps(window, 10)  # its NaN rows would make the loss NaN
    assert np.isfinite(stats.loss) and window.quarantined == 1
    assert window.rows == good_rows and window.table().num_rows == good_rows
    (note,) = store.quarantined()
    assert f"schema version {SCHEMA_VERSION + 1}" in note.reason


def test_shards_of_another_encoder_version_or_game_are_skipped(tmp_path: Path) -> None:
    store = leduc_store(tmp_path, shards=1)
    other = [dataclasses.replace(r, encoder_version=99, game_id=f"{r.game_id}-old")
             for r in leduc_records()]  # fmt: skip
    ShardWriter(store, writer_id="old").write(other)
    learner = leduc_learner()
    window = learner.window(store)
    learner.train_steps(window, 2)
    assert [e.encoder_versions for e in window.entries] == [(LeducPokerEncoder.version,)]
    mixed = ReplayWindow(store)  # a window without the learner's filter
    with pytest.raises(LearnerError, match=r"encoder versions \[1, 99\].*version 1 only"):
        learner.train_steps(mixed, 50)


class _NewerLeducEncoder(LeducPokerEncoder):
    version = LeducPokerEncoder.version + 1


def test_checkpoints_of_another_game_or_encoder_or_misfitting_weights_are_refused(
    tmp_path: Path,
) -> None:
    learner = leduc_learner()
    learner.save(tmp_path / "leduc")
    leduc = make_game("leduc_poker")
    with pytest.raises(CheckpointError, match="for game 'leduc_poker', not 'kuhn_poker'"):
        Learner.load(tmp_path / "leduc", game=make_game("kuhn_poker"))
    with pytest.raises(CheckpointError, match="version is 1, the expected encoder has 2"):
        Learner.load(tmp_path / "leduc", game=leduc, encoder=_NewerLeducEncoder(leduc))
    meta = json.loads((tmp_path / "leduc" / "metadata.json").read_text())
    meta["model_config"]["hidden_size"] = 48  # the weights in the file are 32 wide
    (tmp_path / "leduc" / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="weights do not fit the model config"):
        Learner.load(tmp_path / "leduc")


def test_learner_refuses_a_model_that_does_not_fit_the_encoder() -> None:
    kuhn, leduc = make_game("kuhn_poker"), make_game("leduc_poker")
    net = tiny_net(kuhn, encoder_for(kuhn))
    with pytest.raises(LearnerError, match="do not fit encoder leduc_poker"):
        Learner(net, LearnerConfig(device="cpu"), game=leduc, encoder=encoder_for(leduc))


def test_config_is_validated_and_the_schedule_warms_up_then_decays() -> None:
    with pytest.raises(
        LearnerError, match="mode='ppo' is not allowed; allowed: alphazero, actor_critic"
    ):
        LearnerConfig(mode="ppo")
    with pytest.raises(LearnerError, match="value_target"):
        LearnerConfig(value_target="bogus")
    with pytest.raises(LearnerError, match="lr=0"):
        LearnerConfig(lr=0)
    with pytest.raises(ValueError, match="allowed: auto, cpu"):
        LearnerConfig(device="tpu")
    cfg = LearnerConfig(lr=1.0, schedule="cosine", warmup_steps=4, total_steps=14)
    lrs = [cfg.lr_at(s) for s in range(16)]
    assert lrs[:4] == [0.25, 0.5, 0.75, 1.0]
    assert all(a >= b for a, b in zip(lrs[3:], lrs[4:], strict=False))  # noqa: RUF007
    assert abs(lrs[14] - 0.1) < 1e-9 and lrs[15] == lrs[14]  # the floor after the horizon
    assert LearnerConfig(lr=0.5).lr_at(1000) == 0.5


def test_empty_window_and_bad_step_count_are_refused(tmp_path: Path) -> None:
    learner = leduc_learner()
    window = learner.window(ShardStore(tmp_path))
    with pytest.raises(LearnerError, match="holds no rows"):
        learner.train_steps(window, 1)
    with pytest.raises(LearnerError, match="n=0"):
        learner.train_steps(window, 0)
