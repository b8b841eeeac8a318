"""The pipeline's backend over Ray actors, and starting or joining Ray.

:func:`init_ray` starts an embedded Ray in this process (``cluster.address`` null: ``make
train``) or connects to a running cluster (``auto`` or ``host:port``: ``make local-cluster``, a
multi-node cluster), then checks the configuration against the cluster's resources: a run that
asks for more self-play actors than the cluster has CPUs fails at start, naming the key. The
embedded Ray listens on 127.0.0.1 only, and a watchdog ends its processes if the driver is
killed hard (:mod:`.processes`); a Ray that does not start is one line (:class:`RayStartError`:
Ray's reason, a loaded machine, what to do), and a cluster address that does not answer fails
within seconds, naming ``cluster.address``.

Resources: each self-play actor reserves one CPU (it is busy all the time); the learner one GPU
when the cluster has one (``cluster.learner_gpus``), else nothing; bench workers, the gatekeeper
and the registry reserve nothing (they run while self-play or training waits in sync mode,
and share the cores in async mode).

:class:`RayBackend` takes an :class:`ActorPlan` — the workers' own configs and the actor counts,
built from the settings by the service layer (:func:`omega_cluster.service.ray_backend`) — so no
actor reads the run's settings.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import ray
import ray._private.ray_constants as ray_constants
from ray._private.services import canonicalize_bootstrap_address
from ray.exceptions import ActorDiedError, ActorUnavailableError, OutOfMemoryError, RayActorError

from omega_cluster.cluster.actors import (
    BenchWorkerActor,
    GatekeeperActor,
    LearnerActor,
    ModelRegistryActor,
    RegistryClient,
    SelfPlayActor,
)
from omega_cluster.cluster.processes import (
    end_new_ray_children,
    end_recorded,
    ray_children,
    record_ray_processes,
    stop_watchdogs,
)
from omega_cluster.cluster.runtime_env import run_runtime_env
from omega_cluster.config.schema import Settings
from omega_cluster.errors import UserError
from omega_cluster.eval.gatekeeper import GateServiceConfig
from omega_cluster.train.workers import LearnerWorkerConfig, SelfPlayWorkerConfig

__all__ = [
    "ADDRESS_TIMEOUT_S",
    "ActorPlan",
    "ClusterError",
    "RayBackend",
    "RayStartError",
    "check_cluster_address",
    "init_ray",
    "is_retryable",
    "learner_gpus",
    "registry_actor_name",
    "shutdown_ray",
    "start_embedded_ray",
]


LOOPBACK = "127.0.0.1"  # the embedded Ray's node IP: its servers listen on this machine only
ADDRESS_TIMEOUT_S = 5.0  # to reach a cluster address before Ray is asked to
GCS_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"  # Ray's wait for its GCS to start (s; 30)
_HEALTH_CHECK = "/grpc.health.v1.Health/Check"  # gRPC's standard health service (GCS has it)


class ClusterError(UserError, RuntimeError):
    """The configuration does not fit the cluster (names the key and what the cluster has)."""


class RayStartError(UserError, RuntimeError):
    """Ray did not start or could not be joined: Ray's reason, the likely cause, what to do."""


def is_retryable(err: BaseException) -> bool:
    """A failure the driver survives by re-running the call: the actor died or restarts,
    also when Ray's memory monitor killed it (the machine ran low on memory)."""
    return isinstance(err, (RayActorError, ActorDiedError, ActorUnavailableError, OutOfMemoryError))


def init_ray(settings: Settings, *, run_dir: Path | None = None) -> bool:
    """Start or join Ray; returns True if this process started it (and must shut it down).

    The embedded Ray listens on 127.0.0.1 only (:func:`_loopback_node`); with ``run_dir`` its
    processes are recorded there, and those an earlier driver of the run left running are
    ended first (:mod:`.processes`). A cluster address is checked within
    :data:`ADDRESS_TIMEOUT_S` before Ray tries it (:func:`check_cluster_address`).
    """
    c = settings.cluster
    started = False
    if not ray.is_initialized():
        runtime_env = run_runtime_env(settings)  # a game of your own: its module, to every worker
        if c.address is None:
            if run_dir is not None:
                end_recorded(run_dir)
            start_embedded_ray(
                run_dir=run_dir,
                num_cpus=c.num_cpus,
                include_dashboard=c.dashboard,
                dashboard_host=c.dashboard_host,
                runtime_env=runtime_env,
            )
            started = True
        else:
            check_cluster_address(c.address)
            try:
                ray.init(address=c.address, logging_level=logging.WARNING, runtime_env=runtime_env)
            except Exception as err:  # Ray's own kinds vary: RuntimeError, ConnectionError, ...
                _end_partial_start()
                raise RayStartError(
                    f"cluster.address={c.address}: could not join the Ray cluster there "
                    f"({_first_line(err)}): check that it runs (ray status) and retry, or set "
                    "cluster.address=null for an embedded Ray"
                ) from err
    check_resources(settings)
    return started


