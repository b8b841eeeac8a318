"""The pipeline driver in one process (omega_cluster.pipeline.driver with LocalBackend).

Tiny runs of Kuhn and Leduc poker (8 simulations, a 16-unit network, 8 bench games) exercise
what the Ray service relies on without Ray: the sync loop reaches ``run.iterations`` gate
decisions; every chunk's shard is in the store exactly once and reads back through the data layer
(``ShardStore.entries`` / ``read`` / ``table_to_records``) with records that replay; the champion
never regresses (every promotion won its gate, one champion at a time, each candidate benched
against the champion of its day); ``pipeline.json`` and ``registry.json`` persist, and a second
Pipeline on the same directory continues the run (decisions, chunk indices, versions keep
counting; no shard row twice); a run directory of another game is refused; a retried chunk finds
its shard instead of writing another; async mode completes; the learner waits while the window
is short of ``min_rows`` or KataGo's samples-per-row cap is spent.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from safetensors.torch import load as load_safetensors

from omega_cluster import wiring
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
from omega_cluster.data import ShardStore, table_to_records
from omega_cluster.eval.anchors import AnchorReport, measure_anchors
from omega_cluster.eval.gatekeeper import GateOutcome
from omega_cluster.eval.stats import elo_from_score
from omega_cluster.model.registry import ModelRegistry, RegistryError
from omega_cluster.pipeline.driver import LocalBackend, Observer, Pipeline, PipelineState, RunPaths
from omega_cluster.train.workers import (
    CandidateReport,
    ChunkReport,
    LearnerWorker,
    Weights,
    chunk_writer_id,
)
from omega_cluster.wiring import (
    build_encoder,
    build_game,
    build_model,
    gate_service,
    learner_worker,
    selfplay_worker,
)

ITERATIONS = 3
# Kuhn poker has 2 or 3 decisions per game: one iteration of 8 games writes 16-24 rows, so with
# min_rows 25 the learner must wait after the first iteration and train after the second.
MIN_ROWS = 25


def tiny_settings(
    game: str = "kuhn_poker", *, mode: str = "sync", iterations: int = ITERATIONS, **learner: Any
) -> Settings:
    """A run that takes seconds: small search, network, batches and bench; no Ray, no MLflow."""
    knobs = {"batch_size": 16, "steps_per_candidate": 8, "min_rows": MIN_ROWS}
    model = ModelSettings(hidden_size=16, num_layers=1, action_embedding_size=8,
                          policy_hidden_size=8, value_hidden_size=8)  # fmt: skip
    settings = Settings(
        game=GameSettings(game, {"players": 2}),
        search=SearchSettings(simulations=8, fast_simulations=4, temperature_moves=2),
        model=model,
        learner=LearnerSettings(window_rows=2000, device="cpu", **{**knobs, **learner}),
        gate=GateSettings(
            mode="fixed",
            games_per_slice=8,
            chunk_games=8,
            anchors={"random": 1000.0},
            anchor_games=4,
            bench_simulations=8,
        ),
        cluster=ClusterSettings(backend="local", games_per_chunk=4, concurrent_games=4, mode=mode),
        tracking=TrackingSettings(enabled=False),
        run=RunSettings(iterations=iterations, games_per_iteration=8, progress=False),
    )
    return validate(settings)


class Recorder(Observer):
    """Keeps every event of a run."""

    def __init__(self) -> None:
        self.chunks: list[ChunkReport] = []
        self.candidates: list[CandidateReport] = []
        self.gates: list[tuple[GateOutcome, dict[str, Any]]] = []
        self.champions: list[int] = []
        self.anchors: list[AnchorReport] = []
        self.stopped: list[str] = []

    def on_chunk(self, report: ChunkReport, state: PipelineState) -> None:
        self.chunks.append(report)

    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None:
        self.candidates.append(report)

    def on_gate(self, outcome: GateOutcome, row: dict[str, Any], state: PipelineState) -> None:
        self.gates.append((outcome, row))

    def on_champion(self, version: int, uri: str, state: PipelineState) -> None:
        self.champions.append(version)

    def on_anchors(self, report: AnchorReport, state: PipelineState) -> None:
        self.anchors.append(report)

    def on_stop(self, state: PipelineState, reason: str) -> None:
        self.stopped.append(reason)


@dataclasses.dataclass
class Run:
    root: Path
    settings: Settings
    pipeline: Pipeline
    state: PipelineState
    events: Recorder


def run_pipeline(root: Path, settings: Settings) -> Run:
    events = Recorder()
    pipeline = Pipeline(settings, RunPaths(root), LocalBackend, observers=[events])
    state = pipeline.run()
    return Run(root, settings, pipeline, state, events)


@pytest.fixture(scope="module")
def sync_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return run_pipeline(tmp_path_factory.mktemp("sync") / "run", tiny_settings())


def _store(root: Path) -> ShardStore:
    return ShardStore(RunPaths(root).store_uri)


def check_shards(run: Run) -> list[str]:
    """Every chunk's shard exactly once, read back whole through the data layer; the writer ids."""
    store = _store(run.root)
    entries = store.entries()
    writers = [e.writer_id for e in entries]
    assert len(writers) == len(set(writers)), Counter(writers).most_common(3)
    by_writer = {e.writer_id: e for e in entries}
    game = build_game(run.settings)
    for report in run.events.chunks:
        entry = by_writer[chunk_writer_id(report.chunk)]
        assert report.shard == entry.key and report.records == entry.rows > 0
        records = table_to_records(store.read(entry))
        assert len(records) == entry.rows
        assert {r.champion_version for r in records} == {report.version}
        assert {r.game for r in records} == {game.spec.name}
        assert len({r.game_id for r in records}) == report.games
        first = records[0]  # a record's (seed, history) rebuilds its position
        state = game.replay(first.game_seed, first.history)
        assert first.player in state.current_players
        assert first.action in state.legal_actions(first.player)
    assert sum(e.rows for e in entries) == run.state.records
    assert store.quarantined() == []
    return writers


