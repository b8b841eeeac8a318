"""Cost per metric point of :class:`omega_cluster.tracking.Tracker` (buffered, sent with
``log_batch``) against single ``MlflowClient.log_metric`` calls, both on one local sqlite store.

Points are logged as the driver does, four metrics per step. The tracker's cost is split into
buffering (the ``log_metrics`` calls, buffer large enough to hold everything) and sending (the
``log_batch`` calls of the final flush, 1,000 points per request); the driver pays both with the
default buffer. The reference makes one ``log_metric`` call per point, each a sqlite transaction.
Printed: microseconds per point of each, and the ratio (how many times cheaper the buffered path
is). Figures on the shared 2-core dev VM under heavy load (20k points): buffering 1-25 us/point,
sending 180-290 us/point, single calls 25-33 ms/point (a sqlite commit each), ratio 110-130x. The store's creation (MLflow's
schema migrations, seconds) is not timed. Timings are noisy while other processes share the
machine. Run: ``python -m bench.bench_tracking [--quick]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    steps, singles = (1_000, 100) if quick else (5_000, 400)
    from omega_cluster.tracking import Tracker, _client

    keys = ("games_per_s", "simulations_per_s", "loss/policy", "loss/value")
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run_dir, points = Path(tmp) / "run", steps * len(keys)
        tracker = Tracker(run_dir=run_dir, flush_every_s=3600.0, max_buffered=points + 1)
        print(f"store created in {time.perf_counter() - start:.1f} s ({tracker.tracking_uri})")
        start = time.perf_counter()
        for step in range(steps):
            tracker.log_metrics({k: float(step) for k in keys}, step=step)
        buffering = (time.perf_counter() - start) / points
        start = time.perf_counter()
        tracker.close()
        sending = (time.perf_counter() - start) / points
        buffered = buffering + sending

        client = _client(tracker.tracking_uri)
        run_id = client.create_run(tracker.experiment_id, run_name="single").info.run_id
        start = time.perf_counter()
        for i in range(singles):
            client.log_metric(run_id, keys[i % len(keys)], float(i), step=i // len(keys))
        single = (time.perf_counter() - start) / singles
        client.set_terminated(run_id)
    print(f"{'':<34}{'us/point':>10}{'points':>9}")
    print(f"{'Tracker.log_metrics: buffering':<34}{buffering * 1e6:>10,.1f}{points:>9}")
    print(f"{'Tracker flush: log_batch sending':<34}{sending * 1e6:>10,.1f}{points:>9}")
    print(f"{'Tracker total (buffered)':<34}{buffered * 1e6:>10,.1f}{points:>9}")
    print(f"{'MlflowClient.log_metric (single)':<34}{single * 1e6:>10,.1f}{singles:>9}")
    print(f"buffered is {single / buffered:,.0f}x cheaper per point")


if __name__ == "__main__":
    main()