def start_embedded_ray(*, run_dir: Path | None = None, **options: Any) -> None:
    """``ray.init(**options)`` as a one-machine Ray on 127.0.0.1 (:func:`_loopback_node`),
    whose processes a watchdog ends if this process dies first (:mod:`.processes`; with
    ``run_dir``, also recorded there for the next start). Stop it with :func:`shutdown_ray`.

    A start that fails ends what Ray had started and raises :class:`RayStartError` — one line:
    Ray's own reason, the likely cause and what to do — not Ray's traceback. On a loaded machine
    (a load of 20 on 2 cores) Ray's GCS or raylet misses one of its startup deadlines (the
    raylet's 30 s is fixed; the GCS's is :data:`GCS_WAIT_ENV`, 30 s by default), and
    ``ray.init`` raises a bare ``Exception`` or ``RuntimeError``.
    """
    before = ray_children()
    try:
        with _loopback_node():
            ray.init(**{"logging_level": logging.WARNING, "log_to_driver": True,
                        **options, "_node_ip_address": LOOPBACK})  # fmt: skip
    except UserError:
        raise
    except Exception as err:  # Ray's startup failures are bare Exception, RuntimeError, ...
        _end_partial_start()
        end_new_ray_children(before)  # ray.shutdown leaves the GCS a failed start started
        raise RayStartError(
            f"the embedded Ray did not start ({_first_line(err)}); the likely cause is a loaded "
            "machine, where Ray's processes miss its startup deadlines: retry when the load is "
            "lower, run without Ray (cluster.backend=local), or give Ray's GCS more time to "
            f"start ({GCS_WAIT_ENV}=120; its default is 30 s)"
        ) from err
    record_ray_processes(run_dir)


