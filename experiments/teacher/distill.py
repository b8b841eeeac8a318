"""Which learner settings distil a run's self-play data into a network that beats its v0?

Takes a run's shards and its v0, trains ONE network from v0 (as the continuous learner does) with
``key=value`` overrides of the run's learner settings, snapshots it every ``--every`` steps and
gates each snapshot against v0 with a fixed game count (paired deals, the run's gate player):
the learning curve of one setting on fixed data, so settings can be compared without playing a
new run for each.

    python experiments/teacher/distill.py --run /tmp/pilot/b --steps 1200 --every 400 \
        learner.value_coef=0.1
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from omega_cluster import wiring
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.model.registry import ModelRegistry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--every", type=int, default=400)
    parser.add_argument("--games", type=int, default=600, help="gate games per snapshot")
    parser.add_argument("--tag", default="a")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    work = Path(f"/tmp/distill-{args.tag}")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(
        args.run, work, ignore=shutil.ignore_patterns("learner", "mlflow.db", "mlartifacts")
    )
    fixed = ["gate.mode=fixed", f"gate.games_per_slice={args.games // 2}"]
    settings = wiring.load_run_settings(work, [*args.overrides, *fixed])
    v0 = ModelRegistry(work, game=settings.game.name).get(0)
    worker = wiring.learner_worker(settings, run_dir=work, store_uri=str(work / "shards"))
    worker.learner.model.load_state_dict(
        load_checkpoint(str(work / v0.uri), load_optimizer=False).model.state_dict()
    )
    worker.window.refresh()
    gate = wiring.gate_service(settings)
    print(f"{args.tag} {' '.join(args.overrides)}: window {worker.window.rows} rows", flush=True)
    for k in range(args.every, args.steps + 1, args.every):
        started = time.perf_counter()
        stats = worker.learner.train_steps(worker.window, args.every)
        uri = str(work / "models" / f"v{1000 + k}")
        worker.learner.save(uri, metrics={})
        trained = time.perf_counter() - started
        outcome = gate.bench(1000 + k, 0, uri, 0, str(work / v0.uri))
        print(
            f"  step {k}: policy {stats.policy_loss:.3f} value {stats.value_loss:.3f} "
            f"({trained:.0f} s); vs v0 {outcome.score:.3f} [{outcome.score_low:.3f}, "
            f"{outcome.score_high:.3f}] over {outcome.games} games",
            flush=True,
        )


if __name__ == "__main__":
    main()
