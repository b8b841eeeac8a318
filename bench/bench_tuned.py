"""A tuned Commander against the default one: the preset ``omega-cluster tune`` wrote, on a
registered cohort.

``python -m bench.bench_tuned --preset tuned_4p --cohort mt4p-tune-3000 [--save]``: arm A is
``commander:weights=<preset>`` at the focus seat, arm B the default Commander in the same seat,
default Commanders at every other seat in both; every deal is played with each arm, the rest
fixed, and the paired contrast A - B of the win share (and the fair share, ``N`` × win share) is
printed with its 95% interval. ``--save`` records it in ``docs/results/bench_tuned.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from bench.results import Figure, record
from omega_cluster.errors import UserError, one_line
from omega_cluster.eval.cohorts import load_cohort, run_cohort
from omega_cluster.games.mexican_train.officers.weights import PRESETS_DIR

COMMAND = "python -m bench.bench_tuned"


def contrast(preset: str, cohort_name: str, seeds: int | None) -> Figure:
    cohort = load_cohort(cohort_name)
    a, b = f"commander:weights={preset}", "commander"
    path = PRESETS_DIR / f"{preset}.json"
    if not path.is_file():
        raise UserError(f"no preset {preset!r} in {PRESETS_DIR}")
    provenance = json.loads(path.read_text(encoding="utf-8"))["provenance"]
    print(f"{a} vs {b} on {cohort.name}; the preset: {provenance['command']}")
    result = run_cohort(cohort, a, b, seeds=seeds, progress=True)
    n = cohort.num_players
    win = result.contrasts["win_share"]
    t = win.t_interval
    fair = f"fair share {n * win.mean:+.3f} [{n * t.low:+.3f}, {n * t.high:+.3f}]"
    print(f"A - B win share {win}; {fair}; {result.games} games, {result.elapsed_s:.0f} s")
    return Figure(
        name=f"CMA-ES tuned Commander ({preset}) vs default, {cohort.name} (Mexican Train {n}p)",
        figure=f"win share {win.mean:+.3f} [{t.low:+.3f}, {t.high:+.3f}]; {fair}",
        reference=f"default Commander in the same seat; tuned by `{provenance['command']}`",
        ratio="interval excludes 0 (above)" if t.low > 0 else "interval does not exclude 0",
        command=f"{COMMAND} --preset {preset} --cohort {cohort_name}",
        table="strength",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", required=True, help="a Commander preset (officers/presets)")
    parser.add_argument("--cohort", required=True, help="a registered cohort")
    parser.add_argument("--seeds", type=int, default=None, help="the cohort's first N seeds only")
    parser.add_argument("--save", action="store_true", help="record it in docs/results/")
    args = parser.parse_args(argv)
    try:
        figure = contrast(args.preset, args.cohort, args.seeds)
    except (UserError, ValueError) as err:
        print(f"bench_tuned: error: {one_line(err)}", file=sys.stderr)
        return 2
    record("bench_tuned", [figure], quick=not args.save or args.seeds is not None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
