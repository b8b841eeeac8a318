"""Shared fixtures: the example game of the README, loaded from examples/."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module (examples are not part of the package)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def blind_war() -> ModuleType:
    return load_example("blind_war")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep ``--dist loadgroup`` grouping on pytest >= 9.2 (``make test``: the modules that start
    a Ray share one xdist worker, one Ray at a time).

    xdist 3.8 tells its scheduler an item's group by appending ``@<group>`` to ``item._nodeid``;
    pytest 9.2 keeps node ids in ``item._id`` (a ``NodeId``), so that edit is lost and grouped
    tests are silently spread over the workers (pytest-dev/pytest-xdist#1386, fix pending in
    #1388). This does the same edit on ``_id``; a no-op where xdist's own edit took effect.
    """
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:  # pytest < 9.2: xdist's own edit works
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = sorted(
            {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
        )
        suffix = f"@{'_'.join(names)}"
        if names and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            item._id = NodeId.parse(item.nodeid + suffix)
