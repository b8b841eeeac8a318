"""The CMA-ES loop (the ``cma`` package; Hansen & Ostermeier 2001), its JSON log and resume, and
the preset it writes.

Each generation: CMA-ES asks for ``population`` candidates (normalised coordinates, inside the
mapped bounds), every candidate plays the generation's jobs (:mod:`.jobs`) through the caller's
``map``, CMA-ES is told the negated fitnesses (it minimises), and the generation's best joins the
pool. The finished generation — candidates, fitnesses, sigma, pool — is appended to
``tuning.json`` in the out directory (written whole, then renamed, so a crash leaves the last
complete log). A run started again on the same out directory rebuilds CMA-ES with the same seed
and replays ask/tell with the logged fitnesses (checking that it asks for exactly the logged
candidates), then goes on; nothing is pickled. CMA-ES draws its normal samples from a generator
of its own, so nothing the games do with numpy's global random state changes its candidates.

The result, ``preset.json``: the final distribution mean (the search's estimate of the best
weights, less noisy than one generation's winner) with its provenance.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from omega_cluster.eval.tuning.jobs import (
    DEAL_SEEDS_RULE,
    Map,
    fitnesses,
    generation_jobs,
    in_process,
    play_job,
    update_pool,
)
from omega_cluster.eval.tuning.specs import TuneError, TuneTarget, job_context

__all__ = [
    "LOG_FILE",
    "PRESET_FILE",
    "Generation",
    "TuneConfig",
    "Tuner",
    "load_preset",
]

LOG_FILE = "tuning.json"
PRESET_FILE = "preset.json"
LOG_VERSION = 1


@dataclass(frozen=True)
class TuneConfig:
    """One tuning run. ``pool``: the snapshots played against (the defaults + the latest
    ``pool − 1`` generation bests); ``sigma``: CMA-ES's first step in normalised units."""

    game: str
    params: Mapping[str, Any]
    target: str
    generations: int = 15
    population: int = 12
    deals: int = 200
    pool: int = 5
    seed: int = 1
    sigma: float = 0.3

    def __post_init__(self) -> None:
        for key in ("generations", "population", "deals", "pool", "seed"):
            value = getattr(self, key)
            least = 0 if key == "seed" else (2 if key == "population" else 1)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise TuneError(f"{key}={value!r} must be an int >= {least}")
        if not self.sigma > 0:
            raise TuneError(f"sigma={self.sigma!r} must be > 0")

    def items(self) -> tuple[tuple[str, Any], ...]:
        return tuple(
            sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in self.params.items())
        )

    def as_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "params": dict(self.params)}


