"""``omega-cluster export checkpoint=<dir> out=<dir>``: a portable agent bundle from a checkpoint
(:func:`omega_cluster.model.export.export_bundle`): ``model.onnx``, ``encoder.json``,
``README.md``; keys in :data:`EXPORT_KEYS`. torch is imported only when this command runs.
"""

from __future__ import annotations

import argparse

from omega_cluster.cli.args import Settings, UsageError, key_command

__all__ = ["EXPORT", "EXPORT_KEYS"]

EXPORT_KEYS: dict[str, str] = {
    "checkpoint": "checkpoint directory (model.safetensors + metadata.json)",
    "out": "directory to write the bundle to (model.onnx, encoder.json, README.md)",
    "opset": "ONNX opset (default 17)",
    "verify": "positions of random playouts on which ONNX Runtime must match torch (default 64)",
    "overwrite": "replace an existing out directory (default false)",
}


def run_export(args: argparse.Namespace) -> int:
    s = Settings("export", args.settings, EXPORT_KEYS)
    s.require("checkpoint=<dir>", "out=<dir>")
    opset = s.integer("opset", 17, minimum=7)
    verify = s.integer("verify", 64, minimum=0)
    overwrite = s.flag("overwrite", False)
    # lazy: torch takes seconds to import and no other command needs it
    from omega_cluster.model import CheckpointError, EncoderError, ExportError, export_bundle

    try:
        result = export_bundle(
            s.text("checkpoint"),
            s.text("out"),
            opset=opset,
            verify_positions=verify,
            overwrite=overwrite,
        )
    except (CheckpointError, EncoderError, ExportError) as err:
        raise UsageError(str(err)) from err
    check = (
        "not verified"
        if result.max_difference is None
        else f"ONNX Runtime matches torch within {result.max_difference:.2g}"
    )
    print(f"wrote {result.directory} (model.onnx, encoder.json, README.md); {check}")
    return 0


EXPORT = key_command(
    "export",
    "write a portable agent bundle (ONNX + encoder metadata + README) from a checkpoint",
    EXPORT_KEYS,
    run_export,
    usage=("omega-cluster export checkpoint=runs/leduc/v3 out=bundles/leduc-v3",),
)
