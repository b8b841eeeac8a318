"""The released Mexican Train network as the player ``omega``: the network alone (no search)
from the repository's ``models/mexican_train`` (written by ``omega-cluster release``).

    omega-cluster release run=<run dir> out=models/mexican_train
    omega-cluster arena game=mexican_train seats=omega,commander games=200

Where the release lives is this game's knowledge, so it is here, beside the plugin that names the
player; ``omega:<dir>`` seats a release from another folder. The network player itself is the
framework's (``network:<dir>``, :mod:`omega_cluster.players.network`), reached through a lazy
``"module:attribute"`` hook as every plugin hook is, so the game layer imports no torch.
"""

from __future__ import annotations

from pathlib import Path

from omega_cluster.games.api import Game
from omega_cluster.games.errors import GameError
from omega_cluster.games.player import Player
from omega_cluster.games.plugin import resolve

__all__ = ["RELEASE_DIR", "ReleaseMissingError", "omega", "released_model_dir"]

# the repository's root is three folders above this package: omega_cluster/games/mexican_train
RELEASE_DIR = Path(__file__).resolve().parents[3] / "models" / "mexican_train"
_NETWORK_PLAYER = "omega_cluster.players.network:network_player"


class ReleaseMissingError(GameError, FileNotFoundError):
    """No released network where ``omega`` looks for one."""


def released_model_dir(directory: str | Path | None = None) -> Path:
    """The release folder ``omega`` seats (``directory``, else the repository's
    ``models/mexican_train``); a missing one is one line saying how to make it."""
    path = RELEASE_DIR if directory is None else Path(directory)
    if not (path / "metadata.json").is_file():
        raise ReleaseMissingError(
            f"omega: no released Mexican Train network at {path}; make it with "
            f"`omega-cluster release run=<run dir> out={path}`"
        )
    return path


def omega(game: Game, directory: str | None = None) -> Player:
    """The released network playing ``game`` alone, greedily (module docstring)."""
    path = released_model_dir(directory)
    player: Player = resolve(_NETWORK_PLAYER)(game, str(path))
    player.name = "omega" if directory is None else f"omega:{path}"
    return player


omega.spec_args = ("directory",)  # type: ignore[attr-defined]  # omega:<dir> (players.registry)
