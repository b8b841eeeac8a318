"""``omega-cluster export checkpoint=<dir> out=<dir>``: a portable agent bundle from a checkpoint
(:func:`omega_cluster.model.export.export_bundle`): ``model.onnx``, ``encoder.json``,
``README.md``; keys in :data:`EXPORT_KEYS`. torch is imported only when this command runs.
"""

from __future__ import annotations

import argparse

from omega_cluster.cli.args import Command, UsageError, flag, integer, parse_key_values

__all__ = ["EXPORT", "EXPORT_KEYS"]

EXPORT_KEYS: dict[str, str] = {
    "checkpoint": "checkpoint directory (model.safetensors + metadata.json)",
    "out": "directory to write the bundle to (model.onnx, encoder.json, README.md)",
    "opset": "ONNX opset (default 17)",
    "verify": "positions of random playouts on which ONNX Runtime must match torch (default 64)",
    "overwrite": "replace an existing out directory (default false)",
}


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("settings", nargs="*", metavar="key=value", help="export keys")


def run_export(args: argparse.Namespace) -> int:
    pairs = parse_key_values(args.settings)
    unknown = [key for key in pairs if key not in EXPORT_KEYS]
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r}; export keys: {', '.join(EXPORT_KEYS)}")
    missing = [key for key in ("checkpoint", "out") if not pairs.get(key)]
    if missing:
        raise UsageError(f"export needs {' and '.join(f'{k}=<dir>' for k in missing)}")
    # lazy: torch takes seconds to import and no other command needs it
    from omega_cluster.model import CheckpointError, EncoderError, ExportError, export_bundle

    try:
        result = export_bundle(
            pairs["checkpoint"],
            pairs["out"],
            opset=integer("opset", pairs.get("opset", "17"), minimum=7),
            verify_positions=integer("verify", pairs.get("verify", "64"), minimum=0),
            overwrite=flag("overwrite", pairs.get("overwrite", "false")),
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


EXPORT = Command(
    "export",
    "write a portable agent bundle (ONNX + encoder metadata + README) from a checkpoint",
    _configure_export,
    run_export,
    epilog="export keys:\n"
    + "\n".join(f"  {k:<10} {v}" for k, v in EXPORT_KEYS.items())
    + "\nexample: omega-cluster export checkpoint=runs/leduc/v3 out=bundles/leduc-v3",
)