def test_sync_run_reaches_the_decisions_and_writes_each_chunk_once(sync_run: Run) -> None:
    st, ev = sync_run.state, sync_run.events
    assert st.decisions == len(ev.gates) == ITERATIONS
    assert ev.stopped == [f"{ITERATIONS} gate decisions"]
    # the first iteration's 16-24 rows are short of min_rows: the learner waited once
    waiting = [c for c in ev.candidates if c.version is None]
    assert len(waiting) == 1 and f"needs {MIN_ROWS}" in waiting[0].waiting
    assert st.iteration == ITERATIONS + 1
    # 8 games per iteration in chunks of 4, indices 0, 1, 2, ... in order
    assert [c.chunk for c in ev.chunks] == list(range(st.next_chunk))
    assert st.next_chunk == 2 * st.iteration
    assert all(c.games == 4 and not c.replayed for c in ev.chunks)
    assert st.games == 8 * st.iteration and st.shards == st.next_chunk
    writers = check_shards(sync_run)
    assert sorted(writers) == [chunk_writer_id(i) for i in range(st.next_chunk)]


def test_the_champion_never_regresses(sync_run: Run) -> None:
    registry = sync_run.pipeline.registry
    assert sum(v.status == "champion" for v in registry.versions) == 1
    assert sync_run.state.promotions == len(sync_run.events.champions) >= 1
    champion = 0
    for outcome, row in sync_run.events.gates:
        assert outcome.champion == champion  # benched against the champion of its day
        assert registry.get(outcome.candidate).parent == champion  # and warm-started from it
        assert outcome.games == 8
        if outcome.promoted:
            assert outcome.score > 0.5 and row["score"] > 0.5
            assert registry.get(outcome.candidate).status in ("champion", "retired")
            champion = outcome.candidate
        else:
            assert registry.get(outcome.candidate).status == "rejected"
    assert registry.champion is not None and registry.champion.version == champion
    assert all(v.status != "candidate" for v in registry.versions)  # every candidate decided
    promoted = [r for r in sync_run.state.elo_log if r["promoted"]]
    assert promoted[0]["verdict"] == "initial" and promoted[-1]["version"] == champion
    assert all(r["score"] > 0.5 for r in promoted[1:])


