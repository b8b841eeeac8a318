"""A writer whose clock runs ahead: the learner keeps learning, resumed or not, and a run finishes.

One manifest entry whose key sorts after every real key (a node whose clock runs years ahead,
here 2286) used to move the replay position past every entry written after it: the learner then
read nothing new and the run stopped learning. The position is now the set of consumed entry
names, so such an entry is one shard like any other.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
from train_helpers import leduc_learner, leduc_records, leduc_store

from omega_cluster.config import (
    ClusterSettings,
    GameSettings,
    GateSettings,
    LearnerSettings,
    ModelSettings,
    RunSettings,
    SearchSettings,
    Settings,
    TrackingSettings,
    validate,
)
from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.pipeline.driver import LocalBackend, Observer, Pipeline, PipelineState, RunPaths
from omega_cluster.train import Learner
from omega_cluster.train.workers import CandidateReport

FAR_FUTURE_NS = 9_999_999_999_000_000_000


def skewed_writer(store: ShardStore, writer_id: str = "skewed") -> ShardWriter:
    """A writer whose clock runs far ahead: its keys sort after every real key."""
    writer = ShardWriter(store, writer_id=writer_id)
    writer._clock._last_ns = FAR_FUTURE_NS
    return writer


def test_a_resumed_learner_reads_every_shard_written_after_a_far_future_one(
    tmp_path: Path,
) -> None:
    store = leduc_store(tmp_path / "store", shards=1)
    learner = leduc_learner()
    learner.train_steps(learner.window(store), 3)
    skewed = skewed_writer(store).write(list(leduc_records(seed=1))).entry
    learner.train_steps(learner.window(store), 3)  # a fresh window from the position
    saved = learner.window_position
    assert saved is not None and saved.consumed[-1] == skewed.key
    learner.save(tmp_path / "ckpt")
    later = ShardWriter(store, writer_id="later")
    rows = sum(later.write(list(leduc_records(seed=s))).entry.rows for s in (2, 3))
    resumed = Learner.load(tmp_path / "ckpt")
    assert resumed.window_position == saved
    window = resumed.window(store, window_rows=10**6)
    assert window.position.rows_seen == saved.rows_seen
    assert window.refresh() == rows  # both later shards, though their keys sort before
    assert {e.key for e in window.entries} == set(store.entry_names())
    resumed.train_steps(window, 2)
    assert resumed.window_position.rows_seen == saved.rows_seen + rows


class SkewAfterFirstIteration(Observer):
    """Writes one far-future shard (valid records of the run's game) after the first
    iteration, and keeps the learner's rows seen at every candidate call."""

    def __init__(self, store: ShardStore) -> None:
        self.store = store
        self.injected = ""
        self.rows_seen: list[float] = []
        self.gates = 0

    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None:
        self.rows_seen.append(report.metrics["rows_seen"])
        if not self.injected:
            first = self.store.entries()[0]
            table = self.store.read(first)
            ids = pc.binary_join_element_wise("skewed-", table.column("game_id"), "")
            i = table.schema.get_field_index("game_id")
            table = table.set_column(i, table.schema.field(i), ids)
            self.injected = skewed_writer(self.store, "chunk99999999").write(table).entry.key

    def on_gate(self, *args: Any) -> None:
        self.gates += 1


def _settings(iterations: int) -> Settings:
    model = ModelSettings(hidden_size=16, num_layers=1, action_embedding_size=8,
                          policy_hidden_size=8, value_hidden_size=8)  # fmt: skip
    return validate(Settings(
        game=GameSettings("kuhn_poker", {"players": 2}),
        search=SearchSettings(simulations=8, fast_simulations=4, temperature_moves=2),
        model=model,
        learner=LearnerSettings(window_rows=2000, device="cpu", batch_size=16,
                                steps_per_candidate=8, min_rows=25),
        gate=GateSettings(mode="fixed", games_per_slice=8, chunk_games=8,
                          anchors={"random": 1000.0}, anchor_games=4),
        cluster=ClusterSettings(backend="local", games_per_chunk=4, concurrent_games=4),
        tracking=TrackingSettings(enabled=False),
        run=RunSettings(iterations=iterations, games_per_iteration=8, progress=False),
    ))  # fmt: skip


def test_a_run_with_a_far_future_shard_reaches_its_gates_and_reads_every_shard(
    tmp_path: Path,
) -> None:
    iterations = 3
    paths = RunPaths(tmp_path / "run")
    paths.root.mkdir(parents=True)
    store = ShardStore(paths.store_uri)
    observer = SkewAfterFirstIteration(store)
    pipeline = Pipeline(_settings(iterations), paths, LocalBackend, observers=[observer])
    state = pipeline.run()
    assert state.decisions == observer.gates == iterations
    assert observer.injected.startswith("0999999999")
    names = store.entry_names()
    assert names[-1] == observer.injected  # it sorts after every shard written after it
    learner = pipeline.backend.learner
    assert set(learner.window.position.consumed) == set(names)  # every later shard read
    total = sum(e.rows for e in store.entries())
    assert learner.rows_seen == total == observer.rows_seen[-1]
    assert observer.rows_seen == sorted(set(observer.rows_seen))  # grew at every call
    # the counters are the manifest's: the injected shard (new games) counts like the others
    assert len(names) == state.shards and state.shards >= 2 * iterations + 1
    assert dataclasses.asdict(state)["records"] == total
