"""Run the speed benchmarks in bench/ (``make bench`` / ``python -m bench [--quick] [name ...]``).

Each ``bench/bench_<topic>.py`` exposes ``main()`` and prints its figures, each as a ratio
against a reference measured in the same run. Benchmarks run one after another on one process so
they do not compete for the cores. The strength benches (:data:`STRENGTH`: a run's champion
against the anchors, training runs; long) run only when named (``python -m bench champion``);
research studies live in ``experiments/``. An expected error (bad input: a
:class:`omega_cluster.errors.UserError`) stops with one line and exit status 2.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import time
from pathlib import Path

from omega_cluster.errors import UserError, one_line

STRENGTH = (
    "bench_baselines",
    "bench_champion",
    "bench_exploitability",
    "bench_fleet",
    "bench_leaf",
    "bench_openspiel_bots",
    "bench_poker_zero",
    "bench_release",
    "bench_scaling",
    "bench_training",
    "bench_tuned",
    "bench_zero",
)  # run when named: long strength measurements


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    flags = [a for a in args if a.startswith("-")]
    wanted = [a for a in args if not a.startswith("-")]
    names = sorted(
        m.name
        for m in pkgutil.iter_modules([str(Path(__file__).parent)])
        if m.name.startswith("bench_")
    )
    if wanted:
        unknown = [w for w in wanted if f"bench_{w}" not in names and w not in names]
        if unknown:
            print(f"unknown benchmark(s) {unknown}; available: {names}", file=sys.stderr)
            return 2
        names = [n for n in names if n in wanted or n.removeprefix("bench_") in wanted]
    else:
        names = [n for n in names if n not in STRENGTH]
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        # main(argv) or main() reading sys.argv: both styles are accepted
        sys.argv = [f"bench.{name}", *flags]
        try:
            if inspect.signature(module.main).parameters:
                module.main(flags)
            else:
                module.main()
        except UserError as err:  # bad input (a run directory, a setting): one line, no traceback
            print(f"bench {name}: error: {one_line(err)}", file=sys.stderr)
            return 2
        print(f"({name}: {time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
