"""The gate's bench over the tables of a fleet (omega_cluster.eval.gate_bench and the gatekeeper).

Specs: a 2-player deal is its seat-swapped pair; an N-player deal is game A (the candidate at the
focus seat, rotated with the deal) and the control game C (the champion at every seat) with the
same deal seed and every seat's rng seed. Pair values: h(A) + (1 - h(C)). Benching through
:class:`GateService` in one process with real small Mexican Train checkpoints (its encoder serves
every table size): every table of the fleet gets the same deals each round, each is reported;
the same checkpoint on both sides is exactly at par at every table (A and C are then the same
game). The decision: a significantly worse table blocks a promotion the pooled SPRT would make.
The defaults are the SPRT of conf/gate/default.yaml; its simulation against the old fixed gate.
"""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from model_helpers import small_net

from bench.bench_sprt import gate_rows, model_pdf
from omega_cluster import wiring
from omega_cluster.config import GateSettings, load_settings
from omega_cluster.eval.gate import Contender, GateConfig, SliceResults, Verdict, decide
from omega_cluster.eval.gate_bench import (
    CANDIDATE,
    CHAMPION,
    gate_specs,
    pair_scores,
    table_score,
)
from omega_cluster.eval.gatekeeper import BenchTask, BenchWorker, GateService, GateServiceConfig
from omega_cluster.eval.sprt import simulate_fixed
from omega_cluster.games.fleet import fleet_for
from omega_cluster.games.registry import make_game
from omega_cluster.model import encoder_for
from omega_cluster.model.checkpoint import save_checkpoint

