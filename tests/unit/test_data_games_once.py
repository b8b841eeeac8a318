"""Each game is stored once: the store's index of game ids (from the manifest entries) refuses a
shard whose games are already stored, at commit (quarantined, one line naming the ids) and at a
run's start (the audit rebuilds the index and quarantines the later of two shards holding a game);
a retried chunk (same writer id) stays idempotent. Real Arrow files in a real store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from test_service_pipeline import _weights, tiny_settings

from omega_cluster.data import (
    DuplicateGamesError,
    ManifestEntry,
    ShardStore,
    ShardWriter,
    StoreTotals,
    audit_store,
    store_totals,
)
from omega_cluster.data.synthetic import synthetic_records
from omega_cluster.train.workers import ChunkReport, chunk_writer_id
from omega_cluster.wiring import selfplay_worker


def _records(ids: list[str], rows_per_game: int = 3, seed: int = 0) -> list:
    records = synthetic_records(len(ids) * rows_per_game, np.random.default_rng(seed),
                                observation_size=4)  # fmt: skip
    return [r.__class__(**{**r.__dict__, "game_id": ids[i // rows_per_game]})
            for i, r in enumerate(records)]  # fmt: skip


def _counts(totals: StoreTotals) -> tuple[int, int, int]:
    """(shards, records, games); the games per table add up to the games."""
    assert sum(totals.tables.values()) == totals.games
    return totals.shards, totals.records, totals.games


def test_entries_list_their_game_ids_and_older_entries_still_parse(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    entry = ShardWriter(store, writer_id="a").write(_records(["g2", "g1"])).entry
    assert entry.game_ids == ("g1", "g2")
    assert ManifestEntry.from_dict(entry.to_dict()) == entry
    older = {k: v for k, v in entry.to_dict().items() if k != "game_ids"}
    assert ManifestEntry.from_dict(older).game_ids is None
    with pytest.raises(ValueError, match="game_ids"):
        ManifestEntry.from_dict({**entry.to_dict(), "game_ids": [1]})
    ((players, params, games),) = entry.tables or ()
    assert games == 2 and players == 2 and isinstance(params, str)
    assert ManifestEntry.from_dict({k: v for k, v in entry.to_dict().items()
                                    if k != "tables"}).tables is None  # fmt: skip
    with pytest.raises(ValueError, match="tables"):
        ManifestEntry.from_dict({**entry.to_dict(), "tables": [[2, "{}"]]})


def test_a_shard_whose_games_are_stored_is_quarantined_at_commit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = ShardStore(tmp_path)
    first = ShardWriter(store, writer_id="chunk00000001").write(_records(["g1", "g2"])).entry
    other = ShardWriter(ShardStore(tmp_path), writer_id="chunk00000002")  # another process
    with pytest.raises(DuplicateGamesError) as err:
        other.write(_records(["g2", "g3"], seed=1))
    assert err.value.games == ("g2",) and err.value.holders == (first.key,)
    assert "\n" not in str(err.value) and "g2" in str(err.value) and first.key in str(err.value)
    assert [e.key for e in ShardStore(tmp_path).entries()] == [first.key]  # not committed
    (note,) = store.quarantined()
    assert note.reason.startswith("duplicate games: 1 game id(s)") and "g2" in note.reason
    refused = err.value.entry
    assert (tmp_path / "quarantine" / Path(refused.shard_path).name).is_file()  # nothing lost
    kept = json.loads((tmp_path / "quarantine" / f"{refused.key}.json.manifest.json").read_text())
    assert kept["game_ids"] == ["g2", "g3"]
    line = next(r.message for r in caplog.records if "duplicate games" in r.message)
    assert "\n" not in line
    assert _counts(store_totals(ShardStore(tmp_path))) == (1, 6, 2)
    # games that are new commit, and the index follows quarantines: a game whose shard left
    # the manifest may be stored again
    ShardWriter(store, writer_id="chunk00000003").write(_records(["g3"], seed=2))
    store.quarantine(store.entries()[0], "test: gone")
    ShardWriter(store, writer_id="chunk00000004").write(_records(["g1"], seed=3))
    assert sorted(store.game_index()) == ["g1", "g3"]


def test_a_duplicate_found_at_the_start_is_quarantined_with_one_line(tmp_path: Path) -> None:
    """A shard copied in under another key (or two writers racing past the commit check)."""
    run, elsewhere = ShardStore(tmp_path / "run"), ShardStore(tmp_path / "elsewhere")
    ShardWriter(run, writer_id="chunk00000001").write(_records(["g1", "g2"]))
    ShardWriter(run, writer_id="chunk00000002").write(_records(["g3"], seed=1))
    copy = ShardWriter(elsewhere, writer_id="chunk00000009").write(_records(["g2", "g4"])).entry
    for relative in (copy.shard_path, f"manifest/{copy.key}.json"):
        shutil.copy(tmp_path / "elsewhere" / relative, tmp_path / "run" / relative)
    resumed = ShardStore(tmp_path / "run")
    assert _counts(store_totals(resumed)) == (3, 15, 4)  # g2 once
    report = audit_store(resumed, grace_s=0.0)
    assert [name for name, _ in report.quarantined] == [copy.key]
    (line,) = report.lines()
    assert f"quarantined {copy.key}: duplicate games" in line and "g2" in line
    assert _counts(store_totals(resumed)) == (2, 9, 3)
    assert audit_store(resumed, grace_s=0.0).clean


def test_older_entries_are_indexed_and_counted_from_their_columns(tmp_path: Path) -> None:
    store = ShardStore(tmp_path)
    entry = ShardWriter(store, writer_id="a").write(_records(["g1", "g2"])).entry
    manifest = tmp_path / "manifest" / f"{entry.key}.json"
    data = json.loads(manifest.read_text())
    del data["game_ids"], data["tables"]
    manifest.write_text(json.dumps(data))
    fresh = ShardStore(tmp_path)
    assert fresh.game_index() == {"g1": entry.key, "g2": entry.key}
    assert store_totals(fresh).tables == {entry.tables[0][:2]: 2}  # type: ignore[index]
    with pytest.raises(DuplicateGamesError, match="g1"):
        ShardWriter(fresh, writer_id="b").write(_records(["g1"], seed=1))


def test_a_retried_chunk_stays_idempotent(tmp_path: Path) -> None:
    """A retry whose write lands after the failed attempt's (same chunk, same games) reports
    that shard instead: one shard, its games counted once; nothing quarantined but the copy."""
    settings = tiny_settings()
    weights = _weights(settings)
    store = str(tmp_path / "shards")
    dying = selfplay_worker(settings, actor=0, store_uri=store)
    retry = selfplay_worker(settings, actor=0, store_uri=store)  # the same actor: same game ids
    looks: list[int] = []
    look = retry.existing

    def late_write(chunk: int) -> ChunkReport | None:  # the attempt's shard lands after 2 looks
        looks.append(chunk)
        return look(chunk) if len(looks) > 2 else None

    retry.existing = late_write  # type: ignore[method-assign]
    first = dying.play_chunk(weights, 4, 3)
    report = retry.play_chunk(weights, 4, 3, retry=True)
    assert looks == [4, 4, 4]  # before playing, before writing, after the refused commit
    assert report.replayed and report.shard == first.shard and report.games == 3
    entries = ShardStore(store).entries()
    assert [e.writer_id for e in entries] == [chunk_writer_id(4)] and entries[0].key == first.shard
    assert len(ShardStore(store).quarantined()) == 1  # the retry's copy, kept with its reason