def test_pipeline_and_registry_state_persist(sync_run: Run) -> None:
    root, state = sync_run.root, sync_run.state
    game = build_game(sync_run.settings).spec.name
    assert PipelineState.load(RunPaths(root).state, game=game) == state
    saved = json.loads((root / "pipeline.json").read_text())
    assert (saved["decisions"], saved["next_chunk"]) == (state.decisions, state.next_chunk)
    again = ModelRegistry(root, game=game)
    assert again.snapshot() == sync_run.pipeline.registry.snapshot()
    for version in again.versions:
        assert (Path(version.uri) / "metadata.json").is_file(), version
    assert (root / LearnerWorker.STATE / "counters.json").is_file()


def test_a_second_pipeline_continues_the_run(sync_run: Run, tmp_path: Path) -> None:
    root = tmp_path / "run"
    shutil.copytree(sync_run.root, root)
    first = sync_run.state
    more = dataclasses.replace(sync_run.settings.run, iterations=ITERATIONS + 2)
    second = run_pipeline(root, dataclasses.replace(sync_run.settings, run=more))
    st, ev = second.state, second.events
    assert st.decisions == ITERATIONS + 2 and len(ev.gates) == 2  # only the two new decisions
    assert [c.chunk for c in ev.chunks] == list(range(first.next_chunk, st.next_chunk))
    assert st.games == first.games + sum(c.games for c in ev.chunks)
    assert st.elo_log[: len(first.elo_log)] == first.elo_log
    old = {v.version for v in sync_run.pipeline.registry.versions}
    assert all(g.candidate not in old and g.candidate > max(old) for g, _ in ev.gates)
    # the learner resumed from its checkpoint: its step count went on
    trained = [c for c in ev.candidates if c.version is not None]
    first_steps = max(int(c.metrics["learner_step"]) for c in sync_run.events.candidates
                      if c.version is not None)  # fmt: skip
    assert int(trained[0].metrics["learner_step"]) > first_steps
    # both runs' chunks: each exactly once, every row counted once
    both = Run(root, second.settings, second.pipeline, st, Recorder())
    both.events.chunks = [*sync_run.events.chunks, *ev.chunks]
    writers = check_shards(both)
    assert sorted(writers) == [chunk_writer_id(i) for i in range(st.next_chunk)]


def test_a_run_directory_of_another_game_is_refused(sync_run: Run, tmp_path: Path) -> None:
    before = (sync_run.root / "pipeline.json").read_text()
    with pytest.raises(ValueError, match=r"is a run of game 'kuhn_poker', not 'leduc_poker'"):
        Pipeline(tiny_settings("leduc_poker"), RunPaths(sync_run.root), LocalBackend)
    assert (sync_run.root / "pipeline.json").read_text() == before
    # a directory holding only another game's registry is refused too
    shutil.copy(sync_run.root / ModelRegistry.FILE, tmp_path / ModelRegistry.FILE)
    with pytest.raises(RegistryError, match=r"belongs to a run of game 'kuhn_poker'"):
        Pipeline(tiny_settings("leduc_poker"), RunPaths(tmp_path), LocalBackend)


def _weights(settings: Settings) -> Weights:
    game = build_game(settings)
    model = build_model(settings, game, build_encoder(settings, game))
    return Weights.of(model, version=0, uri="memory")


def test_a_retried_chunk_finds_its_shard_instead_of_playing_again(tmp_path: Path) -> None:
    settings = tiny_settings()
    weights = _weights(settings)
    worker = selfplay_worker(settings, actor=0, store_uri=str(tmp_path / "a"))
    played = worker.play_chunk(weights, 5, 3)
    assert not played.replayed and played.games == 3 and played.records > 0
    again = worker.play_chunk(weights, 5, 3, retry=True)
    assert again.replayed and again.games == 3  # the lost report's games, counted once
    assert again.decisions == 0  # nothing was played
    assert (again.chunk, again.shard, again.records, again.version) == (
        5, played.shard, played.records, 0,
    )  # fmt: skip
    assert len(worker.store.entries()) == 1
    fresh = worker.play_chunk(weights, 6, 3, retry=True)  # retry of a chunk never written: plays
    assert not fresh.replayed and fresh.games == 3
    assert [e.writer_id for e in worker.store.entries()] == [chunk_writer_id(5), chunk_writer_id(6)]
    # a chunk's games derive from the run seed and the chunk index, not from the actor
    other = selfplay_worker(settings, actor=1, store_uri=str(tmp_path / "b"))
    twin = other.play_chunk(weights, 5, 3)
    a = table_to_records(worker.store.read(worker.store.entries()[0]))
    b = table_to_records(other.store.read(other.store.entries()[0]))
    assert [(r.game_seed, r.history, r.action) for r in a] == [
        (r.game_seed, r.history, r.action) for r in b
    ]
    assert twin.records == played.records


