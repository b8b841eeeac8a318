"""Lazy ``"omega_cluster.<module>:<attr>"`` hooks against the import contract.

A hook string imports its module when it is resolved, so import-linter never sees the arrow from
the module that holds the string to the hook's module. This test sees it: it collects every
built-in hook (the string literals in ``omega_cluster/``, the player registry's entries, the game
table and the games' plugins) and checks each against the ``layers`` contracts of
``pyproject.toml``: a hook may point to its own layer or a lower one. The upward hooks the design
has are listed in :data:`UPWARD` with the reason; a new upward hook fails here.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "omega_cluster"
HOOK = re.compile(r"^(omega_cluster(?:\.\w+)+):(\w+)$")

UPWARD = {
    # the players registry names a run's champion, which only the service layer can build
    # (it reads the run's config and turns it into the gate's player); kept lazy so that the
    # spec "champion:<run>" works in every process, wherever the players are built
    ("omega_cluster.players.registry", "omega_cluster.wiring"),
    # the games contract's plugin table: games/registry names each built-in game's plugin,
    # the documented way in to a game package (the forbidden contract "game-packages")
    ("omega_cluster.games.registry", "omega_cluster.games.mexican_train.plugin"),
    ("omega_cluster.games.registry", "omega_cluster.games.goofspiel"),
    ("omega_cluster.games.registry", "omega_cluster.games.kuhn_poker"),
    ("omega_cluster.games.registry", "omega_cluster.games.leduc_poker"),
    ("omega_cluster.games.registry", "omega_cluster.games.openspiel"),
    # Mexican Train's released network ("omega") is the framework's network player (players/),
    # reached lazily so that the game layer imports no torch
    ("omega_cluster.games.mexican_train.release", "omega_cluster.players.network"),
}


def _layers() -> list[tuple[str, list[set[str]]]]:
    """``(container, [names of each layer, top first])`` of every layers contract."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    out = []
    for contract in config["contracts"]:
        if contract["type"] != "layers":
            continue
        layers = [
            {name.strip().strip("()") for name in re.split(r"[|:]", layer)}
            for layer in contract["layers"]
        ]
        out.extend((container, layers) for container in contract["containers"])
    return out


def _layer(module: str, container: str, layers: list[set[str]]) -> int | None:
    if not module.startswith(f"{container}."):
        return None
    top = module[len(container) + 1 :].split(".")[0]
    return next((i for i, names in enumerate(layers) if top in names), None)


def _literal_hooks() -> set[tuple[str, str]]:
    """``(holder module, hook module)`` of every ``"omega_cluster.x:attr"`` literal."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        holder = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                match = HOOK.match(node.value)
                if match:
                    found.add((holder, match[1]))
    return found


def _registered_hooks() -> set[tuple[str, str]]:
    """The player registry's entries and the games' plugin hooks, as resolved at run time."""
    from omega_cluster.games import registry as games
    from omega_cluster.games.plugin import GamePlugin
    from omega_cluster.players import registry as players

    found = set()
    for entry in players._ENTRIES.values():
        for target in entry.targets.values():
            if isinstance(target, str):
                found.add((players.__name__, target.partition(":")[0]))
    for name, path in games._PLUGINS.items():
        found.add((games.__name__, path.partition(":")[0]))
        plugin = games.game_plugin(name)
        assert isinstance(plugin, GamePlugin)
        holder = path.partition(":")[0]
        for value in dataclasses.asdict(plugin).values():
            values = value.values() if isinstance(value, dict) else [value]
            for target in values:
                if isinstance(target, str) and HOOK.match(target):
                    found.add((holder, target.partition(":")[0]))
    return found


HOOKS = sorted(_literal_hooks() | _registered_hooks())


def test_the_hooks_are_found() -> None:
    holders = {holder for holder, _ in HOOKS}
    assert {"omega_cluster.players.registry", "omega_cluster.games.registry"} <= holders
    assert len(HOOKS) >= 10


@pytest.mark.parametrize(("holder", "target"), HOOKS)
def test_a_hook_points_to_its_own_layer_or_lower(holder: str, target: str) -> None:
    importlib.import_module(target)  # the hook resolves
    for container, layers in _layers():
        low, high = _layer(holder, container, layers), _layer(target, container, layers)
        if low is None or high is None or high >= low or (holder, target) in UPWARD:
            continue
        pytest.fail(
            f"{holder} holds a lazy hook to {target}, an upward arrow in the layers of "
            f"{container} ({' > '.join('|'.join(sorted(n)) for n in layers)}); import it "
            "from above or register it at startup"
        )


def test_every_listed_upward_hook_still_exists() -> None:
    assert set(HOOKS) >= UPWARD
