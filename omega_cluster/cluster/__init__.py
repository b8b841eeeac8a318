"""Ray wiring — the only package that imports ray.

* :mod:`.actors` — thin Ray actors over the pure workers: ``SelfPlayActor``, ``LearnerActor``,
  ``BenchWorkerActor``, ``GatekeeperActor`` (fans bench tasks out over the bench workers) and the
  named ``ModelRegistryActor``;
* :mod:`.backend` — :class:`RayBackend`, the pipeline's :class:`~omega_cluster.pipeline.driver.
  Backend` over those actors, and :func:`init_ray` (embedded or connecting to a cluster);
* :mod:`.processes` — the embedded Ray's processes, ended by a watchdog once their driver has
  ended, however it ended (and, if the watchdog was killed too, by the next start of the run).
"""

from omega_cluster.cluster.backend import (
    ActorPlan,
    RayBackend,
    check_cluster_address,
    init_ray,
    is_retryable,
    shutdown_ray,
)

__all__ = [
    "ActorPlan",
    "RayBackend",
    "check_cluster_address",
    "init_ray",
    "is_retryable",
    "shutdown_ray",
]
