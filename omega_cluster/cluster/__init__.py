"""Ray wiring — the only package that imports ray.

* :mod:`.actors` — thin Ray actors over the pure workers: ``SelfPlayActor``, ``LearnerActor``,
  ``BenchWorkerActor``, ``GatekeeperActor`` (fans bench tasks out over the bench workers) and the
  named ``ModelRegistryActor``;
* :mod:`.backend` — :class:`RayBackend`, the pipeline's :class:`~omega_cluster.pipeline.driver.
  Backend` over those actors, and :func:`init_ray` (embedded or connecting to a cluster);
* :mod:`.processes` — the embedded Ray's processes, recorded in the run directory and ended on
  the next start if a killed driver left them running.
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
