"""Does the learner get all there is out of a run's self-play data? Refit it offline.

Takes a finished run's shards (every row, not the learner's 100,000-row window; with several
``--run`` the rows of them all, the first run giving the settings, v0 and the champion), trains ONE
network on them with the run's learner settings plus ``key=value`` overrides (``model.*`` for a
different network, which then starts from its initial weights; otherwise from the run's v0, as
the continuous learner does), and after each cumulative number of passes over the rows
(``--passes``: samples per row) benches the snapshot as the greedy network alone against the
game's rule-based player (Commander), ``--games`` games on fresh deals each played once per
seat, fair share by deal at more than 2 players (``bench/bench_scaling.py``'s statistic). The
run's champion is benched first on the same deals (every snapshot of every arm plays the deals of
a given ``--seed``), and each snapshot's gain over it is the mean of the per-deal differences with
its 95% Student-t interval; the per-deal figures go to ``/tmp/refit-<tag>/deals.json``, so
two arms on one seed can be compared deal by deal. ``--against URI`` benches one more network
on the same deals (an arm of an earlier refit, say) and gives each snapshot's gain over it too.

    python experiments/teacher/refit.py --run /work/runs/4p-long --passes 1 2 4 \
        --games 2400 --seed <fresh> --tag wide model.hidden_size=256
    python experiments/teacher/refit.py --run /work/runs/4p-long /work/runs/4p-wide --passes 1 2 4 \
        --games 2400 --seed <fresh> --tag wide2 --against /tmp/refit-wide/models/refit-p4 \
        model.hidden_size=256
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.bench_champion import _init, _play
from bench.bench_scaling import network_alone
from omega_cluster import wiring
from omega_cluster.eval.rating import AnchorResult
from omega_cluster.eval.stats import mean_ci
from omega_cluster.model.checkpoint import load_checkpoint
from omega_cluster.model.registry import ModelRegistry

CHUNK = 1000  # learner steps between two progress lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, nargs="+", required=True)
    parser.add_argument("--against", type=Path, help="one more network to gain over, paired")
    parser.add_argument("--passes", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--games", type=int, default=2400)
    parser.add_argument("--seed", type=int, required=True, help="fresh: never used to choose")
    parser.add_argument("--tag", default="a")
    parser.add_argument("overrides", nargs="*")
    args = parser.parse_args()
    work = Path(f"/tmp/refit-{args.tag}")
    shutil.rmtree(work, ignore_errors=True)
    keep = ("config.yaml", "registry.json", "pipeline.json", "shards", "models")
    work.mkdir(parents=True)
    run, *others = args.run
    for name in keep:
        src = run / name
        if src.is_dir():
            shutil.copytree(src, work / name, ignore=shutil.ignore_patterns("v[1-9]*"))
        elif src.exists():
            shutil.copy2(src, work / name)
    for other in others:  # shard and manifest names begin with their writing time: none collide
        for part in ("manifest", "shards"):
            shutil.copytree(other / "shards" / part, work / "shards" / part, dirs_exist_ok=True)
    fixed = [f"run.seed={args.seed}", "learner.window_rows=100000000"]
    settings = wiring.load_run_settings(work, [*args.overrides, *fixed])
    v0 = ModelRegistry(work, game=settings.game.name).get(0)
    worker = wiring.learner_worker(settings, run_dir=work, store_uri=str(work / "shards"))
    fresh = any(o.startswith("model.") for o in args.overrides)
    if not fresh:
        worker.learner.model.load_state_dict(
            load_checkpoint(str(work / v0.uri), load_optimizer=False).model.state_dict()
        )
    worker.window.refresh()
    rows, batch = worker.window.rows, settings.learner.batch_size
    params = sum(p.numel() for p in worker.learner.model.parameters())
    start = "initial weights" if fresh else "v0"
    print(f"{args.tag} {' '.join(args.overrides)}: {rows} rows, {params:,} parameters, "
          f"from {start}", flush=True)  # fmt: skip
    config = wiring.gate_service_config(settings)
    assert config.fleet is not None
    table = config.fleet.slices[0]
    fair = table.players > 2
    done = 0
    with ProcessPoolExecutor(2, initializer=_init, initargs=(config,)) as pool:

        def bench(uri: str, name: str) -> AnchorResult:
            # one pseudo-version for every player: the same deals (paired)
            return network_alone(config, table, 1, uri, lambda tasks: list(pool.map(_play, tasks)),
                                 args.games, "heuristic", name)[0]  # fmt: skip

        deals: dict[str, list[float]] = {}  # per-deal scores, for pairing across arms

        def per_deal(result: AnchorResult, name: str) -> tuple[float, ...]:
            got = result.deal_fair_shares if fair else result.deal_scores
            deals[name] = list(got)
            (work / "deals.json").write_text(json.dumps(deals))
            return got

        registry = ModelRegistry(run, game=settings.game.name)
        champion = registry.champion
        assert champion is not None
        name = f"the run's champion v{champion.version}"
        references = {f"v{champion.version}": per_deal(bench(str(run / champion.uri), name),
                                                       f"v{champion.version}")}  # fmt: skip
        if args.against is not None:
            references[str(args.against)] = per_deal(bench(str(args.against), str(args.against)),
                                                     str(args.against))  # fmt: skip
        for passes in sorted(args.passes):
            target = round(passes * rows / batch)
            started = time.perf_counter()
            while done < target:
                n = min(CHUNK, target - done)
                stats = worker.learner.train_steps(worker.window, n)
                done += n
                print(f"  step {done}/{target}: policy {stats.policy_loss:.3f} value "
                      f"{stats.value_loss:.3f} ({time.perf_counter() - started:.0f} s)",
                      flush=True)  # fmt: skip
            uri = str(work / "models" / f"refit-p{passes:g}")
            worker.learner.save(uri, metrics={})
            name = f"{args.tag} {passes:g} passes ({done} steps)"
            mine = per_deal(bench(uri, name), f"{args.tag}-p{passes:g}")
            for other, reference in references.items():
                gain = mean_ci([x - y for x, y in zip(mine, reference, strict=True)])
                print(f"  gain over {other}, paired by deal: {gain.estimate:+.3f} "
                      f"[{gain.low:+.3f}, {gain.high:+.3f}]", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
