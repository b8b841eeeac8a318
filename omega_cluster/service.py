"""``omega-cluster train``: one training run wired from its parts.

:func:`run_training` resolves the run directory (new, or ``run.resume``), checks what can be
checked before anything starts — the shard store opens and takes a file, the tracking URI's
scheme and server, the cluster address answers (in :func:`omega_cluster.cluster.init_ray`) — so
a bad value fails now in one line, not after an hour or never; then it starts or joins Ray
(``cluster.backend=ray``) or keeps everything in this process (``local``), and runs the
:class:`~omega_cluster.pipeline.driver.Pipeline` with two observers: the live display and
:class:`TrackingObserver`, which turns pipeline events into MLflow records through
:class:`omega_cluster.tracking.Tracker` (batched metrics, the Elo log, plots, the registered
champion). SIGINT/SIGTERM stop the pipeline after the chunks in flight are written; everything
written so far is kept and ``run.resume=<run dir>`` continues: the settings must agree with
the run's saved ``config.yaml`` except for the safe keys (:mod:`omega_cluster.config.resume`),
the pipeline recounts its games from the manifest, and the MLflow run goes on, or, for a run
directory copied or moved since it was created, a new one starts
(:mod:`omega_cluster.tracking.relocate`); ``pipeline.json`` logs each resume.

The service layer wires; it does not reach Ray itself: :func:`ray_backend` builds the actors'
plan from the settings (:mod:`omega_cluster.wiring`) and :mod:`omega_cluster.cluster` starts them.
"""

from __future__ import annotations

import logging
import math
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omega_cluster import wiring
from omega_cluster.cluster import ActorPlan, RayBackend, init_ray, is_retryable, shutdown_ray
from omega_cluster.config import ConfigError, flat_params, read_saved_settings, resume_changes
from omega_cluster.config.schema import Settings
from omega_cluster.data.probe import check_store_uri
from omega_cluster.eval.anchors import AnchorReport
from omega_cluster.eval.gatekeeper import GateOutcome
from omega_cluster.eval.rating_plots import plot_anchor_slices, plot_exploitability, plot_ratings
from omega_cluster.eval.report import plot_learning_curves
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.model.export import export_onnx
from omega_cluster.pipeline.driver import (
    LocalBackend,
    Observer,
    Pipeline,
    PipelineState,
    RunPaths,
)
from omega_cluster.pipeline.retries import RunFailed, brief
from omega_cluster.pipeline.run_state import rejections
from omega_cluster.progress import ProgressDisplay
from omega_cluster.tracking import (
    RUN_DIR_TAG,
    ResumeTarget,
    Tracker,
    check_tracking_uri,
    default_tracking_uri,
    find_run_dir,
    resume_target,
)
from omega_cluster.tracking.ratings import rating_metrics, slug
from omega_cluster.train.config import HEAD_FIGURES
from omega_cluster.train.workers import CandidateReport, ChunkReport

__all__ = [
    "RunResult",
    "TrackingObserver",
    "ray_backend",
    "resolve_run_dir",
    "run_training",
]

log = logging.getLogger(__name__)
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    state: PipelineState
    reason: str
    mlflow_run_id: str | None
    tracking_uri: str | None


def resolve_run_dir(settings: Settings) -> Path:
    """``run.resume`` (a run directory, or an MLflow run id with ``tracking.uri``), else
    ``run.dir``, else a new timestamped directory under ``runs/``."""
    resume = settings.run.resume
    if resume:
        path = Path(resume).expanduser()
        if not path.exists() and _looks_like_run_id(resume):
            if not settings.tracking.uri:
                raise wiring.RunDirError(
                    f"run.resume={resume!r} looks like an MLflow run id: give the tracking "
                    "server too (tracking.uri=...) or resume from the run directory"
                )
            path = find_run_dir(settings.tracking.uri, resume)
        if not (path / "pipeline.json").exists():
            raise wiring.RunDirError(
                f"run.resume={resume!r}: {path} is not a run directory (no pipeline.json)"
            )
        return path.resolve()
    if settings.run.dir:
        return Path(settings.run.dir).expanduser().resolve()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return (Path("runs") / f"{settings.game.name.replace(':', '_')}-{stamp}").resolve()


