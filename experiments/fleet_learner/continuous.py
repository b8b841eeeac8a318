"""Does a candidate trained continuously beat the champion where 150-step candidates do not?

A run whose gate rejects every candidate trains each new candidate from the same champion: with
``steps_per_candidate`` 150, no candidate is ever more than 150 steps from v0, however long the
run. This study takes a run's shards and its v0, trains ONE network from v0 for as many steps as
the whole run trained (``--steps``, the learner_step of its last candidate), and gates it against
v0 with the run's own gate (paired deals at every table of the fleet, the default SPRT).

    python experiments/fleet_learner/continuous.py --run /tmp/fleet_trial --steps 1584
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from omega_cluster import wiring
from omega_cluster.model.registry import ModelRegistry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--version", type=int, default=1000, help="the candidate's version (seeds)")
    args = parser.parse_args()
    work = Path(f"/tmp/continuous-{args.version}")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(
        args.run, work, ignore=shutil.ignore_patterns("learner", "mlflow.db", "mlartifacts")
    )
    settings = wiring.load_run_settings(work)
    registry = ModelRegistry(work, game=settings.game.name)
    v0 = registry.get(0)
    worker = wiring.learner_worker(settings, run_dir=work, store_uri=str(work / "shards"))
    from omega_cluster.model.checkpoint import load_checkpoint

    worker.learner.model.load_state_dict(
        load_checkpoint(str(work / v0.uri), load_optimizer=False).model.state_dict()
    )
    worker.window.refresh()
    started = time.perf_counter()
    stats = worker.learner.train_steps(worker.window, args.steps)
    print(
        f"trained {stats.steps} steps on {stats.window_rows} rows in {time.perf_counter() - started:.0f} s: "
        f"policy {stats.policy_loss:.3f} value {stats.value_loss:.3f}",
        flush=True,
    )
    uri = str(work / "models" / f"v{args.version}")
    worker.learner.save(uri, metrics={})
    gate = wiring.gate_service(settings)
    started = time.perf_counter()
    outcome = gate.bench(args.version, 0, uri, 0, str(work / v0.uri))
    print(
        f"gate vs v0: {outcome.verdict}, score {outcome.score:.3f} [{outcome.score_low:.3f}, "
        f"{outcome.score_high:.3f}] over {outcome.games} games ({time.perf_counter() - started:.0f} s): "
        f"{outcome.reason}"
    )
    for s in outcome.slices:
        print("  ", {k: (round(v, 3) if isinstance(v, float) else v) for k, v in s.items()})


if __name__ == "__main__":
    main()
