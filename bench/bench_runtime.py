"""Inference runtime by measurement: torch (eager, traced, compiled) against ONNX Runtime, on CPU.

One thread everywhere (a self-play actor has one core): ``torch.set_num_threads(1)`` with
``torch.inference_mode``; ONNX Runtime with ``intra_op_num_threads=1``, ``inter_op_num_threads=1``,
sequential execution and every graph optimisation. Two networks:

* ``mlp165k`` — the 165k-parameter MLP of ``bench_batching`` (Mexican Train 4p, inputs → 128 → 128
  → actions + players), on the batching bench's encoding of random positions;
* ``default`` — the default run's :class:`~omega_cluster.model.network.PolicyValueNet`
  (``conf/model/default.yaml`` on the default game, Mexican Train 2p, random weights), on the
  game's own encoder (observations, padded action features, legal mask) of random positions.

Backends: ``eager`` (the reference), ``jit`` (``torch.jit.trace`` + ``torch.jit.freeze``),
``compile`` (``torch.compile``, inductor; one compile per batch size, cost printed), ``ort``
(exported with ``torch.onnx.export`` / :func:`omega_cluster.model.export.export_onnx`). A backend
that fails to build is skipped with its error. Printed per batch size (1 … 512): positions/s of
each backend, its ratio to eager, and the largest absolute difference of its outputs from eager
(priors and values for ``default``: softmax of the logits over the legal actions). Also the cost
of a new champion's weights on each path (load into torch vs re-export + new ONNX session).
``--quick``: batches 1, 64, 256, short timings, no compile. Run: ``python -m bench.bench_runtime``.
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.bench_batching import PolicyValueMLP, encode, input_size
from bench.bench_inference import _rate
from bench.results import Figure, record
from omega_cluster.config.load import load_settings
from omega_cluster.games.registry import make_game
from omega_cluster.model import encode_batch, export_onnx, pin_threads, random_positions
from omega_cluster.wiring import build_encoder, build_game, build_model

BATCHES = (1, 8, 32, 64, 128, 256, 512)
Run = Callable[[], list[np.ndarray]]  # one forward pass of the fixed batch: numpy outputs


def _session(path: Path) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class Net:
    """A network, its inputs at every batch size and how each backend runs them."""

    def __init__(self, name: str, module: torch.nn.Module, inputs: list[np.ndarray]) -> None:
        self.name, self.module, self.inputs = name, module.eval(), inputs  # inputs at 512 rows
        self.parameters = sum(p.numel() for p in module.parameters())
        self.compile_s: dict[int, float] = {}  # torch.compile's first call, per batch size

    def batch(self, size: int) -> list[np.ndarray]:
        return [np.ascontiguousarray(x[:size]) for x in self.inputs]

    def outputs(self, raw: list[np.ndarray], mask: np.ndarray | None) -> list[np.ndarray]:
        """What is compared: raw outputs, or (priors over legal actions, values)."""
        if mask is None:
            return raw
        logits = np.where(mask, raw[0].astype(np.float64), -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        priors = np.exp(logits)
        priors /= priors.sum(axis=1, keepdims=True)
        return [priors, raw[1]]

    def eager(self, size: int) -> Run:
        tensors = [torch.from_numpy(x) for x in self.batch(size)]

        def run() -> list[np.ndarray]:
            with torch.inference_mode():
                return _numpy(self.module(*tensors))

        return run

    def jit(self, size: int) -> Run:
        tensors = [torch.from_numpy(x) for x in self.batch(size)]
        with torch.inference_mode():
            traced = torch.jit.freeze(torch.jit.trace(_Tuple(self.module).eval(), tuple(tensors)))

        def run() -> list[np.ndarray]:
            with torch.inference_mode():
                return _numpy(traced(*tensors))

        return run

    def compile(self, size: int) -> Run:
        tensors = [torch.from_numpy(x) for x in self.batch(size)]
        compiled = torch.compile(_Tuple(self.module).eval(), dynamic=False)
        start = time.perf_counter()
        with torch.inference_mode():
            compiled(*tensors)
        self.compile_s[size] = time.perf_counter() - start

        def run() -> list[np.ndarray]:
            with torch.inference_mode():
                return _numpy(compiled(*tensors))

        return run

    def ort(self, size: int, session: Any) -> Run:
        names = [i.name for i in session.get_inputs()]
        feeds = dict(zip(names, self.batch(size), strict=True))

        def run() -> list[np.ndarray]:
            return list(session.run(None, feeds))[:2]

        return run


class _Tuple(torch.nn.Module):
    """A module whose output is a tuple of tensors (trace, compile and ONNX want one)."""

    def __init__(self, module: torch.nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        out = self.module(*inputs)
        return (out,) if isinstance(out, torch.Tensor) else (out.logits, out.values)


def _numpy(out: Any) -> list[np.ndarray]:
    if isinstance(out, torch.Tensor):
        return [out.numpy()]
    if isinstance(out, tuple):
        return [t.numpy() for t in out]
    return [out.logits.numpy(), out.values.numpy()]


def mlp_net() -> tuple[Net, Path]:
    game = make_game("mexican_train", players=4, rounds=1)
    torch.manual_seed(0)
    module = PolicyValueMLP(input_size(game), game.spec.num_actions, game.num_players)
    x = np.zeros((512, input_size(game)), np.float32)
    for row, (state, player) in zip(x, random_positions(game, 512, seed=1), strict=True):
        encode(state, player, row)
    net = Net("mlp165k", module, [x])
    path = Path(tempfile.mkdtemp()) / "mlp.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(_Tuple(module).eval(), (torch.from_numpy(x[:2]),), str(path),
                          dynamo=False, input_names=["x"], output_names=["out"],
                          dynamic_axes={"x": {0: "batch"}, "out": {0: "batch"}})  # fmt: skip
    return net, path


def default_net() -> tuple[Net, Path, Any]:
    settings = load_settings(["run=default"])
    game = build_game(settings)
    encoder = build_encoder(settings, game)
    model = build_model(settings, game, encoder)
    with torch.no_grad():  # the first champion's value head starts at zero: give outputs range
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    obs, feats, mask = encode_batch(encoder, random_positions(game, 512, seed=1))
    net = Net("default", model, [obs.numpy(), feats.numpy(), mask.numpy()])
    path = export_onnx(model, Path(tempfile.mkdtemp()) / "default.onnx")
    return net, path, model


def _runs(
    net: Net, session: Any, size: int, backends: list[str], failed: dict[str, str]
) -> dict[str, Run]:
    """Each backend's forward pass at ``size`` (a backend that does not build is noted in
    ``failed`` and left out from then on)."""
    runs: dict[str, Run] = {}
    for backend in backends:
        if backend in failed:
            continue
        try:
            if backend == "compile":
                torch._dynamo.reset()  # a fresh cache: every batch size compiles once
            runs[backend] = (
                net.ort(size, session) if backend == "ort" else getattr(net, backend)(size)
            )
            runs[backend]()
        except Exception as err:  # noted and skipped: the table says which and why
            failed[backend] = f"{type(err).__name__}: {str(err).splitlines()[0][:120]}"
            runs.pop(backend, None)
    return runs


def bench_net(
    net: Net,
    session: Any,
    batches: tuple[int, ...],
    seconds: float,
    backends: list[str],
    repeats: int,
) -> dict[str, dict[int, float]]:
    """Print one network's table; returns backend -> batch -> positions/s (the best of
    ``repeats`` timings, the backends taking turns so that a busy moment hits them alike)."""
    print(f"\n{net.name}: {net.parameters / 1e3:.0f}k parameters, inputs "
          + " ".join(f"{list(x.shape[1:])}" for x in net.inputs))  # fmt: skip
    print(f"{'batch':>6}" + "".join(f"{b:>10}" for b in backends)
          + "".join(f"{b + '/eager':>15}{'max diff':>9}" for b in backends[1:]))  # fmt: skip
    rates: dict[str, dict[int, float]] = {b: {} for b in backends}
    failed: dict[str, str] = {}
    for size in batches:
        mask = net.inputs[2][:size] if len(net.inputs) == 3 else None
        runs = _runs(net, session, size, backends, failed)
        reference = net.outputs(runs["eager"](), mask)
        for _ in range(repeats):
            for backend, run in runs.items():
                rate = _rate(run, size, seconds)
                rates[backend][size] = max(rate, rates[backend].get(size, 0.0))
        cells = [f"{rates[b][size]:>10,.0f}" if b in runs else f"{'-':>10}" for b in backends]
        for backend in backends[1:]:
            if backend not in runs:
                cells.append(f"{'-':>15}{'-':>9}")
                continue
            got = net.outputs(runs[backend](), mask)
            worst = max(float(np.abs(np.nan_to_num(a - b)).max())
                        for a, b in zip(got, reference, strict=True))  # fmt: skip
            cells.append(f"{rates[backend][size] / rates['eager'][size]:>15.2f}{worst:>9.1e}")
        print(f"{size:>6}" + "".join(cells), flush=True)
    for backend, why in failed.items():
        print(f"  {backend} skipped: {why}")
    if net.compile_s:
        print("  torch.compile's first call: "
              + ", ".join(f"{s:.1f} s at {b}" for b, s in net.compile_s.items()))  # fmt: skip
    return rates


def reload_cost(model: Any, repeats: int = 3) -> tuple[float, float]:
    """Seconds to take a new champion's weights: torch (load_state_dict) vs ONNX Runtime
    (export the network again and open a new session)."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    start = time.perf_counter()
    for _ in range(repeats):
        model.load_state_dict(state)
    torch_s = (time.perf_counter() - start) / repeats
    directory = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    for i in range(repeats):
        _session(export_onnx(model, directory / f"v{i}.onnx"))
    return torch_s, (time.perf_counter() - start) / repeats


