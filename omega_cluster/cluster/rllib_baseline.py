"""The RLlib PPO baseline: self-play against a league of frozen snapshots, within a wall-clock limit.

The policy ``main`` learns; ``league_0 .. league_{K-1}`` are frozen copies of it (RLlib never
trains them). Every episode puts ``main`` at one seat and a league member at each other seat,
chosen from the episode id (:func:`league_mapping`, RLlib's multi-agent policy mapping), so
``main`` always plays past versions of itself, never only its current self. At the start every
slot holds the initial ``main``; every ``snapshot_every`` iterations the oldest slot is replaced
by the current ``main`` (round robin), in the learner's modules (which the env runners are
synced to after every iteration; the learner trains ``main`` only) and each env runner's.

The limit (``minutes``, counted from ``started``: the command's start, so Ray's start and RLlib's
build count too) is kept at two points. Between iterations, the next one is not started when the
last one took longer than the time left. During one, an alarm (``SIGALRM``, in the main thread
only: a signal handler runs nowhere else) stops it at the limit; ``main`` then goes back to its
weights after the last whole iteration, which are the ones saved. A run whose limit came before
any iteration ended saves nothing (:attr:`LeagueResult.iterations` 0). Only the saving of the
checkpoint and the policy comes after the limit. :attr:`LeagueResult.stopped` says which way it
stopped.

Only this package imports ray; the PPO and environment settings are
:func:`~omega_cluster.cluster.rllib_env.ppo_config`'s.
"""

from __future__ import annotations

import json
import signal
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import ray
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from safetensors.numpy import save_file

from omega_cluster.cluster.backend import shutdown_ray, start_embedded_ray
from omega_cluster.cluster.rllib_env import MAIN_POLICY, masking_module_spec, ppo_config
from omega_cluster.interop.table import build_game, seat_of
from omega_cluster.players.rllib import POLICY_FORMAT, POLICY_META, POLICY_WEIGHTS

__all__ = [
    "LeagueResult",
    "WallClockLimit",
    "embedded_ray",
    "export_policy",
    "iterate",
    "league_mapping",
    "league_slots",
    "train_league",
]


def league_slots(size: int) -> list[str]:
    return [f"league_{k}" for k in range(size)]


def league_mapping(num_players: int, size: int) -> Callable[..., str]:
    """RLlib's policy mapping of one episode: ``main`` at the seat the episode id picks, a
    league slot (also from the episode id, per seat) everywhere else; stable within an episode
    (the same agent always gets the same module) and the same in every process (crc32, not
    Python's salted ``hash``)."""
    slots = league_slots(size)

    def mapping(agent_id: Any, episode: Any, **kwargs: Any) -> str:
        key = str(episode.id_).encode()
        seat = seat_of(str(agent_id))
        if seat == zlib.crc32(key) % num_players:
            return MAIN_POLICY
        return slots[zlib.crc32(key + b"/" + bytes([seat])) % size]

    return mapping


@dataclass
class LeagueResult:
    """What one baseline run did: its iterations, the snapshots taken, the last metrics and
    where the final checkpoint is."""

    iterations: int = 0
    snapshots: int = 0
    checkpoint: Path | None = None  # None: no iteration ended within the limit, nothing saved
    policy: Path | None = None  # main's policy for the arena: the spec rllib:<policy>
    metrics: list[dict[str, float]] = field(default_factory=list)
    stopped: str = ""  # why the training stopped (module docstring)


class WallClockLimit(BaseException):
    """The limit came during an iteration (raised by the alarm). A ``BaseException``, as
    ``KeyboardInterrupt``, so that no ``except Exception`` inside RLlib swallows it."""


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    """Raise :class:`WallClockLimit` in this thread after ``seconds``, if it is the main thread
    (elsewhere, only the check between iterations keeps the limit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]

    def ring(signum: int, frame: Any) -> None:
        if armed[0]:
            raise WallClockLimit

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


def _main_weights(algo: Algorithm) -> Any:
    learners = algo.learner_group
    assert learners is not None, "a built PPO algorithm has a learner group"
    return learners.get_weights([MAIN_POLICY])[MAIN_POLICY]


def _put(algo: Algorithm, slot: str, weights: Mapping[str, Any]) -> None:
    """``weights`` into ``slot``: in the learner (the env runners are synced from its modules
    after every iteration, frozen ones included) and in every env runner now."""
    learners, runners = algo.learner_group, algo.env_runner_group
    assert learners is not None and runners is not None, "a built PPO algorithm has both"
    learners.set_weights({slot: weights})
    runners.foreach_env_runner(lambda runner: _set_module(runner, slot, weights))


def _snapshot(algo: Algorithm, slot: str) -> None:
    """Copy the learner's ``main`` into ``slot``."""
    _put(algo, slot, _main_weights(algo))


def _set_module(runner: Any, slot: str, weights: Mapping[str, Any]) -> None:
    runner.module[slot].set_state(weights)  # a multi-agent env runner's MultiRLModule


def _summary(result: Mapping[str, Any]) -> dict[str, float]:
    runners, learner = result["env_runners"], result["learners"][MAIN_POLICY]
    returns = runners.get("module_episode_returns_mean", {})
    main = returns.get(MAIN_POLICY, float("nan"))
    return {
        "iteration": float(result["training_iteration"]),
        "env_steps": float(runners["num_env_steps_sampled_lifetime"]),
        "episodes": float(runners["num_episodes"]),
        "main_return_mean": float(main),
        "modules_played": float(len(returns)),  # main and the league slots seen this iteration
        "total_loss": float(learner["total_loss"]),
        "entropy": float(learner["entropy"]),
    }


