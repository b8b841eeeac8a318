"""How the pipeline driver reaches its workers: the :class:`Backend` protocol and the
in-process :class:`LocalBackend`.

A backend holds one handle per worker (the self-play actors, the learner, the gatekeeper, the
model registry) and turns a method call on a handle into a future the driver waits on.
:class:`LocalBackend` runs each call at once in this process (tests, debugging, a run without
Ray); :class:`omega_cluster.cluster.backend.RayBackend` calls the same methods on Ray actors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from omega_cluster.config.schema import Settings
from omega_cluster.model.registry import ModelRegistry
from omega_cluster.pipeline.run_state import RunPaths
from omega_cluster.wiring import gate_service, learner_worker, selfplay_worker

__all__ = ["Backend", "LocalBackend"]


class Backend(Protocol):
    """How the driver reaches its workers (in this process, or Ray actors)."""

    selfplay: list[Any]  # one handle per self-play actor
    learner: Any
    gatekeeper: Any
    registry: Any  # a ModelRegistry, or a client with its interface

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> Any: ...
    def wait(self, futures: Sequence[Any], timeout: float | None) -> list[Any]: ...
    def result(self, future: Any) -> Any: ...
    def put(self, value: Any) -> Any: ...
    def shutdown(self) -> None: ...


class _Done:
    """A finished local call: its value or its exception."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        try:
            self.value, self.error = fn(), None
        except Exception as err:  # re-raised by result(): the same contract as Ray's get
            self.value, self.error = None, err


class LocalBackend:
    """The pure workers in this process: each call runs at once (no parallelism, no Ray)."""

    def __init__(self, settings: Settings, paths: RunPaths) -> None:
        n = settings.cluster.self_play_actors
        self.selfplay = [selfplay_worker(settings, actor=i, store_uri=paths.store_uri)
                         for i in range(n)]  # fmt: skip
        self.learner = learner_worker(settings, run_dir=paths.root, store_uri=paths.store_uri)
        self.gatekeeper = gate_service(settings)
        self.registry = ModelRegistry(paths.root, game=self.learner.game.spec.name)

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> _Done:
        return _Done(lambda: getattr(handle, method)(*args, **kwargs))

    def wait(self, futures: Sequence[Any], timeout: float | None) -> list[Any]:
        return list(futures)

    def result(self, future: _Done) -> Any:
        if future.error is not None:
            raise future.error
        return future.value

    def put(self, value: Any) -> Any:
        return value

    def shutdown(self) -> None:
        pass
