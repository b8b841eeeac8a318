"""The gate (eval/gate.py): fixed-margin and SPRT decisions, worse slices, stale candidates."""

from __future__ import annotations

import numpy as np
import pytest

from omega_cluster.eval.gate import (
    Contender,
    GateConfig,
    GateConfigError,
    SliceResults,
    Verdict,
    decide,
)
from omega_cluster.eval.stats import elo_from_score, score_interval

CANDIDATE, CHAMPION = Contender(version=7, parent=6), Contender(version=6, parent=5)


def _slice(key: str, wins: int, draws: int, losses: int) -> SliceResults:
    return SliceResults.from_wdl(key, wins, draws, losses)


def test_config_bad_input_names_the_problem() -> None:
    with pytest.raises(GateConfigError, match="mode='elo' is not allowed; allowed: fixed, sprt"):
        GateConfig(mode="elo")
    with pytest.raises(ValueError, match=r"elo1=10.0 must be > GateConfig.elo0=10.0 \(SPRT"):
        GateConfig(elo0=10.0, elo1=10.0)
    with pytest.raises(ValueError, match=r"alpha=0.5 must be a finite number in \(0, 0.5\)"):
        GateConfig(alpha=0.5)
    with pytest.raises(ValueError, match=r"beta=-0.1 must be a finite number in \(0, 0.5\)"):
        GateConfig(beta=-0.1)
    with pytest.raises(ValueError, match="games_per_slice=0 must be an int >= 1"):
        GateConfig(mode="fixed", games_per_slice=0)
    with pytest.raises(ValueError, match="max_games=50 must be >= GateConfig.min_games=100"):
        GateConfig(min_games=100, max_games=50)
    with pytest.raises(ValueError, match="max_games=0 must be an int >= 1 or null"):
        GateConfig(max_games=0)


def test_results_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one slice"):
        decide(CANDIDATE, CHAMPION, [], GateConfig())
    with pytest.raises(ValueError, match="at least one slice"):
        decide(CANDIDATE, CHAMPION, {}, GateConfig())
    with pytest.raises(ValueError, match=r"duplicate slice keys: \['players=2'\]"):
        decide(CANDIDATE, CHAMPION, [_slice("players=2", 1, 0, 0)] * 2, GateConfig())
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        SliceResults("players=3", (1.0, 0.25))
    with pytest.raises(ValueError, match="odd number"):
        SliceResults("players=2", (1.0, 0.0, 1.0), paired=True)


def test_stale_candidate_is_rejected_before_any_game() -> None:
    stale = Contender(version=8, parent=5)  # trained from v5 while v6 is champion
    d = decide(stale, CHAMPION, [_slice("players=2", 90, 0, 10)], GateConfig())
    assert d.verdict is Verdict.REJECT and "stale" in d.reason and "v5" in d.reason
    kept = decide(stale, CHAMPION, [_slice("players=2", 90, 0, 10)], GateConfig(reject_stale=False))
    assert kept.verdict is Verdict.PROMOTE


def test_fixed_mode_waits_for_every_slice_then_applies_the_margin() -> None:
    config = GateConfig(mode="fixed", games_per_slice=100, margin=0.1)
    short = decide(
        CANDIDATE, CHAMPION, [_slice("p=2", 60, 0, 40), _slice("p=4", 30, 10, 10)], config
    )
    assert short.verdict is Verdict.CONTINUE and "p=4 has 50 of 100" in short.reason

    # aggregate 0.58: the candidate's 0.58 minus the champion's 0.42 = +0.16 > 0.1
    good = [_slice("p=2", 60, 0, 40), _slice("p=4", 50, 12, 38)]
    d = decide(CANDIDATE, CHAMPION, good, config)
    assert d.verdict is Verdict.PROMOTE and "+0.160 > margin +0.100" in d.reason
    assert d.games == 200 and d.score is not None and d.score.estimate == pytest.approx(0.58)
    assert d.elo_gap is not None and d.elo_gap.estimate == pytest.approx(elo_from_score(0.58))
    assert [s.key for s in d.slices] == ["p=2", "p=4"] and d.slices[1].draws == 12

    # aggregate 0.54: +0.08 does not clear 0.1 (it would with margin 0, the gate of the Mexican
    # Train app this project replaces)
    meh = [_slice("p=2", 54, 0, 46), _slice("p=4", 54, 0, 46)]
    assert decide(CANDIDATE, CHAMPION, meh, config).verdict is Verdict.REJECT
    assert (
        decide(CANDIDATE, CHAMPION, meh, GateConfig(mode="fixed", games_per_slice=100)).verdict
        is Verdict.PROMOTE
    )


