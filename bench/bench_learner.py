"""Learner throughput against a raw torch training step on the same model and batch.

Data: Mexican Train 2p single-round records from search-free self-play (the default
``ModelConfig`` for the Mexican Train encoder: D=729 observation entries, F=45 features per legal
action), written as a shard and read back through a :class:`~omega_cluster.data.ReplayWindow`.

* ``raw torch step`` — the reference: one fixed batch already in tensors, ``forward`` + the same
  AlphaZero loss + ``backward`` + ``AdamW.step``, nothing else;
* ``Learner.train_steps`` — what the learner really does per step: sample a batch from the replay
  window (Arrow take + padding), convert it to tensors (seat rotation), set the scheduled lr,
  forward, loss, the NaN check, backward, gradient-norm clipping, step, and the loss figures.

Printed: samples/s of each (the learner also with ``prefetch``) and its ratio to the raw step
(the bar: learner >= 0.7x raw), best of a few repetitions, interleaved so that other processes
on the machine hit all alike. CPU figures are noisy on a shared machine; ``--quick`` runs a
short check. Each device this machine has is measured (the CPU, and CUDA where there is a GPU);
``--save`` records the figures in ``docs/results/``: the GPU's on a machine that has one, else
the CPU's. Run: ``python -m bench.bench_learner``.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from bench.results import Figure, record
from omega_cluster.data import ShardStore, ShardWriter, table_to_batch
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, NetworkEvaluator, PolicyValueNet, encoder_for
from omega_cluster.train import Learner, LearnerConfig, SelfPlayConfig, play_games
from omega_cluster.train.losses import alphazero_loss, to_tensors


def _records(games: int) -> list:  # type: ignore[type-arg]
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    config = ModelConfig.for_encoder(encoder, game)
    evaluator = NetworkEvaluator(
        PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size), encoder
    )
    cfg = SelfPlayConfig(games=games, concurrent_games=16, mode="network", temperature_moves=999)
    records, _ = play_games(game, encoder, cfg, evaluator=evaluator)
    return records


def _raw_steps(learner: Learner, batch_tensors: object, steps: int) -> float:
    model, opt = learner.model, learner.optimizer
    start = time.perf_counter()
    for _ in range(steps):
        tb = batch_tensors
        opt.zero_grad(set_to_none=True)
        out = model(tb.observations, tb.action_features, tb.legal_mask)  # type: ignore[attr-defined]
        loss = alphazero_loss(out, tb, value_scale=learner.value_scale).total  # type: ignore[arg-type]
        loss.backward()
        opt.step()
    if learner.device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _devices() -> list[str]:
    """The devices measured: the CPU, and the GPU where this machine has one."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _label(device: str) -> str:
    return "CPU" if device == "cpu" else f"CUDA ({torch.cuda.get_device_name(0)})"


def _measure(device: str, records: list, steps: int, repeats: int) -> list[Figure]:  # type: ignore[type-arg]
    """Raw step, learner and learner with prefetch on ``device``; printed, and as figures."""
    batch_size = 256
    torch.manual_seed(0)
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game)
    model = PolicyValueNet(
        ModelConfig.for_encoder(encoder, game),
        encoder.observation_size,
        encoder.action_feature_size,
    )
    config = LearnerConfig(batch_size=batch_size, steps_per_call=steps, device=device)
    learner = Learner(model, dataclasses.replace(config, prefetch=False), game=game,
                      encoder=encoder)  # fmt: skip
    # the same model with the next batch drawn on a helper thread
    ahead = Learner(model, dataclasses.replace(config, prefetch=True), game=game, encoder=encoder)
    print(
        f"{len(records)} records; model {model.num_parameters():,} parameters "
        f"(hidden {model.config.hidden_size}), batch {batch_size}, device {learner.device}, "
        f"torch threads {torch.get_num_threads()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = ShardStore(Path(tmp))
        ShardWriter(store, writer_id="bench").write(records)
        window = learner.window(store, window_rows=len(records))
        window.refresh()
        sample = table_to_batch(window.table().take(np.arange(batch_size) % len(records)))
        fixed = to_tensors(sample, seats=learner.seats, device=learner.device)
        _raw_steps(learner, fixed, 3)  # warm up every path
        learner.train_steps(window, 3)
        ahead.train_steps(window, 3)
        raw_best = ours_best = ahead_best = float("inf")
        for _ in range(repeats):
            raw_best = min(raw_best, _raw_steps(learner, fixed, steps))
            ours_best = min(ours_best, learner.train_steps(window, steps).seconds)
            ahead_best = min(ahead_best, ahead.train_steps(window, steps).seconds)
    raw_rate = steps * batch_size / raw_best
    print(f"{'':<32}{'samples/s':>12}{'ms/step':>10}")
    print(f"{'raw torch step':<32}{raw_rate:>12,.0f}{1e3 * raw_best / steps:>10.1f}")
    size = f"{model.num_parameters() / 1e3:.0f}k-parameter network, batch {batch_size}"
    figures = []
    for suffix, best in (("", ours_best), (", prefetch", ahead_best)):
        rate = steps * batch_size / best
        print(f"{'Learner.train_steps' + suffix:<32}{rate:>12,.0f}{1e3 * best / steps:>10.1f}")
        verdict = "meets" if rate >= 0.7 * raw_rate else "BELOW"
        print(f"  / raw = {rate / raw_rate:.2f}x ({verdict} the 0.7x bar)")
        figures.append(Figure(
            name=f"learner samples/s, {size}, {_label(device)}{suffix}",
            figure=f"{rate:,.0f}",
            reference=f"raw torch forward + backward {raw_rate:,.0f}",
            ratio=f"{rate / raw_rate:.2f}× (bar 0.7×)",
            command="python -m bench.bench_learner --save",
            headline="learner samples/s (CPU)" if device == "cpu" and not suffix else "",
        ))  # fmt: skip
    return figures


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    games, steps, repeats = (20, 10, 2) if quick else (60, 30, 3)
    records = _records(games)
    figures = {device: _measure(device, records, steps, repeats) for device in _devices()}
    if "--save" in args:
        # a machine with a GPU records the GPU's figures (bench_learner_cuda), one without it
        # the CPU's: the CPU rows of the tables are those of the 2-core machine they describe
        if "cuda" in figures:
            record("bench_learner_cuda", figures["cuda"], quick=quick)
        else:
            record("bench_learner", figures["cpu"], quick=quick)


if __name__ == "__main__":
    main()
