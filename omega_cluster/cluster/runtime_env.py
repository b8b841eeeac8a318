"""The Ray runtime environment a run's workers need: the user's game module, shipped to them.

A run of a game of your own (``game.name=<module>:<Class>``) imports ``<module>`` in every actor.
On the driver's machine the module is found on ``PYTHONPATH``; on other nodes (a multi-node
cluster, a ``ray job submit`` job) it may not exist at all. So the run hands Ray the module's
top-level package (or single file) as a ``py_modules`` entry: Ray uploads it once and puts it on
every worker's ``sys.path`` before the actor is built. Nothing is shipped for the built-in games,
OpenSpiel games, or a module installed in site-packages (every node installs it as it installs
omega_cluster). A job whose own runtime env already lists ``py_modules`` keeps its own (Ray
refuses to merge two), on the assumption that it ships the game itself.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from omega_cluster.config.schema import Settings
from omega_cluster.games.registry import is_import_path

__all__ = ["game_module_path", "run_runtime_env"]

# set by Ray's job supervisor for a submitted job's driver: the job's runtime env
_JOB_CONFIG_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"


def game_module_path(game_name: str) -> Path | None:
    """The directory (package) or ``.py`` file to ship for ``game_name`` (None: nothing)."""
    if not is_import_path(game_name):
        return None
    top = game_name.partition(":")[0].split(".")[0]
    if top == "omega_cluster":
        return None
    spec = importlib.util.find_spec(top)
    if spec is None:
        return None  # config validation has already said that it does not import
    if spec.submodule_search_locations:
        locations = list(spec.submodule_search_locations)
        path = Path(locations[0]) if len(locations) == 1 else None  # a namespace package: no
    else:
        path = Path(spec.origin) if spec.origin and spec.origin.endswith(".py") else None
    if path is None or "site-packages" in path.parts or "dist-packages" in path.parts:
        return None
    return path.resolve()


def run_runtime_env(settings: Settings) -> dict[str, Any] | None:
    """The ``runtime_env`` for ``ray.init`` of this run (None: Ray's default)."""
    path = game_module_path(settings.game.name)
    if path is None:
        return None
    job = json.loads(os.environ.get(_JOB_CONFIG_ENV) or "{}")
    if (job.get("runtime_env") or {}).get("py_modules"):
        return None
    return {"py_modules": [str(path)]}
