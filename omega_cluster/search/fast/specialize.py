"""The compiled tree for one game's kernels: a copy of :mod:`.tree` whose game-kernel globals are
imports of that game's functions, compiled and cached by numba like any module.

Numba caches a function on disk only when everything it calls is fixed at compile time; passed as
arguments, the game's kernels would make every process compile the tree again (seconds). So the
tree calls them as module globals, and :func:`tree_for` writes, once per set of kernels, a module
file whose header imports them (``from omega_cluster.games.kuhn_poker.fast import apply as
apply``) followed by the tree's own source, named by a hash of both and of the source files the
compiled code depends on (:func:`_fingerprint`): numba checks only a function's own file before
reusing its cache, so a changed kernel must make a new file. The files live in ``~/.cache/omega_cluster/fast_tree``
(numba's cache of them in its ``__pycache__``), or the temporary directory when that is not
writable.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from omega_cluster.search.fast import nodes as _nodes
from omega_cluster.search.fast import tree as _template

__all__ = ["KERNELS", "tree_for"]

KERNELS = ("current", "legal", "apply", "returns", "info_key", "sample_world", "chance",
           "rollout", "encode", "hidden")  # fmt: skip
_BEGIN, _END = "# -- game kernels", "# -- end of game kernels"
_LOADED: dict[str, ModuleType] = {}  # by source digest
_BY_KERNELS: dict[tuple[Any, ...], ModuleType] = {}  # by the kernels themselves (no re-hash)


def _origin(name: str, fn: Any) -> str:
    """``from <module> import <function> as <name>`` for a top-level numba function."""
    py = getattr(fn, "py_func", None)
    if py is None or "<locals>" in py.__qualname__ or "." in py.__qualname__:
        raise ValueError(
            f"fast search: kernel {name!r} must be a module-level numba @njit function, got {fn!r}"
        )
    return f"from {py.__module__} import {py.__qualname__} as {name}"


def _directory() -> Path:
    home = Path.home() / ".cache" / "omega_cluster" / "fast_tree"
    for candidate in (home, Path(tempfile.gettempdir()) / f"omega_cluster_fast_tree_{os.getuid()}"):
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise OSError("fast search: no writable directory for the compiled tree")


def _files(module: ModuleType) -> set[str]:
    """The module's file and those of the modules its numba functions and intrinsics come from
    (one level: the helpers a kernel calls)."""
    files = {getattr(module, "__file__", None)}
    for value in vars(module).values():
        py = getattr(value, "py_func", None) or getattr(value, "_defn", None)
        if py is not None:
            files.add(getattr(sys.modules.get(py.__module__), "__file__", None))
    return {f for f in files if f}


def _fingerprint(kernels: dict[str, Any]) -> str:
    """A hash of the sources the specialized tree compiles: the tree's modules and the kernels'."""
    files: set[str] = set()
    for module in (
        _template,
        _nodes,
        *(sys.modules[k.py_func.__module__] for k in kernels.values()),
    ):
        files |= _files(module)
    digest = hashlib.sha1()
    for name in sorted(files):
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()


def _source(kernels: dict[str, Any]) -> str:
    template = inspect.getsource(_template)
    begin, end = template.index(_BEGIN), template.index(_END)
    end = template.index("\n", end) + 1
    header = "\n".join(_origin(name, kernels[name]) for name in KERNELS)
    stamp = f"# sources: {_fingerprint(kernels)}\n"
    return template[:begin] + stamp + header + "  # noqa\n" + template[end:]


def tree_for(kernels: dict[str, Any]) -> ModuleType:
    """The compiled tree module calling ``kernels`` (name -> numba function, :data:`KERNELS`)."""
    key = tuple(kernels[name] for name in KERNELS)
    known = _BY_KERNELS.get(key)
    if known is not None:
        return known
    module = _load(_source(kernels))
    _BY_KERNELS[key] = module
    return module


def _load(source: str) -> ModuleType:
    """The module of ``source``, written once under its digest and imported."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    module = _LOADED.get(digest)
    if module is not None:
        return module
    name = f"omega_cluster_fast_tree_{digest}"
    path = _directory() / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        scratch = path.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(source)
        os.replace(scratch, path)  # atomic: concurrent processes write the same text
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _LOADED[digest] = module
    return module