def test_a_retry_keeps_the_shard_the_failed_attempt_wrote_while_it_played(tmp_path: Path) -> None:
    """The dying attempt's write can land after the retry looked for it: the retry looks again
    before writing and reports that shard (its games counted once), so a chunk never has two
    shards; a shard of the chunk that does not read back is quarantined and the chunk replayed."""
    settings = tiny_settings()
    weights = _weights(settings)
    store = str(tmp_path / "shards")
    dying = selfplay_worker(settings, actor=0, store_uri=store)
    retry = selfplay_worker(settings, actor=1, store_uri=store)
    looks: list[int] = []
    look = retry.existing

    def late_write_then_look(chunk: int) -> ChunkReport | None:
        looks.append(chunk)
        if len(looks) == 1:  # the failed attempt's shard lands just after the first look
            dying.play_chunk(weights, chunk, 3)
            return None
        return look(chunk)

    retry.existing = late_write_then_look  # type: ignore[method-assign]
    report = retry.play_chunk(weights, 9, 3, retry=True)
    assert looks == [9, 9] and report.replayed and report.games == 3
    entries = retry.store.entries()
    assert [e.writer_id for e in entries] == [chunk_writer_id(9)] and report.shard == entries[0].key
    shard = Path(store) / entries[0].shard_path
    shard.write_bytes(shard.read_bytes()[:100])  # torn
    again = selfplay_worker(settings, actor=1, store_uri=store).play_chunk(
        weights, 9, 3, retry=True
    )
    assert not again.replayed and again.games == 3
    assert [n.name for n in retry.store.quarantined()] == [entries[0].key]
    assert [e.writer_id for e in retry.store.entries()] == [chunk_writer_id(9)]


@pytest.mark.parametrize("rows_ahead", [20_000, 10])
def test_async_mode_completes(tmp_path: Path, rows_ahead: int) -> None:
    """Also when back-pressure (rows ahead of the learner) is tighter than min_rows: a learner
    that waits for rows has read them, so self-play goes on (it once stopped with no decision)."""
    settings = tiny_settings("leduc_poker", mode="async", iterations=2)
    cluster = dataclasses.replace(settings.cluster, max_rows_ahead=rows_ahead)
    run = run_pipeline(tmp_path / "run", dataclasses.replace(settings, cluster=cluster))
    st, ev = run.state, run.events
    assert ev.stopped == ["2 gate decisions"]
    assert st.decisions == len(ev.gates) == 2
    assert sorted(c.chunk for c in ev.chunks) == list(range(st.next_chunk))
    champions = {0, *ev.champions}
    assert all(c.version in champions for c in ev.chunks)
    check_shards(run)
    registry = ModelRegistry(run.root, game="leduc_poker")
    assert sum(v.status == "champion" for v in registry.versions) == 1
    assert all(v.status != "candidate" for v in registry.versions)


def test_the_learner_trains_one_network_on_whatever_the_gate_decided(tmp_path: Path) -> None:
    """Candidate 2 continues candidate 1's network (weights and optimizer), not the champion's;
    a restarted learner continues it too."""
    settings = tiny_settings("leduc_poker", min_rows=8, max_samples_per_row=0.0,
                             steps_per_candidate=20)  # fmt: skip
    store = str(tmp_path / "shards")
    champion = _weights(settings)
    selfplay_worker(settings, actor=0, store_uri=store).play_chunk(champion, 0, 16)
    learner = learner_worker(settings, run_dir=tmp_path, store_uri=store)
    first = learner.train_candidate(champion, 1)
    v1 = {k: v.clone() for k, v in learner.learner.model.state_dict().items()}
    # the gate rejected v1: the driver hands the learner the same champion (v0) again; another
    # network stands in for it here, so where the learner started from can be told apart
    other = dataclasses.replace(settings, model=dataclasses.replace(settings.model, init_seed=9))
    stranger = _weights(other)
    second = learner.train_candidate(stranger, 2)
    assert first.version == 1 and second.version == 2
    assert learner.learner.step == first.steps + second.steps
    # the first stint's fresh rows were scored before the network trained on them; the second
    # stint read no new row, so it has no held-out figure
    assert {"heldout/policy_loss", "heldout/value_loss"} <= set(first.metrics)
    assert first.metrics["heldout/value_loss"] > 0
    assert not any(k.startswith("heldout/") for k in second.metrics)

    def distance(a: dict[str, Any], b: dict[str, Any]) -> float:
        return sum(float((a[k].float() - b[k].float()).norm()) for k in a)

    v2 = learner.learner.model.state_dict()
    stranger_state = load_safetensors(stranger.payload)
    assert distance(v2, v1) < 0.5 * distance(v2, stranger_state)
    restarted = learner_worker(settings, run_dir=tmp_path, store_uri=store)
    assert restarted.learner.step == learner.learner.step
    assert distance(restarted.learner.model.state_dict(), v2) == 0.0