@dataclass(frozen=True)
class Generation:
    """A finished generation as logged."""

    index: int
    z: tuple[tuple[float, ...], ...]  # the candidates in normalised coordinates (as asked)
    weights: tuple[tuple[float, ...], ...]  # ... and as weights (spec order)
    fitness: tuple[float, ...]
    sigma: float  # CMA-ES's step size after this generation's tell
    pool: tuple[tuple[float, ...], ...]  # the pool the candidates played against
    seconds: float

    @property
    def best(self) -> int:
        return int(np.argmax(self.fitness))

    def summary(self) -> dict[str, float]:
        return {
            "best_fitness": max(self.fitness),
            "mean_fitness": statistics.fmean(self.fitness),
            "median_fitness": statistics.median(self.fitness),
            "sigma": self.sigma,
            "pool_size": float(len(self.pool)),
            "seconds": self.seconds,
        }

    def as_json(self) -> dict[str, Any]:
        return {k: _listed(v) for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Generation:
        tup = lambda rows: tuple(tuple(float(x) for x in r) for r in rows)  # noqa: E731
        return cls(
            int(data["index"]), tup(data["z"]), tup(data["weights"]),
            tuple(float(f) for f in data["fitness"]), float(data["sigma"]), tup(data["pool"]),
            float(data["seconds"]),
        )  # fmt: skip


def _listed(value: Any) -> Any:
    return [_listed(v) for v in value] if isinstance(value, tuple | list) else value


@dataclass
class Tuner:
    """A tuning run in ``out`` (module doc): :meth:`run` plays the generations still to play."""

    config: TuneConfig
    out: Path
    map: Map = in_process
    command: str = ""
    run_id: str = ""  # the MLflow run that logs this tuning (kept in the log for resume)
    history: list[Generation] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.out = Path(self.out)
        self.game, self.target = job_context(
            self.config.game, self.config.items(), self.config.target
        )
        self._es = self._strategy()
        self.pool: list[tuple[float, ...]] = [self.target.defaults()]
        logged = self._read_log()
        for generation in logged:
            self._replay(generation)

    # -- the strategy --------------------------------------------------------------------------

    def _strategy(self) -> Any:
        import cma  # the optimiser of this module only

        specs = self.target.specs
        gen = np.random.default_rng(self.config.seed)
        options = {
            "popsize": self.config.population,
            "seed": self.config.seed + 1,  # cma reads 0 as "from the clock"
            "bounds": [[s.bounds[0] for s in specs], [s.bounds[1] for s in specs]],
            "randn": lambda *shape: gen.standard_normal(shape),
            "verbose": -9,
            "verb_log": 0,
            "verb_disp": 0,
            "tolfun": 0.0,  # a fixed budget of generations: no early stop on flat fitness
            "tolflatfitness": 10**9,
        }
        return cma.CMAEvolutionStrategy([0.0] * len(specs), self.config.sigma, options)

    @property
    def sigma(self) -> float:
        return float(self._es.sigma)

    def mean_weights(self) -> tuple[float, ...]:
        """The distribution mean as weights: the search's current estimate of the best."""
        return self.target.values(list(self._es.result.xfavorite))

    def _ask(self) -> list[tuple[float, ...]]:
        return [tuple(float(x) for x in z) for z in self._es.ask()]

    def _tell(self, z: Sequence[Sequence[float]], fitness: Sequence[float]) -> None:
        self._es.tell([np.array(x) for x in z], [-f for f in fitness])

    # -- the loop ------------------------------------------------------------------------------

    def run(self, on_generation: Callable[[Generation], None] | None = None) -> list[Generation]:
        """Play the generations still to play (``on_generation`` after each); returns them."""
        done = []
        cfg = self.config
        while len(self.history) < cfg.generations:
            started = time.perf_counter()
            index = len(self.history)
            z = self._ask()
            weights = [self.target.values(x) for x in z]
            jobs = generation_jobs(
                cfg.game, cfg.items(), cfg.target, players=self.game.num_players,
                candidates=weights, pool=self.pool, generation=index, seed=cfg.seed,
                deals=cfg.deals,
            )  # fmt: skip
            fitness = fitnesses(jobs, list(self.map(play_job, jobs)), len(z))
            self._tell(z, fitness)
            generation = Generation(
                index, tuple(z), tuple(weights), tuple(fitness), self.sigma, tuple(self.pool),
                time.perf_counter() - started,
            )  # fmt: skip
            self.history.append(generation)
            self.pool = update_pool(self.pool, weights[generation.best], cfg.pool)
            self._write_log()
            done.append(generation)
            if on_generation is not None:
                on_generation(generation)
        return done

    def _replay(self, generation: Generation) -> None:
        """One logged generation told again: the strategy must ask for the logged candidates."""
        z = self._ask()
        if len(z) != len(generation.z) or any(
            a != b for a, b in zip(z, generation.z, strict=False)
        ):
            raise TuneError(
                f"{self.out / LOG_FILE}: generation {generation.index} replayed to other "
                "candidates than it logged (another cma version, or an edited log); "
                "use a new out directory"
            )
        self._tell(z, generation.fitness)
        self.history.append(generation)
        self.pool = update_pool(self.pool, generation.weights[generation.best], self.config.pool)

    # -- the log -------------------------------------------------------------------------------

    def _read_log(self) -> list[Generation]:
        path = self.out / LOG_FILE
        if not path.exists():
            return []
        try:
            data = json.loads(path.read_text())
            logged = data["config"]
            generations = [Generation.from_json(g) for g in data["generations"]]
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise TuneError(f"{path}: not a tuning log ({err}); use a new out directory") from None
        mine = json.loads(json.dumps(self.config.as_dict()))
        flat = lambda d: {**d, **{f"params.{k}": v for k, v in d["params"].items()}}  # noqa: E731
        theirs, ours = flat(logged), flat(mine)
        changed = [
            k for k in ours if k not in ("generations", "params") and theirs.get(k) != ours[k]
        ]
        if changed:
            k = changed[0]
            raise TuneError(
                f"{path}: the run there has {k}={theirs.get(k)!r}, not {ours[k]!r}; "
                "resume with the same settings or use a new out directory"
            )
        if data.get("names") != list(self.target.names):
            raise TuneError(f"{path}: logged weights {data.get('names')} are not the target's")
        self.run_id = self.run_id or str(data.get("run_id") or "")
        return generations

    def _write_log(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        data = {
            "version": LOG_VERSION,
            "config": self.config.as_dict(),
            "names": list(self.target.names),
            "run_id": self.run_id,
            "command": self.command,
            "generations": [g.as_json() for g in self.history],
        }
        _write_json(self.out / LOG_FILE, data)

    # -- the preset ----------------------------------------------------------------------------

    def preset(self) -> dict[str, Any]:
        """The preset of the run so far: the mean weights and where they came from."""
        if not self.history:
            raise TuneError("no generation finished yet: nothing to write as a preset")
        last = self.history[-1]
        cfg = self.config
        return {
            "target": cfg.target,
            "game": cfg.game,
            "params": dict(cfg.params),
            "weights": self.target.as_dict(self.mean_weights()),
            "provenance": {
                "mlflow_run_id": self.run_id,
                "seed": cfg.seed,
                "deal_seeds": DEAL_SEEDS_RULE,
                "generations": len(self.history),
                "population": cfg.population,
                "deals": cfg.deals,
                "pool": cfg.pool,
                "sigma0": cfg.sigma,
                "fitness": {
                    "what": "fair share at a focus seat against the pool (1.0 is par)",
                    "last_generation_best": max(last.fitness),
                    "last_generation_mean": statistics.fmean(last.fitness),
                },
                "command": self.command,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        }

    def write_preset(self) -> Path:
        path = self.out / PRESET_FILE
        _write_json(path, self.preset())
        return path


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(part, path)


def load_preset(path: str | Path, target: TuneTarget | str) -> dict[str, float]:
    """The weights of a preset file written by the tuner (refused, in one line, when it is not
    one or was tuned for another target)."""
    name = target if isinstance(target, str) else target.name
    source = Path(path)
    try:
        data = json.loads(source.read_text())
        weights, made_for = data["weights"], data["target"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise TuneError(f"preset {str(source)!r}: not a tuner preset ({err})") from None
    if made_for != name:
        raise TuneError(f"preset {str(source)!r} was tuned for target {made_for!r}, not {name!r}")
    if not isinstance(target, str):
        target.from_dict(weights)  # unknown names refused by name
    return {str(k): float(v) for k, v in weights.items()}