def _first_line(err: BaseException) -> str:
    """``Kind: the first line of the message`` (at most 200 characters) of Ray's error."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def _end_partial_start() -> None:
    """Shut down what a failed ``ray.init`` had started (its GCS may run)."""
    with contextlib.suppress(Exception):
        ray.shutdown()


@contextmanager
def _loopback_node() -> Iterator[None]:
    """Start Ray as a one-machine node whose IP is 127.0.0.1.

    Every server of a Ray node (GCS, raylet, object manager, workers, dashboard agent, runtime
    env agent, metrics export) listens on all interfaces unless the node's IP is 127.0.0.1, and
    ``ray.init`` turns a 127.0.0.1 it is given into the machine's outward address — except on
    machines where Ray does not form clusters (its ``ENABLE_RAY_CLUSTER`` switch, off on macOS
    and Windows). The switch is turned off for the ``ray.init`` call only; the socket test
    (tests/integration/test_sockets.py) fails if a Ray release stops honouring it.
    """
    constants = ray_constants
    saved = constants.ENABLE_RAY_CLUSTER
    constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        constants.ENABLE_RAY_CLUSTER = saved


def check_cluster_address(address: str, *, timeout_s: float = ADDRESS_TIMEOUT_S) -> None:
    """Raise :class:`ClusterError` unless a Ray cluster answers at ``address`` within
    ``timeout_s`` (Ray itself retries an unreachable address for minutes).

    ``auto`` resolves as Ray resolves it (``RAY_ADDRESS``, the address ``ray start`` recorded, a
    GCS process of this machine). The cluster's GCS must then answer gRPC's health check: a TCP
    connection alone is not enough, since a proxy or another server may accept it.
    """
    resolved: str | None = address
    if address == "auto":
        try:
            resolved = canonicalize_bootstrap_address(address)
        except ConnectionError:
            raise ClusterError(
                "cluster.address=auto: no running Ray cluster found on this machine (RAY_ADDRESS "
                "is not set, no `ray start` recorded an address, no GCS process runs): start one "
                "(make local-cluster) or set cluster.address=host:port, or null for an embedded Ray"
            ) from None
    if resolved is None or "://" in resolved:  # a ray:// client address: Ray's own check
        return
    via = f" (resolved to {resolved})" if resolved != address else ""
    host, _, port = resolved.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"cluster.address={address!r}{via}: expected host:port, auto or null")
    problem = _gcs_health(resolved, timeout_s)
    if problem:
        raise ClusterError(
            f"cluster.address={address}{via}: {problem}: start the cluster (ray start --head) "
            "or fix the address"
        )


def _gcs_health(address: str, timeout_s: float) -> str | None:
    """None if a Ray GCS serves at ``address``, else what went wrong (one line)."""
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return None  # a TLS cluster wants its certificates: left to ray.init
    try:
        with grpc.insecure_channel(address) as channel:
            channel.unary_unary(_HEALTH_CHECK)(b"", timeout=timeout_s)
        return None
    except grpc.RpcError as err:
        code = err.code() if isinstance(err, grpc.Call) else None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return f"no Ray cluster answered within {timeout_s:g} s"
        detail = " ".join(str(err.details() if isinstance(err, grpc.Call) else err).split())
        detail = detail.split("last error: ")[-1][:200]
        if code == grpc.StatusCode.UNAVAILABLE:
            return f"no Ray cluster answers there ({detail})"
        return f"what answers there is not a Ray cluster (gRPC health check: {detail})"


def check_resources(settings: Settings) -> None:
    resources = ray.cluster_resources()
    cpus = resources.get("CPU", 0.0)
    actors = settings.cluster.self_play_actors
    if actors > cpus:
        raise ClusterError(
            f"cluster.self_play_actors={actors} is more than the cluster's {cpus:g} CPUs "
            "(each self-play actor reserves one): lower it or add nodes"
        )
    gpus = settings.cluster.learner_gpus
    if gpus and gpus > resources.get("GPU", 0.0):
        raise ClusterError(
            f"cluster.learner_gpus={gpus:g} but the cluster has {resources.get('GPU', 0.0):g} "
            "GPUs: set it to 0 (CPU/MPS learner) or null (use a GPU when there is one)"
        )


def registry_actor_name(root: Path) -> str:
    """The run's named registry actor. Named by the full path: runs on one cluster whose
    directories share a base name (a/run, b/run) must not share (get_if_exists) one registry."""
    return f"omega_cluster.registry:{root.resolve()}"


def learner_gpus(requested: float | None) -> float:
    """GPUs for the learner: ``cluster.learner_gpus``, else one when the cluster has one."""
    if requested is not None:
        return float(requested)
    return 1.0 if ray.cluster_resources().get("GPU", 0.0) >= 1 else 0.0


def shutdown_ray() -> None:
    """Stop the Ray this process started (:func:`init_ray` returned True), and its watchdog."""
    ray.shutdown()
    stop_watchdogs()


@dataclass(frozen=True)
class ActorPlan:
    """The actors of a run: each worker's own config and how many of each, and Ray's options."""

    game: str  # the registry's guard against a foreign run directory
    selfplay: SelfPlayWorkerConfig
    learner: LearnerWorkerConfig
    gate: GateServiceConfig
    self_play_actors: int = 1
    bench_workers: int = 1
    max_restarts: int = 3  # Ray: -1 restarts forever
    learner_gpus: float | None = None  # None: one when the cluster has one


class RayBackend:
    """Ray actors behind the pipeline's Backend protocol (call → ObjectRef, wait → ray.wait)."""

    def __init__(self, plan: ActorPlan, *, run_dir: Path, store_uri: str) -> None:
        restarts = plan.max_restarts
        run = str(run_dir)
        self.registry_actor = ModelRegistryActor.options(  # type: ignore[attr-defined]
            name=registry_actor_name(run_dir), num_cpus=0, max_restarts=restarts,
            max_task_retries=-1, get_if_exists=True,
        ).remote(run, plan.game)  # fmt: skip
        self.registry = RegistryClient(self.registry_actor)
        self.selfplay = [
            SelfPlayActor.options(  # type: ignore[attr-defined]
                num_cpus=1, max_restarts=restarts, max_task_retries=0,
                scheduling_strategy="SPREAD",  # over the nodes: self-play is the bulk of the work
            ).remote(plan.selfplay, i, store_uri)
            for i in range(plan.self_play_actors)
        ]  # fmt: skip
        gpus = learner_gpus(plan.learner_gpus)
        self.learner = LearnerActor.options(  # type: ignore[attr-defined]
            num_cpus=0, num_gpus=gpus, max_restarts=restarts, max_task_retries=3,
        ).remote(plan.learner, run, store_uri)  # fmt: skip
        # named, so the gatekeeper is given names (inline arguments that survive its restarts)
        bench_names = [f"omega_cluster.bench:{uuid.uuid4().hex}:{i}"
                       for i in range(max(1, plan.bench_workers))]  # fmt: skip
        self.bench_workers = [
            BenchWorkerActor.options(  # type: ignore[attr-defined]
                name=name, num_cpus=0, max_restarts=restarts, max_task_retries=3
            ).remote(plan.gate)
            for name in bench_names
        ]
        self.gatekeeper = GatekeeperActor.options(  # type: ignore[attr-defined]
            num_cpus=0, max_restarts=restarts, max_task_retries=3
        ).remote(plan.gate, bench_names)

    def call(self, handle: Any, method: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(handle, method).remote(*args, **kwargs)

    def wait(self, futures: Sequence[Any], timeout: float | None) -> list[Any]:
        ready, _ = ray.wait(list(futures), num_returns=1, timeout=timeout)
        return list(ready)

    def result(self, future: Any) -> Any:
        return ray.get(future)

    def put(self, value: Any) -> Any:
        return ray.put(value)

    def shutdown(self) -> None:
        for handle in [*self.selfplay, self.learner, *self.bench_workers, self.gatekeeper,
                       self.registry_actor]:  # fmt: skip
            ray.kill(handle, no_restart=True)
