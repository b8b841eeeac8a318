"""Shared fixtures: the example games (``examples/blind_war/``, ``examples/race_to_n.py``),
imported as a user imports them, with ``examples/`` on the path (:mod:`ecosystem_games`)."""

from __future__ import annotations

from types import ModuleType

import pytest
from ecosystem_games import load_example


@pytest.fixture(scope="session")
def blind_war() -> ModuleType:
    return load_example("blind_war")


@pytest.fixture(scope="session")
def race_to_n() -> ModuleType:
    return load_example("race_to_n")
