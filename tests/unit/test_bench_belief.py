"""``bench/bench_belief.py`` on a smoke scale: the rows it can run give finite log-likelihoods,
the uniform row is the places-left arithmetic, and the hard constraints never rule out a true
holder."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from bench import bench_belief
from omega_cluster.games import make_game


def test_uniform_and_constraint_beliefs_on_commander_positions() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    found = bench_belief.positions(game, 2, seed=3, keep=0.3)
    assert len(found) > 5
    rng = random.Random(0)
    for pos in found[:6]:
        s, p = pos.state, pos.player
        unseen = len(s.boneyard) + sum(h.bit_count() for q, h in enumerate(s.hands) if q != p)
        assert int((pos.codes >= 1).sum()) == unseen
        uniform = bench_belief.log_likelihoods(pos, bench_belief.uniform_probs(pos))
        t = int(np.nonzero(pos.codes == 1)[0][0]) if len(s.boneyard) else None
        if t is not None:  # a boneyard tile: probability boneyard size / unseen tiles
            hidden = list(np.nonzero(pos.codes >= 1)[0])
            assert uniform[hidden.index(t)] == pytest.approx(math.log(len(s.boneyard) / unseen))
        probs = bench_belief.constraint_probs(pos, 30, rng)
        assert np.allclose(probs[pos.codes >= 1].sum(axis=1), 1.0)
        assert np.isfinite(bench_belief.log_likelihoods(pos, probs)).all()


def test_the_quick_run_prints_every_row_it_can(capsys: pytest.CaptureFixture[str]) -> None:
    bench_belief.main(["--quick", "--players", "2"])
    out = capsys.readouterr().out
    assert "uniform" in out and "constraints" in out and "per tile" in out
    assert "learned" in out  # the learned row, or why it did not run
    assert "not recorded" in out
