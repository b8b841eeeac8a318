"""N-tuple table training on a real local Ray: two actors play, the learner merges and saves."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import ray
import ray.cloudpickle

from omega_cluster.cluster.ntuple import start_table_ray, train_tables_ray
from omega_cluster.games.registry import make_game
from omega_cluster.search.ntuple import TupleTables
from omega_cluster.train.ntuple import TableTrainConfig, TableTrainer, train_tables
from tests.unit import ntuple_helpers
from tests.unit.ntuple_helpers import GreedyPolicy, KuhnInfoSet

pytestmark = [pytest.mark.xdist_group("ray")]

KUHN = make_game("kuhn_poker")


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[None]:
    """One embedded Ray with two CPUs; the test's pattern set travels by value to the actors."""
    if ray.is_initialized():  # another module's Ray (same xdist group): start this one fresh
        ray.shutdown()
    ray.cloudpickle.register_pickle_by_value(ntuple_helpers)
    assert start_table_ray(2)
    try:
        yield
    finally:
        ray.shutdown()
        ray.cloudpickle.unregister_pickle_by_value(ntuple_helpers)


def _trainer(**kw) -> TableTrainer:
    settings = {"watch_games": 128, "games": 128, "lam": 1.0, "batch": 8, "validate_every": 64}
    settings.update(kw)
    return TableTrainer(KUHN, TableTrainConfig(**settings), GreedyPolicy(), patterns=KuhnInfoSet())


def test_two_actors_learn_what_one_process_learns(tmp_path) -> None:
    trainer = _trainer()
    seen = []
    counters = train_tables_ray(
        trainer, 2, broadcast_every=2, out=tmp_path / "run", report=lambda t, v: seen.append(v)
    )
    assert counters.games == counters.watched == 128
    assert [v.games_trained for v in seen if v is not None] == [64, 128]
    assert not start_table_ray(2)  # the running Ray is joined, not restarted
    alone = _trainer()
    train_tables(alone)
    # the same watched deals, merged in another order on stale copies: close, not equal
    w, ref = trainer.tables.weights[:, 0], alone.tables.weights[:, 0]
    assert np.count_nonzero(w) == np.count_nonzero(ref) > 0
    np.testing.assert_allclose(w, ref, atol=0.2)
    saved = TupleTables.load(tmp_path / "run", KuhnInfoSet(), game="kuhn_poker")
    np.testing.assert_array_equal(saved.weights, trainer.tables.weights)
    assert saved.meta["games"] == 128
