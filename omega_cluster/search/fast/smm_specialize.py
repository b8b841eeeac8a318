"""The compiled SM-MCTS for one game's kernels: a copy of :mod:`.smm` calling them as module
globals, so numba caches it on disk and a second process starts without compiling it.

:mod:`.smm` takes the game's kernels as a tuple argument ``G`` (``G[0](ctx, S)`` is ``status``):
numba cannot cache a function whose arguments are other functions, so every process would compile
the search again (seconds per process). :func:`smm_for` writes, once per set of kernels, the
source of :mod:`.smm` with every ``G[i]`` replaced by a module global imported from the game
(``from omega_cluster.games.goofspiel._fast_kernels import status as _g_status``), named by a hash
of that text and of the source files it compiles (as :mod:`.specialize` does for the turn-based
tree, whose loader and cache directory it shares). The copy keeps the ``G`` parameter: the driver
passes an empty tuple.
"""

from __future__ import annotations

import inspect
import re
from types import ModuleType
from typing import Any

from omega_cluster.search import _ismcts_jit
from omega_cluster.search.fast import smm as _template
from omega_cluster.search.fast.specialize import _files, _load, _origin

__all__ = ["smm_for"]

_BY_KERNELS: dict[tuple[Any, ...], ModuleType] = {}
_CALL = re.compile(r"\bG\[(\d+)\]")


def _source(kernels: tuple[Any, ...]) -> str:
    import hashlib
    import sys
    from pathlib import Path

    names = [f"_g_{name}" for name in _template.KERNELS]
    files: set[str] = set()
    for module in (_template, _ismcts_jit, *(sys.modules[k.py_func.__module__] for k in kernels)):
        files |= _files(module)
    digest = hashlib.sha1()
    for path in sorted(files):
        digest.update(Path(path).read_bytes())
    header = "\n".join(_origin(n, k) for n, k in zip(names, kernels, strict=True))
    body = _CALL.sub(lambda m: names[int(m.group(1))], inspect.getsource(_template))
    future = "from __future__ import annotations\n"
    head, tail = body.split(future, 1)
    stamp = f"# sources: {digest.hexdigest()}\n"
    return head + future + stamp + header + "  # noqa\n" + tail


def smm_for(fast: Any) -> tuple[ModuleType, tuple[Any, ...]]:
    """The compiled SM-MCTS module for ``fast``'s kernels and the ``G`` to pass its functions:
    the specialized copy and ``()``, or :mod:`.smm` itself and the kernels where a kernel is not
    a module-level numba function (it then compiles in every process)."""
    kernels = tuple(getattr(fast, name) for name in _template.KERNELS)
    module = _BY_KERNELS.get(kernels)
    if module is None:
        try:
            module = _load(_source(kernels))
        except (ValueError, AttributeError, KeyError):
            return _template, kernels
        _BY_KERNELS[kernels] = module
    return module, ()
