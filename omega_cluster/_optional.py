"""Optional dependencies, asked for once: the compiled paths need numba (the ``fast`` extra)."""

from __future__ import annotations

import functools
import importlib.util

__all__ = ["numba_available"]


@functools.cache
def numba_available() -> bool:
    """numba is installed (it is optional: every compiled path has a pure-Python twin)."""
    return importlib.util.find_spec("numba") is not None
