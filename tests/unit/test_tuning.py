"""The tuner's core (omega_cluster.eval.tuning): specs, pool, common deals, CMA-ES, resume."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from omega_cluster.eval.tuning import (
    LOG_FILE,
    TuneConfig,
    TuneError,
    TuneJob,
    Tuner,
    WeightSpec,
    generation_jobs,
    job_context,
    resolve_target,
    seating,
    spec_from_default,
    update_pool,
)
from omega_cluster.games.registry import make_game

MT = {"players": 4, "rounds": 1}


def test_spec_normalises_and_maps_bounds() -> None:
    s = WeightSpec("w", 2.0, -1.0, 8.0, 0.5)
    assert s.normalise(3.0) == pytest.approx(2.0)
    assert s.value(s.normalise(5.5)) == pytest.approx(5.5)
    assert s.bounds == pytest.approx((-6.0, 12.0))
    assert s.value(100.0) == 8.0 and s.value(-100.0) == -1.0  # clipped to [low, high]
    d = spec_from_default("x", -3.0)
    assert (d.scale, d.low, d.high) == (3.0, -12.0, 6.0)
    assert spec_from_default("zero", 0.0).scale == 1.0
    with pytest.raises(TuneError, match="low < default < high"):
        WeightSpec("w", 1.0, 1.0, 2.0, 1.0)
    with pytest.raises(TuneError, match="scale must be > 0"):
        WeightSpec("w", 1.0, 0.0, 2.0, 0.0)


def test_unknown_target_and_weight_are_refused_in_one_line() -> None:
    game = make_game("mexican_train", **MT)
    with pytest.raises(TuneError) as err:
        resolve_target(game, "nope")
    assert "commander" in str(err.value) and "search:<leaf>:<simulations>" in str(err.value)
    assert "\n" not in str(err.value)
    target = resolve_target(game, "commander")
    with pytest.raises(TuneError, match="unknown weight.*'bogus'"):
        target.from_dict({"bogus": 1.0})
    with pytest.raises(TuneError, match="c_uct is the tuned weight"):
        resolve_target(game, "search:random:4:c_uct=2")
    with pytest.raises(TuneError, match="search:nope:4"):
        resolve_target(game, "search:nope:4")
    assert resolve_target(game, "search:random:4").names == ("c_uct",)


def test_pool_keeps_the_defaults_and_drops_the_oldest_best() -> None:
    d, a, b, c = (0.0,), (1.0,), (2.0,), (3.0,)
    pool = [d]
    for best in (a, b, c):
        pool = update_pool(pool, best, 3)
    assert pool == [d, b, c]
    assert update_pool([d, a], b, 1) == [d]
    # every pool member sits at the table over a few deals, never at the focus seat
    seen = set()
    for deal in range(8):
        focus, members = seating(deal, 4, 3)
        assert focus == deal % 4 and members[focus] is None
        seen |= {m for m in members if m is not None}
    assert seen == {0, 1, 2}


def test_a_generation_plays_common_deals_and_fresh_ones_next_generation() -> None:
    cands = [(float(i),) for i in range(3)]
    pool = [(9.0,), (8.0,)]
    kw = dict(players=4, candidates=cands, pool=pool, seed=5, deals=6)
    jobs = generation_jobs("mexican_train", (), "search:random:2", generation=0, **kw)  # type: ignore[arg-type]
    assert len(jobs) == 18
    by_deal: dict[int, list[TuneJob]] = {}
    for j in jobs:
        by_deal.setdefault(j.deal, []).append(j)
        assert j.seats[j.focus] == cands[j.candidate]
    for same in by_deal.values():
        assert len({(j.deal_seed, j.focus) for j in same}) == 1
        others = {tuple(s for q, s in enumerate(j.seats) if q != j.focus) for j in same}
        assert len(others) == 1
    later = generation_jobs("mexican_train", (), "search:random:2", generation=1, **kw)  # type: ignore[arg-type]
    assert not {j.deal_seed for j in jobs} & {j.deal_seed for j in later}


# -- CMA-ES on a toy fitness (the games replaced by a function of the focus seat's weights) ----

GOAL_SHIFT = 1.5  # the optimum: each weight 1.5 scales away from its default


def _toy_map(target):  # type: ignore[no-untyped-def]
    goal = np.array([s.default + GOAL_SHIFT * s.scale for s in target.specs])
    scales = np.array([s.scale for s in target.specs])

    def mapper(fn, jobs: Sequence[TuneJob]) -> list[float]:  # type: ignore[no-untyped-def]
        del fn
        return [-float(np.sum(((np.array(j.seats[j.focus]) - goal) / scales) ** 2)) for j in jobs]

    return mapper


def _tuner(out: Path, generations: int) -> Tuner:
    config = TuneConfig("mexican_train", MT, "commander", generations=generations,
                        population=8, deals=2, pool=3, seed=3)  # fmt: skip
    _, target = job_context(config.game, config.items(), config.target)
    return Tuner(config, out, map=_toy_map(target), command="test")


def test_cma_improves_a_toy_fitness(tmp_path: Path) -> None:
    tuner = _tuner(tmp_path, 25)
    tuner.run()
    first, last = tuner.history[0], tuner.history[-1]
    assert np.mean(last.fitness) > np.mean(first.fitness) / 4  # mean loss down 4x at least
    z = [s.normalise(w) for s, w in zip(tuner.target.specs, tuner.mean_weights(), strict=True)]
    assert np.mean(np.abs(np.array(z) - GOAL_SHIFT)) < 0.5 * GOAL_SHIFT


def test_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    whole = _tuner(tmp_path / "whole", 5)
    whole.run()
    part = _tuner(tmp_path / "part", 2)
    part.run()
    resumed = _tuner(tmp_path / "part", 5)
    assert len(resumed.history) == 2
    resumed.run()
    assert [g.z for g in resumed.history] == [g.z for g in whole.history]
    assert [g.fitness for g in resumed.history] == [g.fitness for g in whole.history]
    assert [g.pool for g in resumed.history] == [g.pool for g in whole.history]
    assert resumed.mean_weights() == whole.mean_weights()
    # a log whose candidates do not replay is refused, not silently continued
    log = json.loads((tmp_path / "part" / LOG_FILE).read_text())
    log["generations"][1]["z"][0][0] += 1e-9
    (tmp_path / "part" / LOG_FILE).write_text(json.dumps(log))
    with pytest.raises(TuneError, match="generation 1 replayed to other candidates"):
        _tuner(tmp_path / "part", 5)


def test_a_log_of_other_settings_is_refused(tmp_path: Path) -> None:
    _tuner(tmp_path, 1).run()
    config = TuneConfig("mexican_train", MT, "commander", generations=2, population=6, deals=2,
                        pool=3, seed=3)  # fmt: skip
    with pytest.raises(TuneError, match="population=8, not 6"):
        Tuner(config, tmp_path)


def test_the_generic_search_target_plays_real_games(tmp_path: Path) -> None:
    config = TuneConfig("kuhn_poker", {}, "search:random:8", generations=2, population=3,
                        deals=4, pool=2, seed=1)  # fmt: skip
    tuner = Tuner(config, tmp_path)
    tuner.run()
    assert [len(g.fitness) for g in tuner.history] == [3, 3]
    assert all(0.0 <= f <= 2.0 for g in tuner.history for f in g.fitness)  # 2 seats: share x 2
    (c_uct,) = tuner.mean_weights()
    assert 0.05 <= c_uct <= 6.0


def test_the_hand_value_target_tunes_the_lookahead_leaf(tmp_path: Path) -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    target = resolve_target(game, "lookahead:hand:1:worlds=2")
    assert "tiles" in target.names and "scale" not in target.names
    # the weights reach the leaf: a candidate that ignores the hand differs from the defaults
    built = target.build(game, dict.fromkeys(target.names, 0.0))
    state = game.new_initial_state(5)
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert built.evaluator.value_fn(state) == pytest.approx((0.5, 0.5))  # type: ignore[attr-defined]
    with pytest.raises(TuneError, match="depth must be an int >= 1"):
        resolve_target(game, "lookahead:hand:0")
    with pytest.raises(TuneError, match="targets: search:<leaf>:<simulations>$"):
        resolve_target(make_game("kuhn_poker"), "lookahead:hand:1")  # no hand-written value
    config = TuneConfig("mexican_train", {"players": 2, "rounds": 1}, "lookahead:hand:1:worlds=1",
                        generations=1, population=3, deals=2, pool=2, seed=3)  # fmt: skip
    tuner = Tuner(config, tmp_path)
    tuner.run()
    assert len(tuner.history[0].fitness) == 3


def test_the_blend_target_tunes_the_weight_on_the_hand_written_terms(tmp_path: Path) -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    tables = Path(__file__).resolve().parents[2] / "bench" / "tables" / "mt2p"  # the frozen tables
    spec = f"lookahead:tables+hand:1:worlds=1:tables={tables}"
    target = resolve_target(game, spec)
    assert target.names == ("hand",) and target.defaults() == (0.25,)
    assert target.build(game, {"hand": 0.5}).evaluator.weight == 0.5  # type: ignore[attr-defined]
    with pytest.raises(TuneError, match="hand is the tuned weight"):
        resolve_target(game, spec + ":hand=0.3")
    with pytest.raises(TuneError, match="does not exist"):
        resolve_target(game, "lookahead:tables+hand:1:tables=" + str(tmp_path / "none"))
