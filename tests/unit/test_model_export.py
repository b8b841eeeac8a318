"""ONNX export: ONNX Runtime agrees with torch within 1e-5 on real encoded positions (Mexican
Train and Leduc, both trunks), and the ``omega-cluster export`` bundle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from model_helpers import small_net

from omega_cluster.cli import main
from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    encode_batch,
    encoder_for,
    export_onnx,
    random_positions,
    save_checkpoint,
    verify_onnx,
)


@pytest.mark.parametrize(
    ("name", "params", "trunk"),
    [
        ("mexican_train", {"players": 3, "rounds": 1}, "mlp"),
        ("leduc_poker", {}, "mlp"),
        ("mexican_train", {"players": 2, "rounds": 1}, "transformer"),
    ],
)
def test_onnx_runtime_matches_torch(
    tmp_path: Path, name: str, params: dict[str, object], trunk: str
) -> None:
    game = make_game(name, **params)
    encoder = encoder_for(game)
    net = small_net(game, encoder, trunk=trunk, aux=name == "mexican_train")
    path = export_onnx(net, tmp_path / "m.onnx")
    # two batches of different sizes and legal-set widths: the axes are dynamic
    for count, seed in ((48, 1), (5, 2)):
        batch = encode_batch(encoder, random_positions(game, count, seed=seed))
        assert verify_onnx(net, path, *batch, atol=1e-5) <= 1e-5


def test_export_cli_writes_a_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = make_game("leduc_poker")
    encoder = encoder_for(game)
    save_checkpoint(
        tmp_path / "v7", small_net(game, encoder), game=game, encoder=encoder, version=7
    )
    out = tmp_path / "bundle"
    assert main(["export", f"checkpoint={tmp_path / 'v7'}", f"out={out}", "verify=16"]) == 0
    assert "ONNX Runtime matches torch" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "encoder.json", "model.onnx"]
    description = json.loads((out / "encoder.json").read_text())
    assert (
        description["encoder"]["name"] == "leduc_poker" and description["encoder"]["version"] == 1
    )
    assert description["inputs"]["observations"] == ["float32", ["batch", 37]]
    assert description["checkpoint"]["version"] == 7
    assert description["onnx_vs_torch_max_abs_difference"] <= 1e-5
    readme = (out / "README.md").read_text()
    assert "legal_mask" in readme and "| chips |" in readme
    # bad input: exit status 2, one line naming the problem, nothing written
    assert main(["export", f"checkpoint={tmp_path / 'v7'}", f"out={out}"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export", f"checkpoint={tmp_path / 'nope'}", f"out={tmp_path / 'b2'}"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["export", "out=x"]) == 2
    assert "export needs checkpoint=<dir>" in capsys.readouterr().err
    assert main(["export", "checkpoint=a", "out=b", "opset=x"]) == 2
    assert not (tmp_path / "b2").exists()