def train_league(
    game: str,
    params: Mapping[str, Any] | None,
    *,
    minutes: float,
    out: Path,
    league: int = 4,
    snapshot_every: int = 5,
    max_iterations: int | None = None,
    started: float | None = None,
    on_built: Callable[[], None] | None = None,
    on_iteration: Callable[[dict[str, float]], None] | None = None,
    **ppo: Any,
) -> LeagueResult:
    """Train ``main`` by PPO against the league within ``minutes`` from ``started`` (a
    ``time.monotonic()``; default: now), or for ``max_iterations``, then save the algorithm's
    checkpoint and ``main``'s policy under ``out`` (module docstring). ``ppo`` goes to
    :func:`ppo_config` (batch sizes, epochs, env runners, seed). Ray must be running."""
    origin = time.monotonic() if started is None else started
    deadline = origin + minutes * 60.0
    config = ppo_config(game, params, **ppo)
    built = build_game(game, params)
    num_players = built.num_players
    slots = league_slots(league)
    specs = {MAIN_POLICY: masking_module_spec(), **{s: masking_module_spec() for s in slots}}
    config.multi_agent(
        policies={MAIN_POLICY, *slots},
        policy_mapping_fn=league_mapping(num_players, league),
        policies_to_train=[MAIN_POLICY],
    ).rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    algo = config.build_algo()
    if on_built is not None:
        on_built()
    result = LeagueResult()
    try:
        for slot in slots:
            _snapshot(algo, slot)
        kept, last = _main_weights(algo), 0.0
        while True:
            result.stopped = _stop_before(result.iterations, max_iterations, deadline, last,
                                          time.monotonic() - origin)  # fmt: skip
            if result.stopped:
                break
            begun = time.monotonic()
            raw = iterate(algo, deadline, kept)
            if raw is None:
                into = time.monotonic() - begun
                done = result.iterations
                result.stopped = (
                    f"the limit came {into:.0f} s into iteration {done + 1} and stopped it; "
                    + (f"iteration {done} is kept" if done else "nothing was trained")
                )
                break
            last = time.monotonic() - begun
            summary = {**_summary(raw), "seconds": last}
            result.iterations += 1
            result.metrics.append(summary)
            if on_iteration is not None:
                on_iteration(summary)
            if result.iterations % snapshot_every == 0:
                _snapshot(algo, slots[result.snapshots % league])
                result.snapshots += 1
            kept = _main_weights(algo)
        if result.iterations:
            out.mkdir(parents=True, exist_ok=True)
            result.checkpoint = Path(algo.save_to_path(str(out / "checkpoint")))
            result.policy = export_policy(algo, out / "policy", game, dict(built.params))
    finally:
        algo.stop()
    return result


def iterate(algo: Algorithm, deadline: float, kept: Mapping[str, Any]) -> Any:
    """One PPO iteration, stopped if ``deadline`` (a ``time.monotonic()``) comes during it:
    then ``main`` goes back to ``kept`` (its weights after the last whole iteration) and the
    result is ``None``; else RLlib's result of the iteration."""
    try:
        with _alarm(deadline - time.monotonic()):
            return algo.train()
    except WallClockLimit:
        _put(algo, MAIN_POLICY, kept)
        return None


def _stop_before(done: int, most: int | None, deadline: float, last: float, elapsed: float) -> str:
    """Why not to start iteration ``done + 1`` ("" to start it)."""
    if done == most:
        return f"{done} iterations, as asked"
    left = deadline - time.monotonic()
    if left <= 0:
        if not done:
            return (
                f"the limit passed while Ray and RLlib started ({elapsed:.0f} s); nothing trained"
            )
        return f"the limit is reached after iteration {done}"
    if last > left:
        return (
            f"after iteration {done}, the next would end past the limit (the last took "
            f"{last:.0f} s, {left:.0f} s were left)"
        )
    return ""


@contextmanager
def embedded_ray(num_cpus: int) -> Iterator[None]:
    """The Ray this process already joined, else an embedded one on 127.0.0.1 (as the
    service's), shut down on leaving."""
    if ray.is_initialized():
        yield
        return
    start_embedded_ray(num_cpus=num_cpus, include_dashboard=False)
    try:
        yield
    finally:
        shutdown_ray()


def export_policy(algo: Algorithm, directory: Path, game: str, params: Mapping[str, Any]) -> Path:
    """Write ``main``'s policy (the actor's layers, no value head) as a player of this project
    reads it (:class:`omega_cluster.players.rllib.RLlibPolicyPlayer`, spec ``rllib:<dir>``):
    ``policy.safetensors`` and ``policy.json`` (game, parameters, the layers in order with their
    activations). Walks the module's own torch layers, so a change of RLlib's default sizes or
    activations is exported as it is."""
    import torch

    module = algo.get_module(MAIN_POLICY)
    assert module is not None, "the algorithm has a main module"
    layers: list[dict[str, str]] = []
    tensors: dict[str, np.ndarray] = {}
    stacks = (module.encoder.actor_encoder.net.mlp, module.pi.net.mlp)  # type: ignore[attr-defined]
    for stack in stacks:
        for part in stack:
            if isinstance(part, torch.nn.Linear):
                name = f"layer{len(layers)}"
                tensors[f"{name}.weight"] = part.weight.detach().cpu().numpy().astype(np.float32)
                tensors[f"{name}.bias"] = part.bias.detach().cpu().numpy().astype(np.float32)
                layers.append({"name": name, "activation": "linear"})
            elif layers:
                layers[-1]["activation"] = type(part).__name__.lower()
    directory.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(directory / POLICY_WEIGHTS))
    meta = {"format": POLICY_FORMAT, "version": 1, "game": game, "params": dict(params),
            "layers": layers}  # fmt: skip
    (directory / POLICY_META).write_text(json.dumps(meta, indent=2, default=str))
    return directory
