"""``omega-cluster shards run=<run dir>``: a run's shards as Parquet files that DuckDB reads.

A run's shards are Arrow IPC files, which DuckDB reads only through a community extension; this
command writes ``<run>/parquet/<key>.parquet``, one per shard of the run's manifest
(:func:`omega_cluster.data.export.export_parquet`: checked as every reader checks them, and
brought up to date by running it again), and prints the DuckDB line that queries them::

    omega-cluster shards run=runs/kuhn-run
    python -c "import duckdb; duckdb.sql(\"SELECT player, count(*) FROM 'runs/kuhn-run/parquet/*.parquet' GROUP BY player\").show()"

The shards are found where the game viewer finds them (``run.shard_store`` of the run's config,
else ``<run>/shards``). Keys in :data:`SHARDS_KEYS`; a directory without a shard store is one
line, exit status 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from omega_cluster.cli.args import Settings, check_writable, key_command

__all__ = ["SHARDS", "SHARDS_KEYS"]

SHARDS_KEYS: dict[str, str] = {
    "run": "the training run's directory; its shards are written to <run>/parquet (required)",
}


def run_shards(args: argparse.Namespace) -> int:
    s = Settings("shards", args.settings, SHARDS_KEYS)
    s.require("run=<dir>")
    run = Path(s.text("run"))
    out = run / "parquet"
    check_writable("run", out)
    from omega_cluster.data.export import export_parquet
    from omega_cluster.play.replay import RunGames

    done = export_parquet(RunGames(run).store, out)
    bad = (
        f"; {done.quarantined} failed their checks and were quarantined" if done.quarantined else ""
    )
    gone = f"; {done.removed} of shards no longer in the manifest removed" if done.removed else ""
    print(f"{out}: {done.files} Parquet files, one per shard ({done.written} new, {done.rows} "
          f"records){gone}{bad}")  # fmt: skip
    print(f"""query with DuckDB: duckdb.sql("SELECT count(*) FROM '{out}/*.parquet'")""")
    return 0


SHARDS = key_command(
    "shards",
    "write a run's shards as Parquet files (one per shard) that DuckDB, polars and pandas read",
    SHARDS_KEYS,
    run_shards,
    usage=("omega-cluster shards run=runs/kuhn_poker-20261203-101500",),
)
