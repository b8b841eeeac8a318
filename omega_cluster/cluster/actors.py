"""Ray actors: one job each, thin shells over the pure workers (same methods, same arguments).

Restart policy (Ray's ``max_restarts``): a crashed self-play actor, bench worker, learner or
gatekeeper is restarted by Ray and rebuilt from its constructor arguments and what is on disk
(the learner from its checkpoint). Self-play calls are *not* retried by Ray: the driver re-runs
a failed chunk with ``retry=True`` so the worker first looks for the chunk's shard (a game is
never written twice). Bench, learner and gatekeeper calls are idempotent, so Ray retries them.

Each actor gets its worker's own frozen config (built by the service layer, :mod:`omega_cluster.
wiring`), never the run's settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ray

from omega_cluster.eval.anchors import AnchorReport
from omega_cluster.eval.gatekeeper import (
    BenchTask,
    BenchWorker,
    GateOutcome,
    GateService,
    GateServiceConfig,
)
from omega_cluster.eval.matches import SpecResult
from omega_cluster.model.registry import ModelRegistry, ModelVersion
from omega_cluster.train.workers import (
    CandidateReport,
    ChunkReport,
    LearnerWorker,
    LearnerWorkerConfig,
    SelfPlayWorker,
    SelfPlayWorkerConfig,
    Weights,
)

__all__ = [
    "BenchWorkerActor",
    "GatekeeperActor",
    "LearnerActor",
    "ModelRegistryActor",
    "SelfPlayActor",
]


@ray.remote
class SelfPlayActor:
    """Plays self-play chunks with the champion's weights and writes their shards."""

    def __init__(self, config: SelfPlayWorkerConfig, actor: int, store_uri: str) -> None:
        self.worker = SelfPlayWorker(config, actor=actor, store_uri=store_uri)
        # the Ray node id goes into every shard's manifest entry: which node wrote what
        self.worker.node = str(ray.get_runtime_context().get_node_id())

    def play_chunk(
        self, weights: Weights, chunk: int, games: int, *, retry: bool = False
    ) -> ChunkReport:
        return self.worker.play_chunk(weights, chunk, games, retry=retry)

    def node(self) -> str:
        return str(ray.get_runtime_context().get_node_id())


@ray.remote
class LearnerActor:
    """Trains candidates from the replay window (on a GPU when it was given one)."""

    def __init__(self, config: LearnerWorkerConfig, run_dir: str, store_uri: str) -> None:
        self.worker = LearnerWorker(config, run_dir=run_dir, store_uri=store_uri)

    def train_candidate(self, champion: Weights, version: int) -> CandidateReport:
        return self.worker.train_candidate(champion, version)

    def status(self) -> dict[str, Any]:
        return self.worker.status()


@ray.remote
class BenchWorkerActor:
    """Plays bench tasks (candidate vs champion, champion vs anchors)."""

    def __init__(self, config: GateServiceConfig) -> None:
        self.worker = BenchWorker(config)

    def play(self, task: BenchTask) -> tuple[SpecResult, ...]:
        return self.worker.play(task)


@ray.remote
class GatekeeperActor:
    """Benches candidates over a pool of bench workers and decides with the gate.

    It is given the bench workers' names, not their handles: a constructor argument that holds
    actor handles lives in Ray's object store, where a restart may no longer find it (Ray issue
    53727: the restarted actor fails, and with it every gate call), while names are inline."""

    def __init__(self, config: GateServiceConfig, worker_names: Sequence[str]) -> None:
        self.workers = [ray.get_actor(name) for name in worker_names]
        self.service = GateService(config, play=self._fan_out, parallelism=len(self.workers))

    def _fan_out(self, tasks: Sequence[BenchTask]) -> list[tuple[SpecResult, ...]]:
        refs = [self.workers[i % len(self.workers)].play.remote(t) for i, t in enumerate(tasks)]
        return list(ray.get(refs))  # one blocking get of the whole round: no polling

    def bench(
        self, candidate: int, parent: int, candidate_uri: str, champion: int, champion_uri: str
    ) -> GateOutcome:
        return self.service.bench(candidate, parent, candidate_uri, champion, champion_uri)

    def anchors(self, version: int, uri: str) -> AnchorReport:
        return self.service.anchors(version, uri)


@ray.remote
class ModelRegistryActor:
    """The run's model registry as a named actor (persisted under the run directory)."""

    def __init__(self, run_dir: str, game: str) -> None:
        self.registry = ModelRegistry(run_dir, game=game)

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.registry, method)(*args, **kwargs)

    def read(self, attribute: str) -> Any:
        return getattr(self.registry, attribute)


class RegistryClient:
    """:class:`ModelRegistry`'s interface over a :class:`ModelRegistryActor` (blocking calls)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    @property
    def champion(self) -> ModelVersion | None:
        return ray.get(self.actor.read.remote("champion"))

    @property
    def next_version(self) -> int:
        return int(ray.get(self.actor.read.remote("next_version")))

    @property
    def versions(self) -> list[ModelVersion]:
        return list(ray.get(self.actor.read.remote("versions")))

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            return ray.get(self.actor.call.remote(method, *args, **kwargs))

        return call
