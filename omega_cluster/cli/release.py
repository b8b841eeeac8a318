"""``omega-cluster release run=<run dir> [version=<k>] [strength=<json>] out=<dir>``: a run's
champion (or version k) as a released folder (:mod:`omega_cluster.release`): the checkpoint
``network:<dir>`` seats, its ONNX bundle and a model card from what the run recorded.

    omega-cluster release run=runs/mexican_train-20261129-120000 out=models/mexican_train
    omega-cluster release run=<run dir> strength=bench/champion.json out=models/mexican_train
    omega-cluster arena game=mexican_train seats=network:models/mexican_train,commander

Keys in :data:`RELEASE_KEYS`; a bad one, a folder that is not a run, an unknown version or a
different release already in ``out`` (without ``force=true``) is one line, exit status 2.
torch, Hydra and MLflow are imported only when this command runs.
"""

from __future__ import annotations

import argparse
import shlex

from omega_cluster.cli.args import PROG, Settings, check_writable, key_command

__all__ = ["RELEASE", "RELEASE_KEYS"]

RELEASE_KEYS: dict[str, str] = {
    "run": "the training run's directory (its config.yaml, registry.json, pipeline.json)",
    "out": "the release folder to write (e.g. models/mexican_train)",
    "version": "the model version to release (default: the run's champion)",
    "strength": "a bench's strength measurements, JSON {rows: [...]}, for the card (optional)",
    "force": "replace a different release already in out (default false)",
    "verify": "positions of random playouts on which ONNX Runtime must match torch (default 64)",
}


def run_release(args: argparse.Namespace) -> int:
    s = Settings("release", args.settings, RELEASE_KEYS)
    s.require("run=<dir>", "out=<dir>")
    version = s.integer("version", minimum=0) if s.text("version") else None
    force = s.flag("force", False)
    verify = s.integer("verify", 64, minimum=0)
    out = s.text("out")
    check_writable("out", out)
    # lazy: torch, Hydra and MLflow take seconds to import and no other command needs them all
    from omega_cluster.release import read_run, read_strength, write_release

    strength = read_strength(s.text("strength")) if s.text("strength") else None
    record = read_run(s.text("run"), version)
    command = shlex.join([PROG, "release", *args.settings])
    result = write_release(record, out, strength=strength, force=force,
                           command=command, verify_positions=verify)  # fmt: skip
    check = (
        "ONNX not verified"
        if result.onnx_difference is None
        else f"ONNX Runtime matches torch within {result.onnx_difference:.2g}"
    )
    print(
        f"released v{result.version} of {record.run_dir} to {result.directory} "
        f"(model.safetensors, metadata.json, model.onnx, encoder.json, MODEL_CARD.md); {check}"
    )
    print(f"seat it as network:{out}")
    return 0


RELEASE = key_command(
    "release",
    "release a run's champion: checkpoint, ONNX bundle and model card in one folder",
    RELEASE_KEYS,
    run_release,
    usage=(
        "omega-cluster release run=runs/mexican_train-20261129-120000 out=models/mexican_train",
        "omega-cluster release run=<run dir> strength=bench/champion.json out=models/mexican_train",
        "omega-cluster arena game=mexican_train seats=network:models/mexican_train,commander",
    ),
)
