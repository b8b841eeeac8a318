"""The one-process training loop: self-play → shards → replay window → train → checkpoint.

The synchronous, reproducible form of the service's data flow (docs/design.md), without Ray, for
tests, benchmarks and small runs: each iteration plays :class:`~.selfplay.SelfPlay` games with the
learner's current weights (or a rollout leaf), writes their records as one shard to a
:class:`~omega_cluster.data.ShardStore`, trains the :class:`~.learner.Learner` on its replay window
and saves a checkpoint ``<checkpoints>/iteration-<k>``. Gating (candidate vs champion) belongs to
the evaluation layer; here every iteration's weights play the next one.

Leaves (``LoopConfig.leaf``): ``"network"`` — the network leaf: the network as PUCT prior and
value, or in mode ``"network"`` the policy that plays; or a rollout leaf name of
:data:`omega_cluster.players.search.LEAVES` (``"random"``, ``"commander_rollout"``, …): the
search runs rollouts and its visits are distilled into the network.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from omega_cluster.data import ReplayWindow, ShardStore, ShardWriter
from omega_cluster.games.chance import derive_seed
from omega_cluster.model.inference import NetworkEvaluator
from omega_cluster.players.search import build_leaf_evaluator
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.train.learner import Learner, LearnerStats
from omega_cluster.train.selfplay import SelfPlay, SelfPlayConfig, SelfPlayStats

__all__ = ["IterationReport", "LoopConfig", "run_loop", "selfplay_evaluator"]


@dataclass(frozen=True, kw_only=True)
class LoopConfig:
    """A few collect → train iterations in one process."""

    iterations: int = 3  # collect → train rounds
    selfplay: SelfPlayConfig = dataclasses.field(default_factory=SelfPlayConfig)  # per iteration
    learner_steps: int = 100  # learner steps per iteration
    leaf: str = "network"  # "network" or a rollout leaf name (random, commander_rollout, ...)
    rollouts: int = 1  # rollouts per leaf for the rollout leaves
    window_rows: int = 100_000  # replay window size N
    seed: int = 0  # each iteration's self-play seed derives from it

    def __post_init__(self) -> None:
        for name in ("iterations", "learner_steps", "rollouts", "window_rows"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"LoopConfig.{name} must be an int >= 1, got {value!r}")


@dataclass(frozen=True)
class IterationReport:
    """What one iteration did."""

    iteration: int  # 0-based
    selfplay: SelfPlayStats
    learner: LearnerStats
    records: int  # rows written this iteration
    checkpoint: Path  # the checkpoint saved after training


def selfplay_evaluator(learner: Learner, leaf: str, *, rollouts: int = 1) -> Evaluator:
    """The evaluator self-play uses: a CPU copy of the learner's network, or a rollout leaf."""
    if leaf == "network":
        model = copy.deepcopy(learner.model).to("cpu").eval()
        return NetworkEvaluator(model, learner.encoder, device="cpu")
    return build_leaf_evaluator(learner.game, leaf, rollouts=rollouts)


def run_loop(
    learner: Learner,
    store: ShardStore,
    config: LoopConfig,
    *,
    checkpoints: str | Path,
    window: ReplayWindow | None = None,
) -> Iterator[IterationReport]:
    """Run ``config.iterations`` iterations, yielding a report after each."""
    writer = ShardWriter(store, writer_id=config.selfplay.actor)
    window = window or learner.window(store, window_rows=config.window_rows)
    for iteration in range(config.iterations):
        evaluator = selfplay_evaluator(learner, config.leaf, rollouts=config.rollouts)
        sp_config = dataclasses.replace(
            config.selfplay,
            seed=derive_seed(config.seed, "iteration", iteration),
            champion_version=learner.version,
        )
        runner = SelfPlay(learner.game, learner.encoder, sp_config, evaluator=evaluator)
        records = list(runner.play())
        if records:
            writer.write(records)
        stats = learner.train_steps(window, config.learner_steps)
        learner.version += 1
        target = Path(checkpoints) / f"iteration-{iteration}"
        learner.save(target, metrics={"value_loss": stats.value_loss, "loss": stats.loss})
        yield IterationReport(iteration, runner.stats, stats, len(records), target)
