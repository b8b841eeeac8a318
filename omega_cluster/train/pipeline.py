"""The pipeline driver: collect → train → gate → promote, synchronous or asynchronous.

DESIGN.md's data flow as one loop over worker *handles* reached through a :class:`Backend`:
:class:`LocalBackend` calls the pure workers of :mod:`.workers` and
:class:`omega_cluster.eval.gatekeeper.GateService` in this process (tests, debugging, a run
without Ray); :class:`omega_cluster.cluster.backend.RayBackend` calls the same methods on Ray
actors. The driver never polls: it waits on the futures of the calls it made.

* **sync** — per iteration: every self-play actor plays its share of
  ``run.games_per_iteration`` games (chunks of ``cluster.games_per_chunk``), then the learner
  trains a candidate, then the gatekeeper decides. Each chunk's seed derives from the run seed
  and the chunk's index, so a run is reproducible whatever the actor count.
* **async** — self-play never waits for training: each actor gets its next chunk as soon as it
  returns one, with the champion of that moment (weights are pulled at chunk boundaries, so an
  actor is at most one chunk behind a promotion). Back-pressure: no new chunk starts while the
  rows written are more than ``cluster.max_rows_ahead`` ahead of the rows the learner has read.
  The learner and the gatekeeper alternate (a candidate is benched before the next is trained,
  so no candidate is stale on arrival).

Both stop after ``run.iterations`` gate decisions, after ``run.max_minutes``, or on
:meth:`Pipeline.stop` (SIGINT/SIGTERM in the CLI): the chunks in flight are finished and
written, the state saved, so ``run.resume`` continues. A chunk whose actor died is re-run with
``retry=True``; the worker then finds its shard if it was written, so no game counts twice.

State that survives a restart: the model registry (``registry.json``), the learner's checkpoint
(``learner/``), the shards and their manifest, and ``pipeline.json`` (chunk counter, decisions,
the Elo log). An :class:`Observer` receives every event (tracking and the live display).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from omega_cluster.config.schema import Settings
from omega_cluster.eval.gatekeeper import GateOutcome
from omega_cluster.eval.rating import AnchorResult, EloRow, chain_start, promote
from omega_cluster.eval.stats import ConfidenceInterval
from omega_cluster.model.checkpoint import load_checkpoint, save_checkpoint
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.train.workers import CandidateReport, ChunkReport, Weights

# the workers built from the run's settings (the service layer's wiring)
from omega_cluster.wiring import build_encoder, build_game, build_model, warm_start
from omega_cluster.wiring import gate_service as GateService
from omega_cluster.wiring import learner_worker as LearnerWorker
from omega_cluster.wiring import selfplay_worker as SelfPlayWorker

__all__ = [
    "Backend",
    "LocalBackend",
    "Observer",
    "Pipeline",
    "PipelineState",
    "RunPaths",
]

INITIAL_ELO = 1000.0  # the first champion (random weights) sits level with the random anchor


@dataclass(frozen=True)
class RunPaths:
    """Where a run keeps its state."""

    root: Path
    shards: str | None = None  # shard store URI (pyarrow.fs: a path, file://, s3://...)

    @property
    def store_uri(self) -> str:
        return self.shards or str(self.root / "shards")

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def state(self) -> Path:
        return self.root / "pipeline.json"


@dataclass
class PipelineState:
    """The driver's counters, saved after every event that changes them."""

    game: str
    next_chunk: int = 0
    iteration: int = 0
    decisions: int = 0
    promotions: int = 0
    games: int = 0
    records: int = 0
    shards: int = 0
    elo_log: list[dict[str, Any]] = field(default_factory=list)
    mlflow_run_id: str | None = None
    warm_start: dict[str, float] = field(default_factory=dict)  # WarmStartStats.metrics(), if any

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(asdict(self), f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, *, game: str) -> PipelineState:
        if not path.exists():
            return cls(game=game)
        data = json.loads(path.read_text())
        if data.get("game") != game:
            raise ValueError(
                f"{path.parent} is a run of game {data.get('game')!r}, not {game!r}: use another "
                "run directory (run.dir) or the matching game"
            )
        return cls(**data)


class Observer:
    """Pipeline events (every method optional). Tracking and the live display implement it."""

    def on_start(self, pipeline: Pipeline) -> None: ...
    def on_chunk(self, report: ChunkReport, state: PipelineState) -> None: ...
    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None: ...
    def on_gate(self, outcome: GateOutcome, row: dict[str, Any], state: PipelineState) -> None: ...
    def on_champion(self, version: int, uri: str, state: PipelineState) -> None: ...
    def on_anchors(self, results: Sequence[AnchorResult], state: PipelineState) -> None: ...
    def on_stop(self, state: PipelineState, reason: str) -> None: ...