def test_the_learner_waits_for_rows_and_for_the_samples_per_row_cap(tmp_path: Path) -> None:
    settings = tiny_settings("leduc_poker", min_rows=8, max_samples_per_row=1.0,
                             steps_per_candidate=100)  # fmt: skip
    store = str(tmp_path / "shards")
    weights = _weights(settings)
    learner = learner_worker(settings, run_dir=tmp_path, store_uri=store)
    empty = learner.train_candidate(weights, 1)
    assert empty.version is None and "holds 0 rows, needs 8" in empty.waiting
    assert empty.metrics["rows_seen"] == 0
    worker = selfplay_worker(settings, actor=0, store_uri=store)
    rows = worker.play_chunk(weights, 0, 8).records
    assert rows >= 16  # one batch at least (8 Leduc hands: forced moves are not recorded)
    first = learner.train_candidate(weights, 1)
    # cap 1 sample per row: floor(rows / batch 16) steps, not steps_per_candidate
    assert first.version == 1 and first.steps == rows // 16
    assert (Path(first.uri) / "metadata.json").is_file()
    assert learner.allowed_steps() == 0
    spent = learner.train_candidate(weights, 2)
    assert spent.version is None and "the cap is 1.0/row" in spent.waiting
    assert spent.metrics["rows_seen"] == rows  # what the driver's back-pressure counts as read
    worker.play_chunk(weights, 1, 8)  # new rows renew the budget
    assert learner.train_candidate(weights, 2).version == 2
    assert learner.samples <= learner.rows_seen
    off = learner_worker(tiny_settings("leduc_poker", min_rows=8, max_samples_per_row=0.0,
                                      steps_per_candidate=100),
                        run_dir=tmp_path / "off", store_uri=store)  # fmt: skip
    off.window.refresh()
    assert off.allowed_steps() == 100  # cap 0: off


def test_the_network_alone_plays_its_own_number_of_anchor_games(sync_run: Run) -> None:
    """gate.anchor_network_games: the network alone (one forward pass a move) plays more anchor
    games than the search player, for a narrower headline interval; 0 search games: the search
    player is not rated."""
    champion = sync_run.pipeline.registry.champion
    assert champion is not None
    settings = dataclasses.replace(
        sync_run.settings,
        gate=dataclasses.replace(sync_run.settings.gate, anchor_games=2, anchor_network_games=6),
    )
    service = gate_service(settings)
    report = measure_anchors(service.config, champion.version, champion.uri, service.play)
    played = {r.kind: r.wins + r.draws + r.losses for r in report.results}
    assert played == {"network": 6, "search": 2}
    assert {r.kind: r.fit.games for r in report.ratings} == played
    narrow = next(r.fit for r in report.ratings if r.kind == "network")
    wide = next(r.fit for r in report.ratings if r.kind == "search")
    assert narrow.high - narrow.low < wide.high - wide.low
    off = dataclasses.replace(settings.gate, anchor_games=0)
    service = gate_service(dataclasses.replace(settings, gate=off))
    report = measure_anchors(service.config, champion.version, champion.uri, service.play)
    assert [r.kind for r in report.ratings] == ["network"]


