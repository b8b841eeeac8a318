"""MLflow for a tuning run: its settings, the per-generation figures, the tuning curve and the
preset.

:func:`open_tuning_tracking` opens the run's MLflow run (the one the tuning log names when the
tuning resumes, else a new one whose params are the run's settings). :func:`log_generation`
logs ``best_fitness``, ``mean_fitness``, ``median_fitness``, ``sigma``, ``pool_size`` and
``seconds`` at step = generation. :func:`log_result` draws ``tuning.png`` (each generation's
best, mean and median fitness and the best so far) and uploads it with the preset, the log and
the best weights as artifacts.
"""

from __future__ import annotations

from pathlib import Path

from omega_cluster.eval.tuning import LOG_FILE, Generation, Tuner
from omega_cluster.tracking.tracker import Tracker

__all__ = ["CURVE_FILE", "log_generation", "log_result", "open_tuning_tracking", "plot_curve"]

CURVE_FILE = "tuning.png"


def open_tuning_tracking(tuner: Tuner, *, uri: str | None = None) -> Tracker:
    """The MLflow run of ``tuner`` (module doc); its id is kept in the tuner (and so its log)."""
    tracker = Tracker(
        run_dir=tuner.out, uri=uri, experiment="omega_cluster-tune", run_id=tuner.run_id or None
    )
    if not tuner.run_id:
        cfg = tuner.config
        tracker.log_params(
            {
                **{k: v for k, v in cfg.as_dict().items() if k != "params"},
                "params": dict(cfg.params),
                "weights": ",".join(tuner.target.names),
                "command": tuner.command,
            }
        )
        tuner.run_id = tracker.run_id
    return tracker


def log_generation(tracker: Tracker, generation: Generation) -> None:
    tracker.log_metrics(generation.summary(), step=generation.index)


def plot_curve(history: list[Generation], path: str | Path) -> Path:
    """``tuning.png``: fitness per generation (best, mean, median) and the best so far."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [g.index for g in history]
    best = [max(g.fitness) for g in history]
    so_far = [max(best[: i + 1]) for i in range(len(best))]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(xs, best, "o-", label="generation best")
    ax.plot(xs, [g.summary()["mean_fitness"] for g in history], "s--", label="generation mean")
    ax.plot(xs, [g.summary()["median_fitness"] for g in history], ":", label="generation median")
    ax.step(xs, so_far, where="post", color="black", alpha=0.5, label="best so far")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("generation")
    ax.set_ylabel("fair share against the pool (1.0 is par)")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def log_result(tracker: Tracker, tuner: Tuner, preset: Path) -> Path:
    """The curve, the preset and the tuning log as artifacts; the best weights as metrics."""
    curve = plot_curve(tuner.history, tuner.out / CURVE_FILE)
    tracker.log_artifact(curve)
    tracker.log_artifact(preset)
    tracker.log_artifact(tuner.out / LOG_FILE)
    weights = tuner.target.as_dict(tuner.mean_weights())
    tracker.log_metrics({f"weight.{k}": v for k, v in weights.items()}, step=len(tuner.history))
    tracker.flush()
    return curve
