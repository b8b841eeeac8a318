"""``omega-cluster shards run=<dir>`` (omega_cluster/cli/shards.py over data/export.py): a run's
real Arrow shards written as Parquet, read by real DuckDB with the line the command prints and the
README documents; kept up to date with the manifest (new shards added, quarantined ones removed,
a corrupt one quarantined and never written)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from replay_helpers import make_run, play_records

from omega_cluster.cli import main
from omega_cluster.data import ShardStore, ShardWriter, table_to_records


def _query(printed: str) -> str:
    """The SQL of the ``duckdb.sql("...")`` line the command printed."""
    (line,) = [p for p in printed.splitlines() if p.startswith("query with DuckDB: ")]
    assert line.startswith('query with DuckDB: duckdb.sql("') and line.endswith('")'), line
    return line.removeprefix('query with DuckDB: duckdb.sql("')[:-2]


def test_duckdb_reads_a_runs_shards_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, games=5)  # real games of Kuhn poker, two shards
    store = ShardStore(run / "shards")
    records = [r for e in store.entries() for r in table_to_records(store.read(e))]
    assert main(["shards", f"run={run}"]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert f"{run / 'parquet'}: 2 Parquet files, one per shard (2 new, {len(records)} records)" in (
        printed
    )
    assert duckdb.sql(_query(printed)).fetchall() == [(len(records),)]
    # the README's line: per seat, the decisions and the mean return of the seat that decided
    rows = duckdb.sql(
        f"SELECT player, count(*) AS n, avg(returns[player + 1]) AS r "
        f"FROM '{run}/parquet/*.parquet' GROUP BY player ORDER BY player"
    ).fetchall()
    assert [p for p, _, _ in rows] == [0, 1]
    for player, n, mean in rows:
        mine = [r for r in records if r.player == player]
        assert n == len(mine)
        assert mean == pytest.approx(sum(float(r.returns[player]) for r in mine) / n, rel=1e-6)
    # the columns keep their types: lists of actions, the policy target, the game's id
    kinds = duckdb.sql(
        f"SELECT count(DISTINCT game_id), max(len(legal_actions)) FROM '{run}/parquet/*.parquet'"
    ).fetchall()
    assert kinds == [(5, 2)]


def test_running_it_again_follows_the_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, games=3)
    parquet = run / "parquet"
    assert main(["shards", f"run={run}"]) == 0
    first = sorted(p.name for p in parquet.iterdir())
    assert len(first) == 2 and all(n.endswith(".parquet") for n in first)
    store = ShardStore(run / "shards")
    writer = ShardWriter(store, writer_id="later")
    new = writer.write(play_records("kuhn_poker", {"players": 2}, 900, "kuhn-late")).entry
    gone = store.entries()[0]
    store.quarantine(gone, "removed by the test")
    capsys.readouterr()
    assert main(["shards", f"run={run}"]) == 0
    out = capsys.readouterr().out
    assert "2 Parquet files, one per shard (1 new," in out and "1 of shards no longer" in out
    names = sorted(p.name for p in parquet.iterdir())
    assert f"{new.key}.parquet" in names and f"{gone.key}.parquet" not in names
    ids = duckdb.sql(f"SELECT DISTINCT game_id FROM '{parquet}/*.parquet'").fetchall()
    assert ("kuhn-late",) in ids


def test_a_corrupt_shard_is_quarantined_not_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = make_run(tmp_path, games=3)
    store = ShardStore(run / "shards")
    bad = store.entries()[1]
    shard = Path(store.shard_file(bad))
    shard.write_bytes(shard.read_bytes()[:-40])  # truncated
    assert main(["shards", f"run={run}"]) == 0
    out = capsys.readouterr().out
    assert "1 Parquet files, one per shard (1 new," in out
    assert "1 failed their checks and were quarantined" in out
    assert not (run / "parquet" / f"{bad.key}.parquet").exists()
    reason = json.loads((run / "shards" / "quarantine" / f"{bad.key}.reason.json").read_text())
    assert reason


def test_a_directory_without_shards_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["shards", f"run={tmp_path}"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "no shard store" in line and str(tmp_path) in line
    assert main(["shards"]) == 2
    assert "run=<dir>" in capsys.readouterr().err
