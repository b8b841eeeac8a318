"""The example games loaded as a user loads them, and the games the ecosystem's checkers run on
(:data:`ECOSYSTEM_GAMES`): a plain module beside the root conftest, so test modules in any
folder import it by a name no other conftest.py shadows."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>`` (a package or a module) as a user does, with ``examples/`` on
    the path: ``PYTHONPATH=examples`` (examples are not part of the package)."""
    examples = str(ROOT / "examples")
    if examples not in sys.path:
        sys.path.append(examples)
    return importlib.import_module(name)


ECOSYSTEM_GAMES: list[tuple[str, dict]] = [
    ("mexican_train", {"players": 2}),
    ("mexican_train", {"players": 4}),
    ("kuhn_poker", {}),
    ("leduc_poker", {}),
    ("goofspiel", {}),
    ("openspiel:tic_tac_toe", {}),
    ("openspiel:kuhn_poker", {}),
    ("race_to_n:RaceGame", {}),
    ("blind_war:BlindWarGame", {"players": 3}),
]
"""Every built-in game, one OpenSpiel game of each kind of information, and the examples' games
(``load_example`` first: they are found from ``examples/`` on the path): PettingZoo's and RLlib's
checkers run on each (tests/unit/test_pettingzoo.py, tests/integration/test_rllib_env.py)."""


def ecosystem_ids(games: list[tuple[str, dict]]) -> list[str]:
    return [f"{name}-{params.get('players', 2)}p" for name, params in games]
