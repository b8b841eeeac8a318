"""Shared fixtures: the example games (``examples/blind_war/``, ``examples/race_to_n.py``),
imported as a user imports them, with ``examples/`` on the path."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>`` (a package or a module) as a user does, with ``examples/`` on
    the path: ``PYTHONPATH=examples`` (examples are not part of the package)."""
    examples = str(ROOT / "examples")
    if examples not in sys.path:
        sys.path.append(examples)
    return importlib.import_module(name)


@pytest.fixture(scope="session")
def blind_war() -> ModuleType:
    return load_example("blind_war")


@pytest.fixture(scope="session")
def race_to_n() -> ModuleType:
    return load_example("race_to_n")
