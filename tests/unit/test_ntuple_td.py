"""TD(λ) targets, temporal-coherence rates and the sparse merge of n-tuple tables."""

from __future__ import annotations

import numpy as np
import pytest

from omega_cluster.search.ntuple import (
    Chain,
    TablesError,
    TemporalCoherence,
    TupleTables,
    game_update,
    lambda_returns,
    seat_targets,
)
from tests.unit.ntuple_helpers import Flat


def test_lambda_returns_on_a_hand_made_chain() -> None:
    values = np.array([[0.2], [0.4], [0.7]])
    z = np.array([1.0])
    np.testing.assert_allclose(lambda_returns(values, z, 0.0)[:, 0], [0.4, 0.7, 1.0])
    np.testing.assert_allclose(lambda_returns(values, z, 1.0)[:, 0], [1.0, 1.0, 1.0])
    # λ = 0.5: G2 = 1, G1 = 0.5*0.7 + 0.5*1 = 0.85, G0 = 0.5*0.4 + 0.5*0.85 = 0.625
    np.testing.assert_allclose(lambda_returns(values, z, 0.5)[:, 0], [0.625, 0.85, 1.0])
    with pytest.raises(ValueError, match="lam must be in"):
        lambda_returns(values, z, 1.5)


def test_seat_targets_rotate_to_the_seat() -> None:
    np.testing.assert_allclose(seat_targets([0.1, 0.2, 0.7], 1, 1), [0.2])
    np.testing.assert_allclose(seat_targets([0.1, 0.2, 0.7], 2, 3), [0.7, 0.1, 0.2])


def test_game_update_shares_the_error_among_entries() -> None:
    t = TupleTables(Flat())
    t.weights[0] = 0.1
    chain = Chain([np.array([0, 6]), np.array([6, 6])], np.array([1.0]))
    up = game_update(t, [chain], lam=0.0)
    # position 0: V=0.1, target V(pos 1)=0 -> error -0.1 over 2 entries; pos 1: V=0 -> error 1
    np.testing.assert_array_equal(up.indices, [0, 6])
    np.testing.assert_allclose(up.delta[:, 0], [-0.05, -0.05 + 1.0])
    np.testing.assert_allclose(up.magnitude[:, 0], [0.05, 0.05 + 1.0])
    np.testing.assert_array_equal(up.hits, [1, 2])
    assert up.positions == 2


def test_coherence_rates_follow_the_error_signs() -> None:
    t = TupleTables(Flat())
    tc = TemporalCoherence(t, alpha=0.5)
    np.testing.assert_allclose(tc.rates(np.array([0, 1])), 1.0)  # A = 0: full rate
    tc.errors[0], tc.magnitudes[0] = 0.3, 0.3  # coherent errors
    tc.errors[1], tc.magnitudes[1] = 0.1, 0.5  # errors that mostly cancel
    tc.errors[2], tc.magnitudes[2] = -0.2, 0.4
    np.testing.assert_allclose(tc.rates(np.array([0, 1, 2]))[:, 0], [1.0, 0.2, 0.5])


def _update(t: TupleTables, ix: list[int], target: float):
    return game_update(t, [Chain([np.array(ix)], np.array([target]))], lam=0.0)


def test_merge_steps_at_the_rate_before_and_accumulates() -> None:
    t = TupleTables(Flat())
    tc = TemporalCoherence(t, alpha=0.5)
    assert tc.merge([_update(t, [3], 1.0)]) == 1
    assert t.weights[3, 0] == pytest.approx(0.5)
    assert tc.errors[3, 0] == pytest.approx(1.0) and tc.magnitudes[3, 0] == pytest.approx(1.0)
    tc.merge([_update(t, [3], 0.0)])  # error -0.5 at rate |1|/1 = 1
    assert t.weights[3, 0] == pytest.approx(0.25)
    assert tc.rates(np.array([3]))[0, 0] == pytest.approx(0.5 / 1.5)
    assert tc.merge([]) == 0


def test_many_hits_on_one_stale_copy_do_not_overshoot() -> None:
    t = TupleTables(Flat())
    tc = TemporalCoherence(t, alpha=1.0)
    ups = [_update(t, [5], 1.0) for _ in range(10)]  # ten errors of 1, all on the blank copy
    tc.merge(ups)
    assert t.weights[5, 0] == pytest.approx(1.0)  # the rate-1 step moves onto the target once
    t2 = TupleTables(Flat())
    tc2 = TemporalCoherence(t2, alpha=0.1)
    tc2.merge([_update(t2, [5], 1.0) for _ in range(10)])
    assert t2.weights[5, 0] == pytest.approx(1.0 - 0.9**10)  # ten sequential steps of 0.1


def test_merge_of_disjoint_updates_equals_sequential() -> None:
    a, b = TupleTables(Flat()), TupleTables(Flat())
    ta, tb = TemporalCoherence(a, 0.3), TemporalCoherence(b, 0.3)
    ups = [_update(a, [0, 1], 1.0), _update(a, [4], 0.2), _update(a, [7, 9], 0.6)]
    ta.merge(ups)
    for up in ups:
        tb.merge([up])
    np.testing.assert_allclose(a.weights, b.weights)
    np.testing.assert_allclose(ta.magnitudes, tb.magnitudes)


def test_merge_of_stale_updates_is_close_to_sequential() -> None:
    rng = np.random.default_rng(0)
    games = [
        [Chain([rng.integers(0, 10, 3) for _ in range(4)], np.array([float(rng.random())]))]
        for _ in range(8)
    ]
    merged, seq = TupleTables(Flat()), TupleTables(Flat())
    tm, ts = TemporalCoherence(merged, 0.02), TemporalCoherence(seq, 0.02)
    tm.merge([game_update(merged, g, 0.5) for g in games])  # all valued on one copy
    for g in games:
        ts.merge([game_update(seq, g, 0.5)])  # each valued after the previous
    assert np.abs(merged.weights).max() > 0.01
    np.testing.assert_allclose(merged.weights, seq.weights, atol=2e-3)


def test_coherence_save_load(tmp_path) -> None:
    t = TupleTables(Flat())
    tc = TemporalCoherence(t)
    tc.merge([_update(t, [2, 5], 1.0)])
    tc.save(tmp_path)
    back = TemporalCoherence(t)
    back.load(tmp_path)
    np.testing.assert_array_equal(back.errors, tc.errors)
    with pytest.raises(TablesError, match="does not fit"):
        TemporalCoherence(TupleTables(Flat(3, 3))).load(tmp_path)
    with pytest.raises(TablesError, match="is missing"):
        back.load(tmp_path / "nowhere")
