"""Game-specific counts of a finished game, per seat: the arena's and the bench's counts hooks.

A counts hook (:data:`omega_cluster.eval.arena.CountsHook`) maps a terminal state to named
per-seat figures; the arena stores them on each :class:`~omega_cluster.eval.arena.GameRecord` and
the slice breakdown of :mod:`omega_cluster.eval.matches` averages them per slice. A game gives
its hook through the ``report_counts`` field of its plugin
(:class:`~omega_cluster.games.plugin.GamePlugin`), so the counts follow the game wherever it is
played; :func:`counts_hook` returns ``None`` for a game without one.
"""

from __future__ import annotations

from omega_cluster.eval.arena import CountsHook
from omega_cluster.games.api import Game
from omega_cluster.games.registry import game_plugin

__all__ = ["counts_hook"]


def counts_hook(game: Game) -> CountsHook | None:
    """The counts hook of ``game`` (its plugin's ``report_counts``), or ``None`` if it has none."""
    factory = game_plugin(game).hook("report_counts")
    if factory is None:
        return None
    hook: CountsHook = factory(game)
    return hook
