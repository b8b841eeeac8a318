"""The one base class of the errors a user can cause or fix: :class:`UserError`.

An expected failure — bad input (a config key, a player spec, a move), a file that is missing or
corrupt, a server that does not answer, a cluster too small — raises a subclass of
:class:`UserError` whose message names the problem and what to do. Every command of the CLI
catches it, prints the message on one line and exits with status 2; anything else is a bug and
shows its traceback. A Ctrl-C is no error, but keeps the rule: one line, status 130
(:func:`exit_on_interrupt` while a command imports). Each layer keeps its own subclass
(``ConfigError``, ``CheckpointError``, ``GameError``, ...), usually also a builtin kind
(``ValueError``, ``RuntimeError``) so callers that catch those keep working.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

__all__ = ["INTERRUPTED", "UserError", "exit_interrupted", "exit_on_interrupt", "one_line"]


class UserError(Exception):
    """An expected error: the message is for the user (module docstring)."""


def one_line(err: BaseException) -> str:
    """The error's message on one line (whitespace runs collapsed), or its type's name."""
    return " ".join(str(err).split()) or type(err).__name__


INTERRUPTED = 130  # the exit status after a Ctrl-C: 128 + SIGINT, as a shell reports it


@contextmanager
def exit_on_interrupt(prog: str) -> Iterator[None]:
    """A Ctrl-C (SIGINT) in the block ends the process at once: ``<prog>: interrupted`` on
    stderr, status :data:`INTERRUPTED`, no traceback.

    For the imports of a command (torch, Ray, MLflow take seconds): they leave nothing to undo,
    and a ``KeyboardInterrupt`` raised in them can be swallowed by an import that catches
    everything, so that the command would run on. Outside the main thread (where signals cannot
    be handled) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: exit_interrupted(prog))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def exit_interrupted(prog: str) -> NoReturn:
    """End the process now: ``<prog>: interrupted`` on stderr, status :data:`INTERRUPTED`."""
    os.write(2, f"{prog}: interrupted\n".encode())
    os._exit(INTERRUPTED)
