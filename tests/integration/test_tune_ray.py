"""The tuner's jobs over real local Ray actors give the very scores of the one-process run."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega_cluster.eval.tuning import TuneConfig, Tuner

pytestmark = pytest.mark.xdist_group("ray")


def test_ray_map_tunes_as_the_one_process_run(tmp_path: Path) -> None:
    from omega_cluster.cluster.tuning import RayMap

    config = TuneConfig("mexican_train", {"players": 4, "rounds": 1}, "commander",
                        generations=2, population=4, deals=6, pool=2, seed=7)  # fmt: skip
    alone = Tuner(config, tmp_path / "alone")
    alone.run()
    ray_map = RayMap("embedded", workers=2)
    try:
        assert len(ray_map.actors) == 2
        spread = Tuner(config, tmp_path / "ray", map=ray_map)
        spread.run()
    finally:
        ray_map.close()
    import ray

    assert not ray.is_initialized()
    assert [g.fitness for g in spread.history] == [g.fitness for g in alone.history]
    assert [g.z for g in spread.history] == [g.z for g in alone.history]
    assert spread.mean_weights() == alone.mean_weights()
