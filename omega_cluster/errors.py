"""The one base class of the errors a user can cause or fix: :class:`UserError`.

An expected failure — bad input (a config key, a player spec, a move), a file that is missing or
corrupt, a server that does not answer, a cluster too small — raises a subclass of
:class:`UserError` whose message names the problem and what to do. Every command of the CLI
catches it, prints the message on one line and exits with status 2; anything else is a bug and
shows its traceback. Each layer keeps its own subclass (``ConfigError``, ``CheckpointError``,
``GameError``, ...), usually also a builtin kind (``ValueError``, ``RuntimeError``) so callers
that catch those keep working.
"""

from __future__ import annotations

__all__ = ["UserError", "one_line"]


class UserError(Exception):
    """An expected error: the message is for the user (module docstring)."""


def one_line(err: BaseException) -> str:
    """The error's message on one line (whitespace runs collapsed), or its type's name."""
    return " ".join(str(err).split()) or type(err).__name__
