"""The one error type of the configuration layer.

:func:`omega_cluster.config.load.load_settings` turns Hydra's and OmegaConf's exceptions into it,
and :func:`omega_cluster.config.load.validate` raises it for values outside their allowed sets.
Every problem names the full key (``search.selection``) and what is allowed, so a bad run stops at
start with a message the user can act on.
"""

from __future__ import annotations

from collections.abc import Iterable

from omega_cluster.errors import UserError

__all__ = ["ConfigError"]


class ConfigError(UserError, ValueError):
    """A configuration that cannot run: an unknown key, group option or game, a value of the
    wrong type or outside its allowed set. ``problems`` holds one line per problem."""

    def __init__(self, problems: str | Iterable[str]) -> None:
        self.problems: tuple[str, ...] = (
            (problems,) if isinstance(problems, str) else tuple(problems)
        )
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            lines = "\n".join(f"  - {p}" for p in self.problems)
            message = f"{len(self.problems)} problems in the configuration:\n{lines}"
        super().__init__(message)