def test_the_anchor_bench_rates_both_players_of_the_champion(sync_run: Run) -> None:
    """The champion plays the anchor as the network alone and as the search, on the same deals,
    every deal once per seat; a deal's score is the mean over those games, and each player
    kind's anchored rating is the MLE over its games (one anchor: anchor + Elo of the score)."""
    champion = sync_run.pipeline.registry.champion
    assert champion is not None
    service = gate_service(sync_run.settings)
    report = measure_anchors(service.config, champion.version, champion.uri, service.play,
                             games=40)  # fmt: skip
    table = "players=2,objective=" + build_game(sync_run.settings).spec.objective
    assert [(r.kind, r.table, r.anchor) for r in report.results] == [
        ("network", table, "random"), ("search", table, "random")]  # fmt: skip
    for result, rating in zip(report.results, report.ratings, strict=True):
        games = result.wins + result.draws + result.losses
        assert games == 40 and len(result.deal_scores) == 20  # 2 seats per deal
        assert all(s in (0.0, 0.25, 0.5, 0.75, 1.0) for s in result.deal_scores)
        assert sum(result.deal_scores) * 2 == pytest.approx(result.wins + 0.5 * result.draws)
        ci = result.paired_interval()
        assert ci.n == 20 and ci.low < ci.estimate < ci.high
        assert 0.0 <= result.fair_share <= 2.0
        assert (rating.version, rating.kind, rating.fit.games) == (
            champion.version,
            result.kind,
            40,
        )
        assert rating.fit.rating == pytest.approx(1000.0 + elo_from_score(result.score), abs=0.01)
        assert rating.fit.low < rating.fit.rating < rating.fit.high
    # the same games again (seeds derive from the run seed, the version, the table, the anchor)
    again = measure_anchors(service.config, champion.version, champion.uri, service.play,
                            games=40)  # fmt: skip
    assert again == report
    configured = service.anchors(champion.version, champion.uri)  # gate.anchor_games=4 each
    assert [r.wins + r.draws + r.losses for r in configured.results] == [4, 4]


def test_the_run_rates_its_first_champion_and_every_promoted_one(sync_run: Run) -> None:
    """Rows ``rating: anchored`` in the Elo log: v0 before training, then each promoted
    champion, one per player kind; the per-table rows beside them; observers got each report."""
    rated = sync_run.state.ratings
    assert all(r["rating"] == "anchored" for r in rated)
    promoted = [0, *sync_run.events.champions]
    assert [(r["version"], r["player"]) for r in rated] == [
        (v, kind) for v in promoted for kind in ("network", "search")]  # fmt: skip
    assert all(r["low"] <= r["elo"] <= r["high"] and r["games"] == 4 for r in rated)
    assert [r.version for r in sync_run.events.anchors] == promoted
    slices = sync_run.state.anchor_slices
    assert [(s["version"], s["player"], s["anchor"]) for s in slices] == [
        (v, kind, "random") for v in promoted for kind in ("network", "search")]  # fmt: skip


def _run_copy(sync_run: Run, tmp_path: Path, **gate: Any) -> Path:
    """The run directory, copied, with its resolved config (``gate`` fields overridden)."""
    from omega_cluster.config import to_yaml

    root = tmp_path / "run"
    shutil.copytree(sync_run.root, root)
    settings = dataclasses.replace(
        sync_run.settings, gate=dataclasses.replace(sync_run.settings.gate, **gate)
    )
    (root / "config.yaml").write_text(to_yaml(settings))
    return root


