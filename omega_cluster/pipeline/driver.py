"""The pipeline driver: collect → train → gate → promote, synchronous or asynchronous.

The service's data flow as one loop over worker *handles* reached through a
:class:`~.backend.Backend`: :class:`~.backend.LocalBackend` calls the pure workers of
:mod:`.workers` and :class:`omega_cluster.eval.gatekeeper.GateService` in this process (tests,
debugging, a run without Ray); :class:`omega_cluster.cluster.backend.RayBackend` calls the same
methods on Ray actors. The driver never polls: it waits on the futures of the calls it made.

Both modes are built from the same three steps, each a call handled when its future is ready:

* **collect** — a self-play actor plays one chunk (``cluster.games_per_chunk`` games, seeded from
  the run seed and the chunk's index, so a run is reproducible whatever the actor count) and
  writes it as one shard; a chunk whose actor died is re-run with ``retry=True`` (the worker
  then finds its shard if it was written, so no game counts twice);
* **train** — the learner trains a candidate from the champion (or says it waits for data);
* **gate** — the gatekeeper benches the candidate against the champion; a promoted one (and the
  first champion) then plays the anchors, its anchored ratings kept beside the Elo log
  (``ratings``). A candidate is benched before the next is trained, so none is stale on arrival.

A call that fails retryably (its actor died) is made again after a back-off; :data:`MAX_FAILURES`
failures in a row of one kind stop the run as :meth:`Pipeline.stop` does, then
:meth:`Pipeline.run` raises :class:`RunFailed` naming them (:mod:`.retries`). The modes differ
only in when the steps start:

* **sync** — per iteration: every actor plays its share of ``run.games_per_iteration`` games,
  then one candidate is trained and gated.
* **async** — self-play never waits for training: each actor gets its next chunk as soon as it
  returns one, with the champion of that moment (weights are pulled at chunk boundaries, so an
  actor is at most one chunk behind a promotion). Back-pressure: no new chunk starts while the
  rows written are more than ``cluster.max_rows_ahead`` ahead of the rows the learner has read.
  The learner starts whenever it is free and new rows arrived since it last waited for data.

Both stop after ``run.iterations`` gate decisions, after ``run.max_minutes``, or on
:meth:`Pipeline.stop` (SIGINT/SIGTERM in the CLI, seen within :data:`WAIT_S`): no new call
starts, the calls in flight are finished and written, the state saved, so ``run.resume`` continues.

State that survives a restart: the model registry (``registry.json``), the learner's checkpoint
(``learner/``), the shards and their manifest, and ``pipeline.json`` (chunk counter, decisions,
the Elo log). An :class:`Observer` receives every event (tracking and the live display).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from omega_cluster.config.schema import Settings
from omega_cluster.data import ShardStore, audit_store, store_totals
from omega_cluster.eval.anchors import AnchorReport
from omega_cluster.eval.gatekeeper import GateOutcome
from omega_cluster.eval.rating import EloRow, chain_start, promote
from omega_cluster.eval.stats import ConfidenceInterval
from omega_cluster.model.checkpoint import load_checkpoint, save_checkpoint
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.pipeline.backend import Backend, LocalBackend
from omega_cluster.pipeline.retries import MAX_FAILURES, RunFailed, backoff, brief
from omega_cluster.pipeline.run_state import (
    PipelineState,
    RunPaths,
    count,
    elo_log_row,
    recount,
)
from omega_cluster.train.workers import CandidateReport, ChunkReport, Weights

# components built from the run's settings (the service layer's wiring)
from omega_cluster.wiring import build_encoder, build_fleet, build_game, build_model, warm_start

__all__ = [
    "MAX_FAILURES",
    "Backend",
    "LocalBackend",
    "Observer",
    "Pipeline",
    "PipelineState",
    "RunFailed",
    "RunPaths",
]

log = logging.getLogger(__name__)

INITIAL_ELO = 1000.0  # the first champion (random weights) sits level with the random anchor
WAIT_S = 1.0  # the longest wait on calls in flight before the driver looks at its stop flag


class Observer:
    """Pipeline events (every method optional). Tracking and the live display implement it."""

    def on_start(self, pipeline: Pipeline) -> None: ...
    def on_chunk(self, report: ChunkReport, state: PipelineState) -> None: ...
    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None: ...
    def on_gate(self, outcome: GateOutcome, row: dict[str, Any], state: PipelineState) -> None: ...
    def on_champion(self, version: int, uri: str, state: PipelineState) -> None: ...
    def on_anchors(self, report: AnchorReport, state: PipelineState) -> None: ...
    def on_stop(self, state: PipelineState, reason: str) -> None: ...


@dataclass
class _Call:
    """A call in flight and what to do with its outcome.

    ``lost(pause)`` handles a retryable failure; without it the same call is made again after
    ``pause`` seconds. ``kind`` names what its failures are counted against (module docstring).
    """

    handle: Any
    method: str
    args: tuple[Any, ...]
    done: Callable[[Any], None]
    kind: str
    lost: Callable[[float], None] | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


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
        self.key_of = build_fleet(settings).key_of  # the table of a stored game (its counts)
        paths.root.mkdir(parents=True, exist_ok=True)
        resuming = paths.state.exists()
        self.state = PipelineState.load(paths.state, game=self.game.spec.name)
        ModelRegistry(paths.root, game=self.game.spec.name)  # a foreign run dir fails here
        # orphans and lost files; no grace period: none of this run's writers has started yet
        # (an embedded Ray left by a killed driver was ended before this, see cluster/processes)
        self.store = ShardStore(paths.store_uri)  # its index of game ids grows with the run
        for line in audit_store(self.store, grace_s=0.0).lines():
            log.warning("%s", line)
        if resuming:  # a driver killed after a shard's commit, before its save, undercounts
            recount(
                self.state, paths, self.store, self.key_of
            )  # after the audit: re-committed orphans count
        elif self.state.root is None:
            self.state.root = str(paths.root.absolute())  # where the run was created
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
        # the scheduler: calls in flight, idle actors, chunks to re-run, the trainer's state
        self._calls: dict[Any, _Call] = {}
        self._free = deque(range(len(self.backend.selfplay)))
        self._retries: deque[tuple[int, int]] = deque()
        self._resting: list[tuple[float, int]] = []  # (until, actor): backing off after a failure
        self._delayed: list[tuple[float, _Call]] = []  # (when, call): to be made again
        self._failures: dict[str, int] = {}  # kind -> failures in a row
        self._failure: RunFailed | None = None  # why the run must stop as failed
        self._trainer_busy = False  # the learner trains or the gatekeeper benches (they alternate)
        self._fresh_rows = True  # rows arrived since the learner last said it was waiting for data
        self._rows_read = 0  # rows the learner has read (what back-pressure counts against)

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
        self.state.elo_log.append(elo_log_row(row, promoted=True, verdict="initial"))
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
            self._rate_first_champion()
            if self.settings.cluster.mode == "async":
                reason = self._run_async()
            else:
                reason = self._run_sync()
            if self._failure is not None:
                raise self._failure
        finally:
            self._count()  # a shard the learner quarantined after the last chunk stops counting
            self.state.save(self.paths.state)
            self.stop_reason = reason
            self._emit("on_stop", self.state, reason)
        return self.state

    # -- the two modes ----------------------------------------------------------------------
    def _run_sync(self) -> str:
        """Per iteration: collect its games, then train and gate one candidate."""
        while (reason := self._should_stop()) is None:
            self.state.iteration += 1
            self._collect(self.settings.run.games_per_iteration)
            if self._should_stop() and self._stop_reason:
                return self._stop_reason
            self._train()  # a candidate goes on to its gate; without one, collect more
            self._wait_all()
        return reason

    def _run_async(self) -> str:
        """Chunks whenever an actor is free and back-pressure allows, the learner whenever it
        is free and has new rows; each outcome handled as it arrives."""
        reason: str | None = None
        while True:
            reason = reason or self._should_stop()
            if reason is None:
                ahead = self.settings.cluster.max_rows_ahead
                while self._free and self.state.records - self._rows_read <= ahead:
                    self._play_next(self._new_chunk)
                if not self._trainer_busy and self._fresh_rows:
                    self._train()
            if not self._calls and (reason is not None or not (self._resting or self._delayed)):
                return reason or "done"
            self._wait()

    # -- the scheduler ----------------------------------------------------------------------
    def _submit(self, call: _Call) -> None:
        future = self.backend.call(call.handle, call.method, *call.args, **call.kwargs)
        self._calls[future] = call

    def _wait(self, timeout: float = WAIT_S) -> None:
        """Wait for calls in flight (up to ``timeout`` s, less when a back-off ends sooner) and
        hand each outcome to its call; then resume what backed off and is due."""
        due = [t for t, _ in self._resting + self._delayed]
        if due:
            timeout = max(0.0, min(timeout, min(due) - time.monotonic()))
        if self._calls:
            ready = self.backend.wait(list(self._calls), timeout)
        else:
            ready = []
            time.sleep(timeout if due else 0.0)
        for future in ready:
            call = self._calls.pop(future)
            try:
                value = self.backend.result(future)
            except Exception as err:
                if not self.is_retryable(err):
                    raise
                self._failed(call, err)
                continue
            self._failures.pop(call.kind, None)
            call.done(value)
        self._resume_due()

    def _failed(self, call: _Call, err: Exception) -> None:
        """Count the failure against its kind; stop the run at :data:`MAX_FAILURES` in a row,
        else try again after the back-off."""
        n = self._failures[call.kind] = self._failures.get(call.kind, 0) + 1
        if n >= MAX_FAILURES and self._failure is None:
            self._failure = RunFailed(
                f"the run stopped: {call.kind} failed {n} times in a row; the last error: "
                f"{brief(err)} (what was written is kept: run.resume={self.paths.root} "
                "continues once the cause is fixed)"
            )
            self.stop(f"failed: {call.kind} failed {n} times in a row")
        pause = backoff(n)
        if call.lost is not None:
            call.lost(pause)
        elif not self._stop_reason:
            self._delayed.append((time.monotonic() + pause, call))

    def _resume_due(self) -> None:
        """Actors whose back-off ended are free again; calls whose back-off ended are made
        again (not once the run stops)."""
        now = time.monotonic()
        self._free.extend(actor for until, actor in self._resting if until <= now)
        self._resting = [(until, actor) for until, actor in self._resting if until > now]
        due = [call for when, call in self._delayed if when <= now]
        self._delayed = [(when, call) for when, call in self._delayed if when > now]
        for call in due if not self._stop_reason else ():
            self._submit(call)

    def _wait_all(self) -> None:
        """Until the calls in flight and those to be made again are done (or the run stops)."""
        while self._calls or (self._delayed and not self._stop_reason):
            self._wait()

    # -- collect ----------------------------------------------------------------------------
    def _collect(self, games: int) -> None:
        """``games`` games in chunks over all actors; failed chunks re-run. Once the run
        stops, no chunk starts: those not started are given back (``next_chunk``)."""
        per_chunk = self.settings.cluster.games_per_chunk
        sizes = [per_chunk] * (games // per_chunk)
        if games % per_chunk:
            sizes.append(games % per_chunk)
        todo = deque((self.state.next_chunk + i, n) for i, n in enumerate(sizes))
        self.state.next_chunk += len(todo)
        self.state.save(self.paths.state)
        while self._calls or (not self._stop_reason and (todo or self._retries)):
            while self._free and (self._retries or todo) and not self._stop_reason:
                self._play_next(todo.popleft)
            self._wait()
        if todo and todo[-1][0] == self.state.next_chunk - 1:  # none of them was played
            self.state.next_chunk = todo[0][0]
            self.state.save(self.paths.state)

    def _new_chunk(self) -> tuple[int, int]:
        chunk = self.state.next_chunk
        self.state.next_chunk += 1
        # saved before the chunk starts: a driver killed while it plays never hands its index
        # out again on resume (its shard may be written; the same index would write it twice)
        self.state.save(self.paths.state)
        return chunk, self.settings.cluster.games_per_chunk

    def _play_next(self, new_chunk: Callable[[], tuple[int, int]]) -> None:
        """A free actor plays the next chunk: one to re-run, else ``new_chunk()``."""
        chunk, n = self._retries.popleft() if self._retries else new_chunk()
        actor = self._free.popleft()
        self._submit(_Call(
            self.backend.selfplay[actor], "play_chunk", (self.champion_weights(), chunk, n),
            done=partial(self._chunk_played, actor), kind=f"self-play actor {actor}",
            lost=partial(self._chunk_lost, actor, chunk, n),
            kwargs={"retry": (chunk, n) in self._retried},
        ))  # fmt: skip

    def _chunk_played(self, actor: int, report: ChunkReport) -> None:
        self._free.append(actor)
        self._count()  # the chunk's shard is committed: the manifest counts it (a replay: once)
        self.state.save(self.paths.state)
        self._fresh_rows = True
        self._emit("on_chunk", report, self.state)

    def _count(self) -> bool:
        """Set the games, records and shards counters from the shard store's live manifest
        entries, the only truth: a shard quarantined since (by any reader: the learner, a
        retried chunk) stops counting, a retried chunk's shard counts once. One line when a
        counter fell. Returns whether any changed (the caller saves)."""
        st = self.state
        before = (st.shards, st.records, st.games)
        changed = count(st, store_totals(self.store), self.key_of)
        after = (st.shards, st.records, st.games)
        if any(a < b for a, b in zip(after, before, strict=True)):
            log.warning("the shard store %s holds %d shards, %d records, %d games, fewer than "
                        "counted (%d, %d, %d): a shard left its manifest (quarantined, see its "
                        "line); the counters follow the manifest", self.store.uri, *after,
                        *before)  # fmt: skip
        return changed

    def _chunk_lost(self, actor: int, chunk: int, games: int, pause: float) -> None:
        """The chunk goes back to the queue (re-run with ``retry=True``), its actor rests."""
        self._resting.append((time.monotonic() + pause, actor))
        self._retried.add((chunk, games))
        self._retries.append((chunk, games))

    # -- train ------------------------------------------------------------------------------
    def _train(self) -> None:
        self._trainer_busy = True
        args = (self.champion_weights(), self.registry.next_version)
        self._submit(_Call(self.backend.learner, "train_candidate", args, done=self._trained,
                           kind="the learner's train_candidate"))  # fmt: skip

    def _trained(self, report: CandidateReport) -> None:
        """A candidate goes to its gate; a learner that waits for data frees the trainer."""
        self._rows_read = int(report.metrics.get("rows_seen", self._rows_read))
        if self._count():  # the learner's reads may have quarantined a shard
            self.state.save(self.paths.state)
        if report.version is not None:
            self.registry.add_candidate(report.version, parent=report.parent, uri=report.uri,
                                        metrics=report.metrics)  # fmt: skip
        self._emit("on_candidate", report, self.state)
        if report.version is None:
            self._trainer_busy, self._fresh_rows = False, False
        else:
            self._gate(report)

    # -- gate -------------------------------------------------------------------------------
    def _gate(self, report: CandidateReport) -> None:
        champion = self.registry.champion
        assert champion is not None and report.version is not None
        args = (report.version, report.parent, report.uri, champion.version, champion.uri)
        self._submit(_Call(self.backend.gatekeeper, "bench", args,
                           done=partial(self._gated, report), kind="the gatekeeper's bench"))  # fmt: skip

    def _gated(self, report: CandidateReport, outcome: GateOutcome) -> None:
        """Record the decision; a promoted champion then plays the anchors."""
        self._decided(report, outcome)
        if outcome.promoted:
            args = (report.version, report.uri)
            self._submit(_Call(self.backend.gatekeeper, "anchors", args, done=self._anchored,
                               kind="the gatekeeper's anchors"))  # fmt: skip
        else:
            self._trainer_busy = False

    def _rate_first_champion(self) -> None:
        """The first champion plays the anchors first (once a run): the rating curve's start."""
        champion = self.registry.champion
        assert champion is not None
        if champion.version != 0 or self.state.ratings:
            return
        self._trainer_busy = True
        self._submit(_Call(self.backend.gatekeeper, "anchors", (0, champion.uri),
                           done=self._anchored, kind="the gatekeeper's anchors"))  # fmt: skip
        self._wait_all()

    def _anchored(self, report: AnchorReport) -> None:
        """The anchored ratings are kept beside the Elo log; observers get the whole report."""
        if report:
            self.state.record_anchors(report)
            self.state.save(self.paths.state)
            self._emit("on_anchors", report, self.state)
        self._trainer_busy = False

    def _decided(self, report: CandidateReport, outcome: GateOutcome) -> None:
        """Record a gate decision: registry, Elo log, observers."""
        assert report.version is not None
        gap = ConfidenceInterval(outcome.elo_gap, outcome.elo_low, outcome.elo_high, 0.95,
                                 outcome.games)  # fmt: skip
        measured = promote(self._champion_row(), str(report.version), gap, outcome.games)
        metrics = {"gate_score": outcome.score, "gate_games": float(outcome.games)}
        if outcome.promoted:
            self.registry.promote(report.version, elo=measured.elo, elo_low=measured.low,
                                  elo_high=measured.high, reason=outcome.reason,
                                  metrics=metrics)  # fmt: skip
            self.state.promotions += 1
        else:
            self.registry.reject(report.version, reason=outcome.reason, metrics=metrics)
        self.state.decisions += 1
        row = elo_log_row(measured, promoted=outcome.promoted, verdict=outcome.verdict)
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