PARAMS = {"players": 2, "rounds": 1}
FLEET = fleet_for("mexican_train", PARAMS, {2: 1, 3: 1}, ["points", "go_out"])


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two small Mexican Train networks (different random weights): v0 and v1."""
    root = tmp_path_factory.mktemp("gate_bench")
    game = make_game("mexican_train", **PARAMS)
    encoder = encoder_for(game)
    uris = []
    for v in (0, 1):
        save_checkpoint(root / f"v{v}", small_net(game, encoder, seed=v), game=game,
                        encoder=encoder, version=v)  # fmt: skip
        uris.append(str(root / f"v{v}"))
    return uris[0], uris[1]


def _service(gate: GateConfig) -> GateService:
    config = GateServiceConfig("mexican_train", PARAMS, gate, fleet=FLEET, chunk_games=8)
    return GateService(config)


def test_two_player_deals_swap_seats_and_n_player_deals_add_a_control_game() -> None:
    two = gate_specs("mexican_train", PARAMS, 2, seed=5, deals=range(3))
    assert len(two) == 6 and [s.index for s in two] == list(range(6))
    for a, b in zip(two[::2], two[1::2], strict=True):
        assert (a.seats, b.seats) == ((CANDIDATE, CHAMPION), (CHAMPION, CANDIDATE))
        assert (a.focus, b.focus, a.arm, b.arm) == (0, 1, "a", "b")
        assert a.deal_seed == b.deal_seed and a.params == b.params
    three = gate_specs("mexican_train", {**PARAMS, "players": 3}, 3, seed=5, deals=range(6))
    assert len(three) == 12
    for d, (a, c) in enumerate(zip(three[::2], three[1::2], strict=True)):
        r = d % 3  # the focus seat rotates with the deal
        assert a.focus == c.focus == r and (a.deal, c.deal) == (d, d)
        assert (
            a.seats[r] == CANDIDATE
            and [s for i, s in enumerate(a.seats) if i != r] == [CHAMPION] * 2
        )
        assert c.seats == (CHAMPION,) * 3 and c.arm == "b"
        # all else fixed: the deal, the table and every seat's rng
        assert (a.deal_seed, a.seat_seeds, a.params) == (c.deal_seed, c.seat_seeds, c.params)
    assert len({a.deal_seed for a in three[::2]}) == 6  # fresh deals
    assert len(set(three[0].seat_seeds)) == 3  # each seat its own rng


def test_pair_values_are_the_candidate_game_minus_the_control(checkpoints: tuple[str, str]) -> None:
    v0, v1 = checkpoints
    params = {**PARAMS, "players": 3}
    specs = gate_specs("mexican_train", params, 3, seed=11, deals=range(6))
    worker = BenchWorker(GateServiceConfig("mexican_train", params, GateConfig()))
    results = worker.play(BenchTask(specs, {CANDIDATE: v1, CHAMPION: v0}))
    scores = pair_scores(results)
    assert len(scores) == 12
    for i, (a, c) in enumerate(zip(results[::2], results[1::2], strict=True)):
        focus = a.spec.focus
        assert focus is not None
        for r, h in ((a, scores[2 * i]), (c, 1.0 - scores[2 * i + 1])):
            shares = r.record.win_shares
            others = (sum(shares) - shares[focus]) / 2
            expected = 1.0 if shares[focus] > others else 0.5 if shares[focus] == others else 0.0
            assert h == expected == table_score(r)
    SliceResults("players=3", scores, paired=True)  # valid pairs: each in {0, 0.5, ..., 2}


def test_every_table_is_benched_with_the_same_deals_and_reported(
    checkpoints: tuple[str, str],
) -> None:
    v0, v1 = checkpoints
    service = _service(GateConfig(mode="fixed", games_per_slice=8, margin=0.0))
    out = service.bench(1, 0, v1, 0, v0)
    assert [s["key"] for s in out.slices] == list(FLEET.keys)
    assert all((s["deals"], s["games"]) == (4, 8) for s in out.slices)
    assert out.games == 32 and out.verdict in ("promote", "reject")
    for s in out.slices:
        for name in ("score", "fair_share", "champion_fair_share"):
            assert s[f"{name}_low"] <= s[name] <= s[f"{name}_high"]
        assert math.isfinite(s["elo"]) and s["wins"] + s["draws"] + s["losses"] == 8
    # SPRT: rounds of chunk_games // 2 = 4 deals at every table until max_games over all tables
    sprt = _service(GateConfig(max_games=40)).bench(1, 0, v1, 0, v0)
    assert [s["deals"] for s in sprt.slices] == [8] * 4  # two rounds: 32 games, then 64
    assert sprt.games == 64 and sprt.verdict == "reject" and "max_games=40" in sprt.reason
    assert sprt.llr is not None


def test_the_champion_against_itself_is_exactly_at_par_at_every_table(
    checkpoints: tuple[str, str],
) -> None:
    """With one checkpoint on both sides, game A and its control are the same game (and a
    2-player deal's two games mirror each other): every pair is worth exactly 1."""
    v0, _ = checkpoints
    out = _service(GateConfig(mode="fixed", games_per_slice=12)).bench(1, 0, v0, 0, v0)
    for s in out.slices:
        assert s["score"] == 0.5 and s["wins"] == s["losses"]
        assert s["fair_share"] == pytest.approx(s["champion_fair_share"])
    assert out.verdict == "reject" and out.score == 0.5


def _pairs(key: str, values: list[float]) -> SliceResults:
    """A paired slice whose deals have these pair values (each split into two game scores)."""
    split = {0.0: (0.0, 0.0), 0.5: (0.5, 0.0), 1.0: (1.0, 0.0), 1.5: (1.0, 0.5), 2.0: (1.0, 1.0)}
    return SliceResults(key, tuple(x for v in values for x in split[v]), paired=True)


@pytest.mark.parametrize("mode", ["sprt", "fixed"])
def test_a_significantly_worse_table_blocks_what_the_pooled_pairs_would_promote(mode: str) -> None:
    config = GateConfig(mode=mode, games_per_slice=24)
    good = _pairs("players=2,objective=points", [2.0] * 50 + [1.0] * 10)
    bad = _pairs("players=4,objective=points", [0.0] * 8 + [1.0] * 4)
    alone = decide(Contender(1, 0), Contender(0), [good], config)
    assert alone.verdict is Verdict.PROMOTE
    both = decide(Contender(1, 0), Contender(0), [good, bad], config)
    assert both.verdict is Verdict.REJECT
    assert "slice players=4,objective=points is significantly worse" in both.reason
    assert [s.significantly_worse for s in both.slices] == [False, True]
    if mode == "sprt":
        assert "pentanomial SPRT" in both.reason and "accepts H1" in both.reason


def test_the_default_gate_is_the_sprt_and_gate_fixed_the_old_one() -> None:
    defaults = GateSettings()
    assert (defaults.mode, defaults.elo0, defaults.elo1) == ("sprt", 0.0, 30.0)
    assert (defaults.alpha, defaults.beta, defaults.max_games) == (0.025, 0.1, 1000)
    run = load_settings()
    schema = dataclasses.replace(run, gate=defaults)
    assert wiring.gate_config(schema) == GateConfig()  # schema and GateConfig agree
    # make train asks for smaller steps (a stint of distillation gains little) and pays for
    # them with more games
    gate = wiring.gate_config(run)
    assert gate == dataclasses.replace(GateConfig(), elo1=15.0, max_games=3000)
    assert run.gate.player == "network"
    config = wiring.gate_service_config(run)
    assert [t.key for t in config.bench_tables()] == ["players=2,objective=points"]
    fixed = wiring.gate_config(load_settings(["gate=fixed"]))
    assert (fixed.mode, fixed.games_per_slice, fixed.margin) == ("fixed", 40, 0.0)
    fleet = load_settings(["game.fleet={2:1,3:1}", "game.objectives=[points,go_out]"])
    assert len(wiring.gate_service_config(fleet).bench_tables()) == 4


def test_the_fixed_gate_simulation_matches_its_exact_promotion_rate() -> None:
    pdf = model_pdf("pentanomial", 0.0)
    exact = np.array([1.0])
    for _ in range(20):  # the sum of 20 pair categories (pair value = category / 2)
        exact = np.convolve(exact, pdf)
    promote = float(exact[41:].sum())  # score > 0.5: category sum > 40
    runs = 20_000
    simulated = simulate_fixed(pdf, samples=20, margin=0.0, runs=runs, rng=3)
    assert abs(simulated - promote) < 4 * math.sqrt(promote * (1 - promote) / runs)
    assert simulate_fixed(pdf, samples=20, margin=0.999, runs=100, rng=3) == 0.0
    with pytest.raises(ValueError, match="pdf must be 3 or 5"):
        simulate_fixed([0.5, 0.5], samples=2, margin=0.0, runs=1, rng=0)


def test_the_new_default_promotes_noise_rarely_and_the_old_one_often() -> None:
    rows = {(r.design.split()[0], r.true_elo): r for r in gate_rows(runs=300, seed=7)}
    assert rows["fixed", 0.0].promoted > 0.35  # the old default: a coin toss
    assert rows["SPRT", 0.0].promoted < 0.06
    assert rows["SPRT", 35.0].promoted > 0.8 > rows["fixed", 35.0].promoted
    assert rows["fixed", 0.0].mean_games == 40
    assert 100 < rows["SPRT", 0.0].mean_games <= 1000


def test_each_table_of_a_gate_goes_to_mlflow(checkpoints: tuple[str, str], tmp_path: Path) -> None:
    """``gate/slice/<key>/...``: score, Elo and fair shares with their intervals, per table, in a
    real MLflow sqlite store."""
    from omega_cluster.pipeline.driver import PipelineState, RunPaths
    from omega_cluster.service import TrackingObserver
    from omega_cluster.tracking import Tracker

    v0, v1 = checkpoints
    out = _service(GateConfig(mode="fixed", games_per_slice=4)).bench(1, 0, v1, 0, v0)
    with Tracker(run_dir=tmp_path, flush_every_s=0.0) as tracker:
        observer = TrackingObserver(tracker, load_settings(), RunPaths(tmp_path), "")
        observer.on_gate(
            out, {"version": 1, "promoted": False}, PipelineState(game="mexican_train")
        )
        tracker.flush()
    with sqlite3.connect(tmp_path / "mlflow.db") as db:
        logged = dict(db.execute("select key, value from metrics where key like 'gate/slice/%'"))
    for s in out.slices:
        prefix = "gate/slice/" + s["key"].replace("=", "_").replace(",", "_")
        for name in ("score", "score_low", "elo_high", "fair_share", "champion_fair_share_low"):
            assert logged[f"{prefix}/{name}"] == pytest.approx(s[name])
        assert logged[f"{prefix}/deals"] == 2.0


def test_the_no_worse_rule_holds_its_level_over_many_tables() -> None:
    """A table 40-60 over 100 games is significantly worse at 95% when it is the only one, but
    not at the Bonferroni level of 10 tables (99.5%): a fleet does not block good candidates
    ten times as often."""
    from omega_cluster.eval.stats import score_interval

    bad = SliceResults.from_wdl("players=4,objective=points", 40, 0, 60)
    assert score_interval(40, 0, 60, 0.95).high < 0.5 < score_interval(40, 0, 60, 0.995).high
    config = GateConfig(mode="fixed", games_per_slice=100)
    [alone] = decide(Contender(1, 0), Contender(0), [bad], config).slices
    assert alone.significantly_worse
    even = [SliceResults.from_wdl(f"players={n},objective=x", 50, 0, 50) for n in range(9)]
    fleet = decide(Contender(1, 0), Contender(0), [bad, *even], config)
    assert not fleet.slices[0].significantly_worse
    assert fleet.slices[0].score == alone.score  # reported at slice_level all the same