def dashboard_hint(uri: str) -> str:
    """How to open the MLflow UI for ``uri``: the server itself, or ``mlflow ui`` on a store."""
    if uri.startswith(("http://", "https://")):
        return f"open {uri}"
    return (f"mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000  "
            "(then open http://127.0.0.1:5000)")  # fmt: skip


def _looks_like_run_id(text: str) -> bool:
    return len(text) == 32 and all(c in "0123456789abcdef" for c in text)


class TrackingObserver(Observer):
    """Pipeline events → MLflow (through :class:`omega_cluster.tracking.Tracker`)."""

    def __init__(self, tracker: Any, settings: Settings, paths: RunPaths, config_yaml: str):
        self.tracker = tracker
        self.settings = settings
        self.paths = paths
        self.config_yaml = config_yaml
        self.model_name = settings.tracking.model_name or f"omega-{slug(settings.game.name)}"
        self._started = time.monotonic()
        self._losses: dict[str, list[tuple[float, float]]] = {}
        self._slice_losses: dict[str, list[tuple[float, float]]] = {}  # value loss per slice
        self._search_path = ""  # the last self-play search path tagged
        self._pipeline: Pipeline | None = None
        self._step = 0  # the step the totals were last logged at

    def on_start(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline
        t = self.tracker
        # a resumed run may change knobs (iterations, resume itself): recorded as tags
        t.log_params(flat_params(self.settings), on_change="tag")
        t.log_config(self.config_yaml)
        t.log_git(REPO_ROOT)
        t.set_tags({"omega.game": pipeline.game.spec.name, RUN_DIR_TAG: str(self.paths.root),
                    "omega.backend": self.settings.cluster.backend,
                    "omega.mode": self.settings.cluster.mode})  # fmt: skip
        if pipeline.state.warm_start:  # v0 from the teacher (learner.warm_start_games)
            t.log_metrics(pipeline.state.warm_start, step=0)
        pipeline.state.mlflow_run_id, pipeline.state.tracking_uri = t.run_id, t.tracking_uri
        if pipeline.state.games:  # a resumed run: its totals as recounted from the manifest
            self._log_totals(pipeline.state)
        pipeline.state.save(self.paths.state)

    def _totals_step(self, state: PipelineState) -> int:
        """The step of the totals: the games counted, never going back (a quarantined shard
        lowers the count; MLflow's latest value is the one at the highest step)."""
        self._step = max(self._step, state.games)
        return self._step

    def _log_totals(self, state: PipelineState) -> None:
        """The run's counters as the manifest has them (pipeline.json's, recounted)."""
        self.tracker.log_metrics(_totals(state), step=self._totals_step(state))

    def _elapsed(self) -> float:
        return max(time.monotonic() - self._started, 1e-9)

    def on_chunk(self, report: ChunkReport, state: PipelineState) -> None:
        if report.replayed:
            return
        seconds = max(report.seconds, 1e-9)
        if report.search_path and report.search_path != self._search_path:
            # which search self-play runs (the compiled one, or the Python loop and why), as a tag
            self._search_path = report.search_path
            self.tracker.set_tags({"selfplay.search_path": report.search_path})
        champion = self._pipeline.registry.champion if self._pipeline else None
        lag = (champion.version - report.version) if champion is not None else 0
        self.tracker.log_metrics(
            {
                "selfplay/games_per_s": report.games / seconds,
                "selfplay/decisions_per_s": report.decisions / seconds,
                "selfplay/simulations_per_s": report.simulations / seconds,
                **_totals(state),
                "selfplay/run_games_per_s": state.games / self._elapsed(),
                "selfplay/policy_lag": float(lag),
            },
            step=self._totals_step(state),
        )

    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None:
        if report.version is None:
            return
        m = report.metrics
        step = int(m.get("learner_step", 0))
        for key in ("loss", "policy_loss", "value_loss"):
            if key in m:
                self._losses.setdefault(key, []).append((step, m[key]))
        self.tracker.log_metrics(
            {
                "learner/loss": m.get("loss", float("nan")),
                "learner/policy_loss": m.get("policy_loss", float("nan")),
                "learner/value_loss": m.get("value_loss", float("nan")),
                **{f"learner/{k}": m[k] for k in HEAD_FIGURES if k in m},
                # the losses on the newest games before the network trained on them
                **{f"learner/{k}": v for k, v in m.items() if k.startswith("heldout/")},
                "learner/samples_per_s": m.get("samples_per_s", float("nan")),
                "replay/window_rows": m.get("window_rows", float("nan")),
                "replay/rows_seen": m.get("rows_seen", float("nan")),
            },
            step=step,
        )
        self._log_slices(m, step)

    def _log_slices(self, m: dict[str, float], step: int) -> None:
        """The learner's per-slice figures (``slice/<key>/<name>``) as ``learner/slice/<slugged
        key>/<name>`` metrics; the value losses also feed plots/losses_by_slice.png."""
        metrics = {}
        for name, value in m.items():
            if name.startswith("slice/"):
                key, figure = name[len("slice/") :].rsplit("/", 1)
                metrics[f"learner/slice/{slug(key)}/{figure}"] = value
                if figure == "value_loss":
                    self._slice_losses.setdefault(key, []).append((step, value))
        if metrics:
            self.tracker.log_metrics(metrics, step=step)

    def on_gate(self, outcome: GateOutcome, row: dict[str, Any], state: PipelineState) -> None:
        metrics = {
            "gate/score": outcome.score,
            "gate/score_low": outcome.score_low,
            "gate/score_high": outcome.score_high,
            "gate/games": float(outcome.games),
            "gate/elo_gap": outcome.elo_gap,
            "gate/promoted": 1.0 if outcome.promoted else 0.0,
            "gate/seconds": outcome.seconds,
        }
        for s in outcome.slices:  # score, fair shares and Elo with their intervals, per table
            for name, value in s.items():
                if isinstance(value, int | float) and math.isfinite(value):
                    metrics[f"gate/slice/{slug(s['key'])}/{name}"] = float(value)
        self.tracker.log_metrics(metrics, step=state.decisions)
        self.tracker.log_elo_row(row)
        self._plots()

    def on_champion(self, version: int, uri: str, state: PipelineState) -> None:
        onnx = None
        if self.settings.tracking.log_onnx:
            onnx = _export_onnx(uri)
        self.tracker.log_champion(
            version=version, checkpoint_dir=uri, onnx_path=onnx, model_name=self.model_name,
            description=f"omega_cluster champion v{version} of {self.settings.game.name}",
        )  # fmt: skip
        self.tracker.log_metrics({"champion/version": float(version)}, step=state.decisions)

    def on_anchors(self, report: AnchorReport, state: PipelineState) -> None:
        """The anchored ratings (metrics ``rating/<objective>/<player>`` and ``_low``/``_high``
        at step version, rows of the Elo log) and the per-table scores beside them."""
        self.tracker.log_metrics(rating_metrics(report), step=report.version)
        for row in state.ratings:
            if row["version"] == report.version:
                self.tracker.log_elo_row(row)
        self._plots()

    def on_stop(self, state: PipelineState, reason: str) -> None:
        self._log_totals(state)  # the final counters: after the last quarantine
        self._plots()
        tags = {"omega.stop_reason": reason}
        why = rejections(state.elo_log)
        if why:  # a run whose last candidates were all rejected says why
            tags["omega.rejections"] = why
        self.tracker.set_tags(tags)
        self.tracker.flush()

    def _plots(self) -> None:
        if self._pipeline is None:
            return
        out = self.paths.root / "plots"
        files = []
        state = self._pipeline.state
        if state.ratings or any(r.get("promoted") for r in state.elo_log):
            files.append(plot_ratings([*state.ratings, *state.elo_log], out / "rating.png",
                                      anchors=self.settings.gate.anchors))  # fmt: skip
        if state.anchor_slices:
            files.append(plot_anchor_slices(state.anchor_slices, out / "slices.png"))
        if state.exploitability:
            files.append(plot_exploitability(state.exploitability, out / "exploitability.png"))
        if self._losses:
            files.append(plot_learning_curves(self._losses, out / "losses.png",
                                              xlabel="learner step"))  # fmt: skip
        if self._slice_losses:
            files.append(plot_learning_curves(self._slice_losses, out / "losses_by_slice.png",
                                              xlabel="learner step", ylabel="value loss",
                                              title="value loss by table"))  # fmt: skip
        if files:
            self.tracker.log_figure_files(files)


def _export_onnx(uri: str) -> Path | None:
    try:
        loaded = load_checkpoint(uri, load_optimizer=False)
        return export_onnx(loaded.model, Path(uri).parent / f"{Path(uri).name}.onnx")
    except Exception as err:  # ONNX is a convenience: the champion is registered regardless
        log.warning("could not export %s to ONNX: %s", uri, err)
        return None


@contextmanager
def _stop_on_signals(pipeline: Pipeline) -> Iterator[None]:
    """SIGINT/SIGTERM ask the pipeline to stop after the work in flight (a second SIGINT
    interrupts at once)."""
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if pipeline._stop_reason and signum == signal.SIGINT:
            raise KeyboardInterrupt
        pipeline.stop(f"{name}: stopping after the chunks in flight")

    for sig in (int(signal.SIGINT), int(signal.SIGTERM)):
        with suppress(ValueError):  # not the main thread: no signal handling
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def ray_backend(settings: Settings, paths: RunPaths) -> RayBackend:
    """The pipeline's backend over Ray actors, each given its worker's own config."""
    c = settings.cluster
    plan = ActorPlan(
        game=wiring.build_game(settings).spec.name,
        selfplay=wiring.selfplay_worker_config(settings),
        learner=wiring.learner_worker_config(settings),
        gate=wiring.gate_service_config(settings),
        self_play_actors=c.self_play_actors,
        bench_workers=c.bench_workers,
        max_restarts=c.max_restarts,
        learner_gpus=c.learner_gpus,
    )
    return RayBackend(plan, run_dir=paths.root, store_uri=paths.store_uri)


def _make_run_dir(root: Path, key: str) -> None:
    """Create the run directory and check it takes files: one that cannot (under a file, on a
    read-only disk, without permission) stops the run before anything starts, naming ``key``."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=root):
            pass
    except OSError as err:
        file = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
        why = f"{file} is a file" if file else err.strerror or str(err)
        raise ConfigError(f"{key}={str(root)!r}: cannot write the run directory: {why}") from err


def run_training(
    settings: Settings, *, config_yaml: str = "", progress: bool | None = None
) -> RunResult:
    """Run one training (module docstring); returns where it wrote and how it stopped."""
    root = resolve_run_dir(settings)
    paths = RunPaths(root, settings.run.shard_store)
    _make_run_dir(root, "run.resume" if settings.run.resume else "run.dir")
    check_store_uri(paths.store_uri)  # a store the actors cannot use fails here, not in each actor
    prior = PipelineState.load(paths.state, game=_game_name(settings))
    resuming = paths.state.exists()
    # before anything is written: a resume that would change what was trained is refused
    changes = _resume_changes(settings, root) if resuming else {}
    if config_yaml:  # the resolved config beside the run's state (the MLflow run has it too)
        (root / "config.yaml").write_text(config_yaml)
    observers: list[Observer] = []
    if settings.run.progress if progress is None else progress:
        observers.append(ProgressDisplay())
    uri = None
    if settings.tracking.enabled:  # fail fast: an unreachable server stops the run now
        uri = settings.tracking.uri or default_tracking_uri(root)
        check_tracking_uri(uri)
    tracker: Any = None
    pipeline: Pipeline | None = None
    started_ray = False
    status = "FAILED"
    retryable: Any = lambda err: False  # noqa: E731
    try:
        backend: Any = LocalBackend
        if settings.cluster.backend == "ray":
            # before the MLflow run opens: a cluster too small for the config fails first
            started_ray = init_ray(settings, run_dir=root)
            backend, retryable = ray_backend, is_retryable
        target = ResumeTarget(None)
        if uri is not None:
            print(f"MLflow tracking: {uri}\n  dashboard: {dashboard_hint(uri)}", flush=True)
            if resuming:  # the same MLflow run, unless the directory or the store changed
                target = resume_target(run_id=prior.mlflow_run_id, tracked_at=prior.tracking_uri,
                                       created_at=prior.root, uri=uri, run_dir=root)  # fmt: skip
            tracker = _tracker(settings, root, uri, target)
            observers.append(TrackingObserver(tracker, settings, paths, config_yaml))
        if resuming:  # the resume log in pipeline.json, before the pipeline reads it
            mlflow = (
                None if tracker is None else (tracker.run_id, tracker.tracking_uri, target.note)
            )
            prior.record_resume(paths, changes, mlflow)
        pipeline = Pipeline(settings, paths, backend, observers=observers,
                            is_retryable=retryable)  # fmt: skip
        with _stop_on_signals(pipeline):
            state = pipeline.run()
        reason = pipeline.stop_reason
        status = "KILLED" if pipeline._stop_reason else "FINISHED"
    except KeyboardInterrupt:
        status = "KILLED"
        raise
    except Exception as err:
        if not retryable(err):
            raise
        # an actor that died outside the driver's retries (the pipeline's start, a registry
        # call): one line, and the run resumes from what was written
        raise RunFailed(
            f"the run stopped: a Ray actor failed: {brief(err)} (what was written is kept: "
            f"run.resume={root} continues once the cause is fixed)"
        ) from None
    finally:
        if pipeline is not None:
            pipeline.backend.shutdown()  # actors of a joined cluster must not outlive the run
        if tracker is not None:
            tracker.close(status)
        if started_ray:
            shutdown_ray()
    return RunResult(root, state, reason, tracker.run_id if tracker else None,
                     tracker.tracking_uri if tracker else None)  # fmt: skip


def _resume_changes(settings: Settings, root: Path) -> dict[str, tuple[str, str]]:
    """The settings a resume changes from the run's saved ``config.yaml`` (ConfigError for any
    outside SAFE_ON_RESUME: the saved config is the truth, omega_cluster.config.resume)."""
    saved = root / "config.yaml"
    if not saved.is_file():
        return {}
    return resume_changes(read_saved_settings(saved), settings, where=str(root))


def _tracker(settings: Settings, root: Path, uri: str, target: ResumeTarget) -> Tracker:
    """The run's MLflow run: ``target``'s to continue, else a new one tagged with its origin."""
    t = settings.tracking
    tracker = Tracker(run_dir=root, uri=uri, experiment=t.experiment, run_name=root.name,
                      run_id=target.run_id, flush_every_s=t.flush_every_s)  # fmt: skip
    if target.tags:
        tracker.set_tags(target.tags)
    copied = target.tags.get("omega.resumed_from")
    if copied and uri == default_tracking_uri(root):  # the copy's own store holds a copy of it
        tracker.end_copied_run(copied)
    return tracker


def _game_name(settings: Settings) -> str:
    return wiring.build_game(settings).spec.name


def _totals(state: PipelineState) -> dict[str, float]:
    """The run's stored totals, and its games per table (``selfplay/slice/<table>/games_total``
    in a run over several tables), all as the manifest's live entries have them."""
    totals = {"selfplay/games_total": float(state.games),
              "selfplay/records_total": float(state.records),
              "selfplay/shards_total": float(state.shards)}  # fmt: skip
    if len(state.tables) > 1:
        totals.update({f"selfplay/slice/{slug(k)}/games_total": float(v)
                       for k, v in state.tables.items()})  # fmt: skip
    return totals