def _ratios(rates: dict[str, dict[int, float]], backend: str, sizes: tuple[int, ...]) -> str:
    got = rates.get(backend, {})
    return " / ".join(f"{got[s] / rates['eager'][s]:.2f}" if s in got else "-" for s in sizes)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    pin_threads(1)
    batches = (1, 64, 256) if quick else BATCHES
    seconds, repeats = (0.1, 1) if quick else (0.4, 3)
    backends = ["eager", "jit", "ort"] + ([] if quick else ["compile"])
    print(f"torch {torch.__version__}, one thread; ONNX Runtime one intra-op thread, sequential")
    mlp, mlp_path = mlp_net()
    mlp_rates = bench_net(mlp, _session(mlp_path), batches, seconds, backends, repeats)
    default, default_path, model = default_net()
    default_rates = bench_net(default, _session(default_path), batches, seconds, backends, repeats)
    torch_s, ort_s = reload_cost(model)
    print(f"\nnew champion's weights, default model: torch load_state_dict {torch_s * 1e3:.2f} ms, "
          f"ONNX re-export + new session {ort_s * 1e3:.0f} ms")  # fmt: skip
    sizes = tuple(s for s in (64, 256, 512) if s in batches)
    figures = [
        Figure(
            name=f"ONNX Runtime vs torch eager, 1 thread, {net.name} "
            f"({net.parameters / 1e3:.0f}k parameters), batch " + " / ".join(map(str, sizes)),
            figure=" / ".join(f"{rates['ort'].get(s, 0):,.0f}" for s in sizes) + " positions/s",
            reference="torch eager " + " / ".join(f"{rates['eager'][s]:,.0f}" for s in sizes),
            ratio=_ratios(rates, "ort", sizes) + "×",
            command="python -m bench.bench_runtime",
        )
        for net, rates in ((mlp, mlp_rates), (default, default_rates))
    ]
    record("bench_runtime", figures, quick=quick)


if __name__ == "__main__":
    main()