def test_a_significantly_worse_slice_blocks_promotion_and_is_named() -> None:
    slices = [_slice("players=2", 180, 0, 20), _slice("players=6,objective=go-out", 30, 10, 60)]
    worse = score_interval(30, 10, 60, 0.975)  # 2 slices: the Bonferroni level of 95%
    assert worse.high < 0.5  # the slice's own interval excludes parity
    for config in (GateConfig(mode="fixed", games_per_slice=100), GateConfig()):
        d = decide(CANDIDATE, CHAMPION, slices, config)
        assert d.verdict is Verdict.REJECT
        assert "players=6,objective=go-out is significantly worse" in d.reason
        assert f"[{worse.low:.3f}, {worse.high:.3f}]" in d.reason
        assert [s.significantly_worse for s in d.slices] == [False, True]
    lenient = GateConfig(require_no_worse_slice=False)
    assert decide(CANDIDATE, CHAMPION, slices, lenient).verdict is Verdict.PROMOTE


def test_sprt_mode_promotes_rejects_and_continues() -> None:
    config = GateConfig(elo0=0.0, elo1=35.0)
    strong = decide(CANDIDATE, CHAMPION, [_slice("p=2", 170, 20, 110)], config)
    assert strong.verdict is Verdict.PROMOTE and "trinomial SPRT" in strong.reason
    assert strong.llr is not None and strong.llr_bounds is not None
    assert strong.llr >= strong.llr_bounds[1]
    weak = decide(CANDIDATE, CHAMPION, [_slice("p=2", 120, 20, 160)], config)
    assert weak.verdict is Verdict.REJECT and "accept H0" in weak.reason
    early = decide(CANDIDATE, CHAMPION, [_slice("p=2", 12, 2, 10)], config)
    assert early.verdict is Verdict.CONTINUE
    capped = GateConfig(max_games=24)
    assert decide(CANDIDATE, CHAMPION, [_slice("p=2", 12, 2, 10)], capped).verdict is Verdict.REJECT
    patient = GateConfig(min_games=1000)
    d = decide(CANDIDATE, CHAMPION, [_slice("p=2", 170, 20, 110)], patient)
    assert d.verdict is Verdict.CONTINUE and "300 of at least 1000" in d.reason
    empty = decide(CANDIDATE, CHAMPION, [SliceResults("p=2", ())], config)
    assert empty.verdict is Verdict.CONTINUE and empty.score is None


def test_paired_slices_use_the_pentanomial_model_and_deal_intervals() -> None:
    rng = np.random.default_rng(1)
    scores = []
    for _ in range(150):  # each deal from both seats; the deal's luck favours one seat
        p = rng.uniform(0.2, 0.95)
        scores += [float(rng.random() < p), float(rng.random() < 1.3 - p)]
    paired = SliceResults("players=2", tuple(scores), paired=True)
    d = decide(CANDIDATE, CHAMPION, {"players=2": paired}, GateConfig())
    assert "pentanomial SPRT" in d.reason and d.games == 300
    assert d.score is not None and d.score.estimate == pytest.approx(np.mean(scores))
    mixed = [paired, _slice("players=4", 40, 20, 40)]
    assert "trinomial SPRT" in decide(CANDIDATE, CHAMPION, mixed, GateConfig()).reason
