"""The field checks the components' configs and the settings share (omega_cluster/fields.py)."""

from __future__ import annotations

import pytest

from omega_cluster.eval.gate import GateConfig, GateConfigError
from omega_cluster.fields import FieldError, int_problem, number_problem
from omega_cluster.train.config import LearnerConfig, LearnerConfigError, LearnerError


def test_a_refused_field_is_named_by_its_config_or_by_the_caller() -> None:
    with pytest.raises(GateConfigError) as info:
        GateConfig(min_games=100, max_games=50)
    err = info.value
    assert str(err) == "GateConfig.max_games=50 must be >= GateConfig.min_games=100"
    assert (err.field, err.value, err.others) == ("max_games", 50, {"min_games": 100})
    assert (
        err.describe(lambda name: f"gate.{name}")
        == "gate.max_games=50 must be >= gate.min_games=100"
    )


def test_learner_config_errors_stay_learner_errors_and_check_the_device_name_only() -> None:
    with pytest.raises(LearnerError) as info:
        LearnerConfig(batch_size=0)
    assert isinstance(info.value, LearnerConfigError) and isinstance(info.value, FieldError)
    assert str(info.value) == "LearnerConfig.batch_size=0 must be an int >= 1"
    assert LearnerConfig(device="cuda:3").device == "cuda:3"  # the Learner checks it is there
    with pytest.raises(LearnerConfigError, match="device='CUDA' is not allowed; allowed: auto"):
        LearnerConfig(device="CUDA")


def test_the_wording() -> None:
    assert int_problem(3, 1) is None and int_problem(None, 1, optional=True) is None
    assert int_problem(True, 1) == "must be an int >= 1"
    assert int_problem(0, 1, optional=True) == "must be an int >= 1 or null"
    assert number_problem(float("nan"), 0.0) == "must be a finite number >= 0"
    assert number_problem(1.0, 0.0, 1.0, open_high=True) == "must be a finite number in [0, 1)"
    assert number_problem(0.5, 0.0, 0.5, open_low=True, open_high=True) is not None
