"""Network inference speed: NetworkEvaluator leaves/s vs the raw forward pass, and encoder cost.

Printed (one core: ``torch.set_num_threads(1)``, the setting of a CPU self-play actor; timings are
noisy while other processes share the machine):

* for Mexican Train 4p (double-12, one round) with the default ``ModelConfig`` MLP (hidden 256,
  two residual blocks, 8 value seats): :class:`~omega_cluster.model.inference.NetworkEvaluator`
  leaves per second at batch 1, 16, 64 and 256 (cache off: every leaf is encoded, padded, run and
  turned into a prior and absolute values), against the raw forward pass of the evaluator's own
  runtime (:mod:`omega_cluster.model.runtime`: ONNX Runtime on CPU when installed) on the same,
  already encoded batch, in the same run — the ratio is the share of the evaluator's time spent
  in the network;
* the same with the cache on and every leaf a hit (a repeated information set);
* every encoder's cost in µs per state (observation + action features) on positions of random
  playouts, against a reference measured in the same run: one ``state.clone()``.

Run: ``python -m bench.bench_inference [--quick]``.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

import torch

from bench.results import Figure, record
from omega_cluster.games.registry import make_game
from omega_cluster.model import (
    ModelConfig,
    NetworkEvaluator,
    PolicyValueNet,
    encode_batch,
    encoder_for,
    random_positions,
)
from omega_cluster.model.threads import pin_threads
from omega_cluster.search.evaluators import Leaf

ENCODER_GAMES: list[tuple[str, dict[str, object]]] = [
    ("mexican_train", {"players": 4, "rounds": 1}),
    ("mexican_train", {"players": 2, "rounds": 1}),
    ("goofspiel", {"num_cards": 13}),
    ("kuhn_poker", {}),
    ("leduc_poker", {}),
    ("openspiel:leduc_poker", {}),
]


def _rate(fn: Callable[[], object], items: int, seconds: float) -> float:
    """Items per second of ``fn`` (each call handles ``items``), timed for about ``seconds``."""
    fn()  # warm-up
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls * items / elapsed


def bench_evaluator(seconds: float) -> Figure:
    """Print the evaluator's leaves/s against the raw forward; the batch-64 figure as a row."""
    game = make_game("mexican_train", players=4, rounds=1)
    encoder = encoder_for(game)
    config = ModelConfig.for_encoder(encoder, game)
    torch.manual_seed(0)
    model = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size).eval()
    positions = random_positions(game, 256, seed=1)
    rng = random.Random(0)
    leaves = [Leaf(s, p, tuple(s.legal_actions(p)), rng) for s, p in positions]
    print(
        f"Mexican Train 4p, MLP {config.hidden_size}x{config.num_layers} "
        f"({model.num_parameters() / 1e3:.0f}k parameters), D={encoder.observation_size}, "
        f"F={encoder.action_feature_size}, one thread"
    )
    cold = NetworkEvaluator(model, encoder, cache_size=0, max_batch=256)
    print(f"forward pass: {cold.runtime!r}")
    print(f"{'batch':>6} {'evaluator leaves/s':>19} {'raw forward leaves/s':>21} {'ratio':>6}")
    for batch in (1, 16, 64, 256):
        chunk = leaves[:batch]
        obs, feats, mask = (t.numpy() for t in encode_batch(encoder, positions[:batch]))

        def raw(obs=obs, feats=feats, mask=mask) -> object:  # type: ignore[no-untyped-def]
            return cold.runtime(obs, feats, mask)  # the evaluator's own runtime

        ev = _rate(lambda chunk=chunk: cold.evaluate(chunk), batch, seconds)  # type: ignore[misc]
        fw = _rate(raw, batch, seconds)
        print(f"{batch:>6} {ev:>19,.0f} {fw:>21,.0f} {ev / fw:>6.2f}")
        if batch == 64:
            figure = Figure(
                name=(
                    f"NetworkEvaluator, Mexican Train 4p, {model.num_parameters() / 1e3:.0f}k-"
                    "parameter MLP, batch 64"
                ),
                figure=f"{ev:,.0f} leaves/s",
                reference=f"raw forward {fw:,.0f}",
                ratio=f"{ev / fw:.2f}×",
                command="python -m bench.bench_inference",
            )
    warm = NetworkEvaluator(model, encoder, cache_size=10_000)
    warm.evaluate(leaves)
    hits = _rate(lambda: warm.evaluate(leaves), len(leaves), seconds)
    print(f"cache hits (256 repeated information sets): {hits:,.0f} leaves/s")
    return figure


def bench_encoders(seconds: float) -> None:
    print(f"\n{'game':<40} {'D':>5} {'F':>4} {'µs/state':>9} {'clone µs':>9} {'ratio':>6}")
    for name, params in ENCODER_GAMES:
        game = make_game(name, **params)
        encoder = encoder_for(game)
        positions = random_positions(game, 200, seed=2)
        legal = [s.legal_actions(p) for s, p in positions]

        def encode(positions=positions, legal=legal, encoder=encoder) -> None:  # type: ignore[no-untyped-def]
            for (s, p), actions in zip(positions, legal, strict=True):
                encoder.encode_observation(s, p)
                encoder.encode_actions(s, p, actions)

        def clone(positions=positions) -> None:  # type: ignore[no-untyped-def]
            for s, _ in positions:
                s.clone()

        per_state = 1e6 / _rate(encode, len(positions), seconds)
        per_clone = 1e6 / _rate(clone, len(positions), seconds / 2)
        label = name + "".join(f" {k}={v}" for k, v in params.items())
        print(
            f"{label:<40} {encoder.observation_size:>5} {encoder.action_feature_size:>4} "
            f"{per_state:>9.1f} {per_clone:>9.2f} {per_state / per_clone:>6.1f}"
        )


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    pin_threads(1)
    seconds = 0.3 if quick else 1.5
    figure = bench_evaluator(seconds)
    bench_encoders(seconds / 2)
    record("bench_inference", [figure], quick=quick)


if __name__ == "__main__":
    main()