class Backend(Protocol):
    """How the driver reaches its workers (in this process, or Ray actors)."""

    selfplay: list[Any]  # one handle per self-play actor
    learner: Any
    gatekeeper: Any
    registry: Any  # a ModelRegistry, or a client with its interface

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> Any: ...
    def wait(self, futures: Sequence[Any], timeout: float | None) -> list[Any]: ...
    def result(self, future: Any) -> Any: ...
    def put(self, value: Any) -> Any: ...
    def shutdown(self) -> None: ...


class _Done:
    """A finished local call: its value or its exception."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        try:
            self.value, self.error = fn(), None
        except Exception as err:  # re-raised by result(): the same contract as Ray's get
            self.value, self.error = None, err


class LocalBackend:
    """The pure workers in this process: each call runs at once (no parallelism, no Ray)."""

    def __init__(self, settings: Settings, paths: RunPaths) -> None:
        n = settings.cluster.self_play_actors
        self.selfplay = [SelfPlayWorker(settings, actor=i, store_uri=paths.store_uri)
                         for i in range(n)]  # fmt: skip
        self.learner = LearnerWorker(settings, run_dir=paths.root, store_uri=paths.store_uri)
        self.gatekeeper = GateService(settings)
        self.registry = ModelRegistry(paths.root, game=self.learner.game.spec.name)

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> _Done:
        return _Done(lambda: getattr(handle, method)(*args, **kwargs))

    def wait(self, futures: Sequence[Any], timeout: float | None) -> list[Any]:
        return list(futures)

    def result(self, future: _Done) -> Any:
        if future.error is not None:
            raise future.error
        return future.value

    def put(self, value: Any) -> Any:
        return value

    def shutdown(self) -> None:
        pass


class Pipeline:
    """Drives one run (module docstring)."""

    def __init__(
        self,
        settings: Settings,
        paths: RunPaths,
        backend_factory: Callable[[Settings, RunPaths], Backend],
        *,
        observers: Sequence[Observer] = (),
        is_retryable: Callable[[BaseException], bool] = lambda err: False,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.game = build_game(settings)
        paths.root.mkdir(parents=True, exist_ok=True)
        self.state = PipelineState.load(paths.state, game=self.game.spec.name)
        ModelRegistry(paths.root, game=self.game.spec.name)  # a foreign run dir fails here
        self.backend = backend_factory(settings, paths)
        self.registry = self.backend.registry
        if self.registry.champion is None:
            self._initial_champion()
        self.observers = list(observers)
        self.is_retryable = is_retryable
        self._stop_reason: str | None = None  # asked for by stop()
        self.stop_reason = ""  # why run() returned
        self._started = time.monotonic()
        self._weights_ref: Any = None
        self._weights_version = -1
        self._retried: set[tuple[int, int]] = set()  # chunks re-run after a failure

    # -- setup ------------------------------------------------------------------------------
    def _initial_champion(self) -> None:
        encoder = build_encoder(self.settings, self.game)
        model = build_model(self.settings, self.game, encoder)
        metrics: dict[str, float] = {}
        if self.settings.learner.warm_start_games > 0:  # v0 from the rule-based teacher
            stats = warm_start(self.settings, self.game, encoder, model,
                               self.paths.root / "warm_start")  # fmt: skip
            metrics = stats.metrics()
            self.state.warm_start = metrics
        uri = self.paths.models / "v0"
        save_checkpoint(uri, model.cpu(), game=self.game, encoder=encoder, version=0,
                        metrics=metrics, overwrite=True)  # fmt: skip
        self.registry.add_initial(str(uri), elo=INITIAL_ELO)
        row = chain_start("0", INITIAL_ELO)
        self.state.elo_log.append(_elo_dict(row, promoted=True, verdict="initial"))
        self.state.save(self.paths.state)

    def champion_weights(self) -> Any:
        """The champion's weights in the backend's object store (put once per version)."""
        champion = self.registry.champion
        assert champion is not None
        if champion.version != self._weights_version:
            loaded = load_checkpoint(champion.uri, expected_game=self.game, load_optimizer=False)
            weights = Weights.of(loaded.model, version=champion.version, uri=champion.uri)
            self._weights_ref = self.backend.put(weights)
            self._weights_version = champion.version
        return self._weights_ref

    # -- control ----------------------------------------------------------------------------
    def stop(self, reason: str = "stopped") -> None:
        """Finish what is in flight, save, and return from :meth:`run` (signal-safe)."""
        self._stop_reason = self._stop_reason or reason

    def _should_stop(self) -> str | None:
        if self._stop_reason:
            return self._stop_reason
        if self.state.decisions >= self.settings.run.iterations:
            return f"{self.state.decisions} gate decisions"
        limit = self.settings.run.max_minutes
        if limit is not None and time.monotonic() - self._started > 60.0 * limit:
            return f"time limit of {limit:g} minutes"
        return None

    def _emit(self, name: str, *args: Any) -> None:
        for obs in self.observers:
            getattr(obs, name)(*args)

    def run(self) -> PipelineState:
        """Run until a stop condition; returns the final state."""
        self._emit("on_start", self)
        reason = "interrupted"  # unless a mode returns its reason
        try:
            if self.settings.cluster.mode == "async":
                reason = self._run_async()
            else:
                reason = self._run_sync()
        finally:
            self.state.save(self.paths.state)
            self.stop_reason = reason
            self._emit("on_stop", self.state, reason)
        return self.state

    # -- chunks -----------------------------------------------------------------------------
    def _submit_chunk(self, actor: int, chunk: int, games: int, retry: bool = False) -> Any:
        handle = self.backend.selfplay[actor]
        return self.backend.call(handle, "play_chunk", self.champion_weights(), chunk, games,
                                 retry=retry)  # fmt: skip

    def _chunk_done(self, report: ChunkReport) -> None:
        self.state.games += report.games
        self.state.records += report.records
        self.state.shards += 1 if report.shard and not report.replayed else 0
        self.state.save(self.paths.state)
        self._emit("on_chunk", report, self.state)

    def _collect(self, games: int) -> None:
        """Sync collection: ``games`` games in chunks over all actors; failed chunks re-run."""
        per_chunk = self.settings.cluster.games_per_chunk
        sizes = [per_chunk] * (games // per_chunk)
        if games % per_chunk:
            sizes.append(games % per_chunk)
        todo = [(self.state.next_chunk + i, n) for i, n in enumerate(sizes)]
        self.state.next_chunk += len(todo)
        self.state.save(self.paths.state)
        actors = len(self.backend.selfplay)
        flying: dict[Any, tuple[int, int, int]] = {}
        retries: list[tuple[int, int]] = []
        free = list(range(actors))
        while todo or retries or flying:
            while free and (retries or todo):
                chunk, n = retries.pop(0) if retries else todo.pop(0)
                actor = free.pop(0)
                fut = self._submit_chunk(actor, chunk, n, retry=(chunk, n) in self._retried)
                flying[fut] = (actor, chunk, n)
            for fut in self.backend.wait(list(flying), None):
                actor, chunk, n = flying.pop(fut)
                free.append(actor)
                try:
                    report = self.backend.result(fut)
                except Exception as err:
                    if not self.is_retryable(err):
                        raise
                    self._retried.add((chunk, n))
                    retries.append((chunk, n))
                    continue
                self._chunk_done(report)

    # -- learner and gate -------------------------------------------------------------------
    def _call(self, handle: Any, method: str, *args: Any) -> Any:
        """One call, retried while the failure is retryable (a restarting actor)."""
        for attempt in range(5):
            try:
                fut = self.backend.call(handle, method, *args)
                self.backend.wait([fut], None)
                return self.backend.result(fut)
            except Exception as err:
                if not self.is_retryable(err) or attempt == 4:
                    raise
                time.sleep(1.0)
        raise AssertionError("unreachable")

    def _train(self) -> CandidateReport:
        version = self.registry.next_version
        report: CandidateReport = self._call(
            self.backend.learner, "train_candidate", self.champion_weights(), version
        )
        if report.version is not None:
            self.registry.add_candidate(report.version, parent=report.parent, uri=report.uri,
                                        metrics=report.metrics)  # fmt: skip
        self._emit("on_candidate", report, self.state)
        return report

    def _bench_args(self, report: CandidateReport) -> tuple[Any, ...]:
        champion = self.registry.champion
        assert champion is not None and report.version is not None
        return (report.version, report.parent, report.uri, champion.version, champion.uri)

    def _gate(self, report: CandidateReport) -> GateOutcome:
        outcome: GateOutcome = self._call(
            self.backend.gatekeeper, "bench", *self._bench_args(report)
        )
        self._decided(report, outcome)
        if outcome.promoted:
            anchors = self._call(self.backend.gatekeeper, "anchors", report.version, report.uri)
            if anchors:
                self._emit("on_anchors", anchors, self.state)
        return outcome

    def _decided(self, report: CandidateReport, outcome: GateOutcome) -> None:
        """Record a gate decision: registry, Elo log, observers."""
        assert report.version is not None
        parent_row = self._champion_row()
        gap = ConfidenceInterval(outcome.elo_gap, outcome.elo_low, outcome.elo_high, 0.95,
                                 outcome.games)  # fmt: skip
        measured = promote(parent_row, str(report.version), gap, outcome.games)
        metrics = {"gate_score": outcome.score, "gate_games": float(outcome.games)}
        if outcome.promoted:
            self.registry.promote(report.version, elo=measured.elo, elo_low=measured.low,
                                  elo_high=measured.high, reason=outcome.reason,
                                  metrics=metrics)  # fmt: skip
            self.state.promotions += 1
        else:
            self.registry.reject(report.version, reason=outcome.reason, metrics=metrics)
        self.state.decisions += 1
        row = _elo_dict(measured, promoted=outcome.promoted, verdict=outcome.verdict)
        row.update(score=outcome.score, score_low=outcome.score_low,
                   score_high=outcome.score_high, reason=outcome.reason,
                   decision=self.state.decisions, games_played=self.state.games)  # fmt: skip
        self.state.elo_log.append(row)
        self.state.save(self.paths.state)
        self._emit("on_gate", outcome, row, self.state)
        if outcome.promoted:
            self._emit("on_champion", report.version, report.uri, self.state)

    def _champion_row(self) -> EloRow:
        champion = self.registry.champion
        assert champion is not None and champion.elo is not None
        return EloRow(str(champion.version), None if champion.parent is None else
                      str(champion.parent), champion.elo, champion.elo_low or champion.elo,
                      champion.elo_high or champion.elo, 0.95, 0)  # fmt: skip

    # -- the two modes ----------------------------------------------------------------------
    def _run_sync(self) -> str:
        games = self.settings.run.games_per_iteration
        while (reason := self._should_stop()) is None:
            self.state.iteration += 1
            self._collect(games)
            if self._should_stop() and self._stop_reason:
                return self._stop_reason
            report = self._train()
            if report.version is None:
                continue  # not enough data yet: collect more
            self._gate(report)
        return reason

    def _run_async(self) -> str:
        cfg = self.settings.cluster
        flying: dict[Any, tuple[str, Any]] = {}
        free = list(range(len(self.backend.selfplay)))
        retries: list[tuple[int, int]] = []
        trainer_busy = False  # the learner trains or the gatekeeper benches (they alternate)
        fresh_rows = True  # rows arrived since the learner last said it was waiting for data
        rows_read = 0
        reason: str | None = None
        while True:
            reason = reason or self._should_stop()
            while reason is None and free and self.state.records - rows_read <= cfg.max_rows_ahead:
                if retries:
                    chunk, n = retries.pop(0)
                else:
                    chunk, n = self.state.next_chunk, cfg.games_per_chunk
                    self.state.next_chunk += 1
                actor = free.pop(0)
                retry = (chunk, n) in self._retried
                flying[self._submit_chunk(actor, chunk, n, retry)] = ("chunk", (actor, chunk, n))
            if reason is None and not trainer_busy and fresh_rows:
                fut = self.backend.call(
                    self.backend.learner,
                    "train_candidate",
                    self.champion_weights(),
                    self.registry.next_version,
                )
                flying[fut] = ("learner", None)
                trainer_busy = True
            if not flying:
                return reason or "done"
            for fut in self.backend.wait(list(flying), 1.0):
                kind, info = flying.pop(fut)
                try:
                    value = self.backend.result(fut)
                except Exception as err:
                    if not self.is_retryable(err):
                        raise
                    if kind == "chunk":
                        free.append(info[0])
                        self._retried.add(info[1:])
                        retries.append(info[1:])
                    elif kind == "gate":
                        fut = self.backend.call(
                            self.backend.gatekeeper, "bench", *self._bench_args(info)
                        )
                        flying[fut] = ("gate", info)
                    else:
                        trainer_busy = False  # a lost candidate or anchor match: go on
                    continue
                if kind == "chunk":
                    free.append(info[0])
                    self._chunk_done(value)
                    fresh_rows = True
                elif kind == "learner":
                    rows_read = int(value.metrics.get("rows_seen", rows_read))
                    self._emit("on_candidate", value, self.state)
                    if value.version is None:
                        trainer_busy, fresh_rows = False, False
                        continue
                    self.registry.add_candidate(
                        value.version, parent=value.parent, uri=value.uri, metrics=value.metrics
                    )
                    fut = self.backend.call(
                        self.backend.gatekeeper, "bench", *self._bench_args(value)
                    )
                    flying[fut] = ("gate", value)
                elif kind == "gate":
                    self._decided(info, value)
                    if value.promoted:
                        fut = self.backend.call(
                            self.backend.gatekeeper, "anchors", info.version, info.uri
                        )
                        flying[fut] = ("anchors", None)
                    else:
                        trainer_busy = False
                else:  # anchors
                    if value:
                        self._emit("on_anchors", value, self.state)
                    trainer_busy = False


def _elo_dict(row: EloRow, *, promoted: bool, verdict: str) -> dict[str, Any]:
    return {
        "version": int(row.version),
        "parent": None if row.parent is None else int(row.parent),
        "elo": _finite(row.elo),
        "low": _finite(row.low),
        "high": _finite(row.high),
        "games": row.games,
        "promoted": promoted,
        "verdict": verdict,
        "time": time.time(),
    }


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else float("nan")
