"""``omega-cluster bench a=commander b=lieutenant cohort=mt4p-200``: a paired contrast of two
players on a registered cohort (:func:`omega_cluster.eval.cohorts.run_cohort`).

Prints the contrast table with intervals and writes ``contrast.png``, ``slices.png`` and
``report.md`` (:func:`omega_cluster.eval.report.write_bench_report`); keys in :data:`BENCH_KEYS`.
Torch's intra-op threads are pinned (``threads=``, default 1) as the arena pins them.
"""

from __future__ import annotations

import argparse

from omega_cluster.cli.args import Settings, UsageError, check_writable, integer, key_command, slug
from omega_cluster.eval.cohorts import load_cohort, run_cohort
from omega_cluster.eval.matches import BenchError
from omega_cluster.eval.report import contrast_table, write_bench_report
from omega_cluster.eval.table import wide_console
from omega_cluster.model.threads import pin_threads

__all__ = ["BENCH", "BENCH_KEYS"]

DEFAULT_OUT = "outputs/bench"  # the default report goes to a folder of its own in here
EXAMPLE = "omega-cluster bench a=commander b=lieutenant cohort=mt4p-200"

BENCH_KEYS: dict[str, str] = {
    "a": "player spec of arm A, the candidate (e.g. commander)",
    "b": "player spec of arm B, the reference (e.g. lieutenant)",
    "cohort": "registered cohort name (bench/cohorts/<name>.yaml) or path to a cohort file",
    "out": "directory for contrast.png, slices.png, report.md (default outputs/bench/<cohort>-<a>-vs-<b>)",
    "seeds": "play only the cohort's first N seeds (default: all)",
    "rotations": "focus seats to play, e.g. 0,2 (default: the cohort's)",
    "level": "confidence level of the intervals (default 0.95)",
    "bootstrap": "bootstrap replicates over seeds (default 2000; 0: none)",
    "rng": "seed of the bootstrap resampling (default 0)",
    "progress": "show a progress bar on stderr (default true)",
    "quiet": "no progress bar (quiet=true is progress=false)",
    "threads": "torch intra-op threads of this process (default 1, as the arena's)",
}


def run_bench(args: argparse.Namespace) -> int:
    s = Settings("bench", args.settings, BENCH_KEYS)
    s.require("a=<player>", "b=<player>", "cohort=<name>", hint=f"e.g. {EXAMPLE}")
    rotations = None
    if "rotations" in s:
        rotations = [integer("rotations", r, minimum=0) for r in s.text("rotations").split(",")]
    pin_threads(s.integer("threads", 1, minimum=1))
    # before the match: a report that cannot be written would lose it
    check_writable("out", s.text("out", DEFAULT_OUT))
    try:
        cohort = load_cohort(s.text("cohort"))
        result = run_cohort(
            cohort,
            s.text("a"),
            s.text("b"),
            seeds=s.integer("seeds", minimum=1),
            rotations=rotations,
            level=s.number("level", 0.95, low=0.0, high=1.0),
            bootstrap=s.integer("bootstrap", 2000, minimum=0),
            rng_seed=s.integer("rng", 0, minimum=0),
            progress=s.progress(),
        )
    except BenchError as err:  # cohort errors name the registered cohorts themselves
        raise UsageError(str(err)) from None
    console = wide_console()
    console.print(contrast_table(result))  # first: the figures are shown even if writing fails
    out = s.text("out", f"{DEFAULT_OUT}/{cohort.name}-{slug(result.a)}-vs-{slug(result.b)}")
    try:
        files = write_bench_report(result, out)
    except OSError as err:
        raise UsageError(f"out={out!r}: cannot write the report: {err.strerror or err}") from err
    console.print("wrote " + ", ".join(str(p) for p in files.all))
    return 0


BENCH = key_command(
    "bench",
    "paired contrast of two players on a registered cohort: table with intervals, plots",
    BENCH_KEYS,
    run_bench,
    usage=(EXAMPLE,),
)