def test_a_runs_champion_sits_at_an_arena_table(sync_run: Run, tmp_path: Path) -> None:
    """``champion:<run>[:<simulations>]`` builds the run's champion as its gate plays it: the
    greedy network for gate.player=network, the run's search with the checkpoint's network for
    gate.player=search (at the bench budget, or the spec's); it plays a real match."""
    from omega_cluster.eval.arena import play_match
    from omega_cluster.players.registry import make_player
    from omega_cluster.players.search import SearchPlayer

    game = build_game(sync_run.settings)
    champion = sync_run.pipeline.registry.champion
    assert champion is not None
    greedy = make_player(f"champion:{_run_copy(sync_run, tmp_path / 'n')}", game)
    assert greedy.name == f"champion:run:v{champion.version}"
    assert not isinstance(greedy, SearchPlayer)

    root = _run_copy(sync_run, tmp_path / "s", player="search", bench_simulations=6)
    searcher = make_player(f"champion:{root}:12", game)
    assert isinstance(searcher, SearchPlayer) and searcher.options["simulations"] == 12
    assert searcher.name == f"champion:run:v{champion.version}:12"
    at_bench = make_player(f"champion:{root}:version=0", game)
    assert isinstance(at_bench, SearchPlayer) and at_bench.options["simulations"] == 6
    assert at_bench.name == "champion:run:v0:6"

    match = play_match(game, [searcher, "random"], games=6, seed=3)
    assert len(match.records) == 6 and searcher.searches > 0  # it searched its moves
    assert match.players[0].label == searcher.name

    with pytest.raises(
        ValueError, match="trained kuhn_poker with 2 players; this table is leduc_poker"
    ):
        make_player(f"champion:{root}", build_game(dataclasses.replace(
            sync_run.settings, game=GameSettings("leduc_poker", {"players": 2}))))  # fmt: skip
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        make_player(f"champion:{tmp_path}", game)
    with pytest.raises(RegistryError, match="unknown model version 99"):
        make_player(f"champion:{root}:version=99", game)
    with pytest.raises(ValueError, match="positive"):
        make_player(f"champion:{root}:0", game)


def test_a_warm_start_makes_v0_play_like_the_teacher(tmp_path: Path) -> None:
    """learner.warm_start_games: v0 is trained on the rule-based player's labelled games (kept
    as real shards in a store of their own, never in the run's replay window) and then plays its
    moves; the stats reach the pipeline state and v0's metadata. Kuhn's teacher (the card-strength
    rule) is a function of the information state, so agreement is a sharp test."""
    import random

    from omega_cluster.model.checkpoint import load_checkpoint
    from omega_cluster.model.inference import network_player_from_checkpoint

    settings = tiny_settings(iterations=1, warm_start_games=200, warm_start_steps=300)
    run = run_pipeline(tmp_path / "run", settings)
    stats = run.state.warm_start
    assert stats["warm_start/games"] == 200 and stats["warm_start/steps"] == 300
    assert stats["warm_start/policy_loss"] < 0.5 * stats["warm_start/first_policy_loss"]
    v0 = run.pipeline.registry.get(0)
    assert load_checkpoint(v0.uri, load_optimizer=False).metadata.metrics == pytest.approx(stats)

    warm = ShardStore(str(tmp_path / "run" / "warm_start"))
    [entry] = warm.entries()
    records = table_to_records(warm.read(entry))
    assert len(records) == entry.rows == stats["warm_start/rows"] > 200
    assert {r.actor for r in records} == {"warm_start"}
    assert all(e.writer_id != "warm_start" for e in _store(run.root).entries())

    game = build_game(settings)
    net = network_player_from_checkpoint(game, v0.uri)
    agree = 0
    for r in records:
        state = game.replay(r.game_seed, r.history)
        agree += net.act(state, r.player, random.Random(0)) == r.action
    assert agree / len(records) > 0.9, agree / len(records)


def test_a_warm_start_needs_a_rule_based_teacher() -> None:
    from omega_cluster.config import ConfigError

    settings = dataclasses.replace(tiny_settings(), game=GameSettings("openspiel:tic_tac_toe", {}))
    settings.learner.warm_start_games = 10
    with pytest.raises(
        ConfigError, match=r"learner.warm_start_games=10 needs the game's rule-based"
    ):
        validate(settings)


def test_the_workers_configs_are_frozen_picklable_and_carry_the_settings() -> None:
    """What Ray ships to each actor: the worker's own config, never the run's settings."""
    settings = tiny_settings("leduc_poker")
    selfplay = wiring.selfplay_worker_config(settings)
    learner = wiring.learner_worker_config(settings)
    gate = wiring.gate_service_config(settings)
    for config in (selfplay, learner, gate):
        assert pickle.loads(pickle.dumps(config)) == config
        with pytest.raises(dataclasses.FrozenInstanceError):
            config.__setattr__("torch_threads", 2)
    assert selfplay.selfplay.search.simulations == settings.search.simulations
    assert (
        selfplay.chunk_config(games=2, seed=7, champion_version=3, actor="a").concurrent_games == 2
    )
    assert learner.learner.batch_size == settings.learner.batch_size
    assert (gate.gate.games_per_slice, gate.anchors) == (8, {"random": 1000.0})
