"""Registered cohorts: named, frozen sets of fresh deal seeds and seatings, and running them.

A claim such as "Commander beats Lieutenant by +0.3 wins per game, 95% interval …" is only worth
something on seeds nobody tuned on: a margin on the seeds that chose a candidate cannot confirm
it, only fresh registered cohorts can. A cohort
is a YAML file ``bench/cohorts/<name>.yaml``, committed once and never edited::

    name: mt4p-200                  # must equal the file name
    description: …
    created: 2025-01-01
    game: mexican_train             # a registered game name
    params: {players: 4, rounds: 1, objective: points}
    others: [lieutenant, lieutenant, lieutenant]   # the seats around the focus (or one spec)
    rotations: [0, 1, 2, 3]         # optional: focus seats (default every seat)
    seeds_sha256: …                 # optional: sha256 of the seeds, comma-joined
    seeds: [… fresh ints, no duplicates …]

:func:`load_cohort` checks it (every key, duplicated seeds, the digest, the game and its
parameters, the seat count) and returns a frozen :class:`Cohort`; :meth:`Cohort.specs` turns it
into the paired bench of :func:`omega_cluster.eval.matches.paired_specs`, and :func:`run_cohort`
plays it and computes the per-metric paired contrasts (:func:`omega_cluster.eval.stats.
paired_contrast`) and the per-slice outcomes that :mod:`omega_cluster.eval.report` draws.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from omega_cluster.eval.matches import (
    BenchError,
    MatchSpec,
    SliceKey,
    SliceOutcome,
    SpecResult,
    play_specs,
    slice_outcomes,
)
from omega_cluster.eval.paired import PairedSample, paired_sample, paired_specs
from omega_cluster.eval.stats import paired_contrast
from omega_cluster.games.registry import make_game

__all__ = [
    "COHORT_DIR_ENV",
    "BenchResult",
    "Cohort",
    "CohortError",
    "available_cohorts",
    "cohort_directory",
    "load_cohort",
    "run_cohort",
    "seeds_digest",
]

COHORT_DIR_ENV = "OMEGA_CLUSTER_COHORTS"  # overrides the directory of registered cohorts
_REQUIRED = ("name", "description", "created", "game", "params", "others", "seeds")
_OPTIONAL = ("rotations", "seeds_sha256")


class CohortError(BenchError):
    """A cohort that is missing, malformed, or whose seeds or seats do not check out."""


@dataclass(frozen=True)
class Cohort:
    """A registered cohort: fresh deal seeds and the seats around the player under test."""

    name: str
    game: str  # registered game name
    params: tuple[tuple[str, Any], ...]  # game parameters as sorted (key, value) pairs
    seeds: tuple[int, ...]  # deal seeds, distinct, in registration order
    others: tuple[str, ...]  # player specs of the seats after the focus seat, in seat order
    rotations: tuple[int, ...]  # focus seats every seed is played at
    description: str
    created: str  # ISO date the cohort was registered
    path: str = ""  # file it was loaded from

    @property
    def num_players(self) -> int:
        return len(self.others) + 1

    def specs(
        self, a: str, b: str, *, seeds: int | None = None, rotations: Sequence[int] | None = None
    ) -> tuple[MatchSpec, ...]:
        """The paired bench: A and B at each focus seat of the first ``seeds`` seeds (all)."""
        if seeds is not None and (isinstance(seeds, bool) or not 1 <= seeds <= len(self.seeds)):
            raise CohortError(f"cohort {self.name}: seeds={seeds!r}; allowed 1..{len(self.seeds)}")
        return paired_specs(
            self.game,
            a,
            b,
            self.others,
            self.seeds[:seeds],
            params=dict(self.params),
            rotations=self.rotations if rotations is None else rotations,
        )


def seeds_digest(seeds: Sequence[int]) -> str:
    """sha256 of the seeds written in decimal, comma-joined: pins a cohort's seeds."""
    return hashlib.sha256(",".join(str(s) for s in seeds).encode()).hexdigest()


def cohort_directory() -> Path:
    """``$OMEGA_CLUSTER_COHORTS``, else ``bench/cohorts`` of the source checkout."""
    env = os.environ.get(COHORT_DIR_ENV)
    return Path(env) if env else Path(__file__).resolve().parents[2] / "bench" / "cohorts"


def available_cohorts(directory: str | Path | None = None) -> list[str]:
    """Names of the registered cohorts (the ``*.yaml`` files of the directory)."""
    folder = Path(directory) if directory is not None else cohort_directory()
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def load_cohort(name_or_path: str | Path, *, directory: str | Path | None = None) -> Cohort:
    """Load and check a cohort by registered name or by path to its YAML file."""
    text = str(name_or_path)
    path = Path(text)
    if not (text.endswith((".yaml", ".yml")) or os.sep in text or "/" in text):
        folder = Path(directory) if directory is not None else cohort_directory()
        path = folder / f"{text}.yaml"
        if not path.is_file():
            known = ", ".join(available_cohorts(folder)) or "none"
            raise CohortError(f"no cohort named {text!r} in {folder}; registered cohorts: {known}")
    if not path.is_file():
        raise CohortError(f"cohort file {path} does not exist")

    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise CohortError(f"cohort file {path} is not valid YAML: {err}") from None
    return _parse(data, path)


def _parse(data: Any, path: Path) -> Cohort:
    where = f"cohort file {path}"
    if not isinstance(data, dict):
        raise CohortError(f"{where}: expected a mapping with keys {', '.join(_REQUIRED)}")
    missing = [k for k in _REQUIRED if k not in data]
    unknown = [k for k in data if k not in _REQUIRED + _OPTIONAL]
    if missing or unknown:
        what = f"missing {missing}" if missing else f"unknown keys {unknown}"
        raise CohortError(f"{where}: {what}; keys: {', '.join(_REQUIRED + _OPTIONAL)}")
    if data["name"] != path.stem:
        raise CohortError(f"{where}: name {data['name']!r} differs from the file name")
    seeds = _seeds(data["seeds"], where)
    digest = data.get("seeds_sha256")
    if digest is not None and digest != seeds_digest(seeds):
        raise CohortError(f"{where}: the seeds do not match seeds_sha256 (edited after registry?)")
    params = data["params"]
    if not isinstance(params, dict):
        raise CohortError(f"{where}: params must be a mapping of game parameters")
    game_name = str(data["game"])
    num_players = _num_players(game_name, params, where)
    others = data["others"]
    others = [others] * (num_players - 1) if isinstance(others, str) else others
    if not isinstance(others, list) or not all(isinstance(o, str) for o in others):
        raise CohortError(f"{where}: others must be a player spec or a list of them")
    if len(others) != num_players - 1:
        raise CohortError(f"{where}: {len(others)} others for {num_players} players")
    rotations = data.get("rotations", list(range(num_players)))
    if (
        not isinstance(rotations, list)
        or not rotations
        or len(set(rotations)) != len(rotations)
        or not all(isinstance(r, int) and 0 <= r < num_players for r in rotations)
    ):
        raise CohortError(f"{where}: rotations must be distinct seats in 0..{num_players - 1}")
    return Cohort(
        name=str(data["name"]),
        game=game_name,
        params=tuple(sorted((str(k), v) for k, v in {**params, "players": num_players}.items())),
        seeds=seeds,
        others=tuple(o.strip() for o in others),
        rotations=tuple(rotations),
        description=" ".join(str(data["description"]).split()),
        created=str(data["created"]),
        path=str(path),
    )


def _seeds(raw: Any, where: str) -> tuple[int, ...]:
    if not isinstance(raw, list) or not raw:
        raise CohortError(f"{where}: seeds must be a non-empty list of ints")
    bad = [s for s in raw if isinstance(s, bool) or not isinstance(s, int) or s < 0]
    if bad:
        raise CohortError(f"{where}: seeds must be non-negative ints; bad: {bad[:5]}")
    seen: set[int] = set()
    duplicated = [s for s in raw if s in seen or seen.add(s)]  # type: ignore[func-returns-value]
    if duplicated:
        raise CohortError(
            f"{where}: duplicated seeds {sorted(set(duplicated))[:5]} — each seed must appear "
            "once, or a deal counts twice in the contrast"
        )
    return tuple(raw)


def _num_players(game_name: str, params: Mapping[str, Any], where: str) -> int:
    try:
        return make_game(game_name, **params).num_players
    except (KeyError, ValueError, TypeError) as err:
        raise CohortError(f"{where}: game {game_name!r} with params {params}: {err}") from None


# -- running a cohort --------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchResult:
    """A played paired bench: its games, paired samples and contrasts per metric, and slices."""

    cohort: Cohort
    a: str  # player spec of arm A (the candidate)
    b: str  # player spec of arm B (the reference)
    results: tuple[SpecResult, ...]  # in bench order
    samples: Mapping[str, PairedSample]  # metric -> per-deal means of both arms
    contrasts: Mapping[str, Any]  # metric -> stats.paired_contrast(sample.a, sample.b)
    slices: Mapping[str, Mapping[SliceKey, SliceOutcome]]  # "a" / "b" -> per-slice outcomes
    level: float  # confidence level of every interval
    elapsed_s: float  # wall time of the games

    @property
    def seeds(self) -> int:
        return len(self.samples["win_share"].deal_seeds)

    @property
    def games(self) -> int:
        return len(self.results)


def run_cohort(
    cohort: Cohort | str,
    a: str,
    b: str,
    *,
    seeds: int | None = None,
    rotations: Sequence[int] | None = None,
    level: float = 0.95,
    bootstrap: int = 2000,
    rng_seed: int = 0,
    progress: bool = False,
) -> BenchResult:
    """Play the cohort's paired bench in this process and compute contrasts and slices.

    Contrasts: ``win_share`` (wins per game; the headline), ``score`` and every counts key.
    """
    if isinstance(cohort, str):
        cohort = load_cohort(cohort)
    specs = cohort.specs(a, b, seeds=seeds, rotations=rotations)
    started = time.perf_counter()
    results = play_specs(specs, progress=progress)
    elapsed = time.perf_counter() - started
    metrics = ["win_share", "score", *results[0].record.counts]
    samples = {m: paired_sample(results, metric=m) for m in metrics}
    contrasts = {
        m: paired_contrast(
            s.a, s.b, level=level, bootstrap=bootstrap, rng=np.random.default_rng(rng_seed)
        )
        for m, s in samples.items()
    }
    slices = {arm: slice_outcomes(results, arm=arm, level=level) for arm in ("a", "b")}
    return BenchResult(
        cohort=cohort,
        a=a.strip(),
        b=b.strip(),
        results=results,
        samples=samples,
        contrasts=contrasts,
        slices=slices,
        level=level,
        elapsed_s=elapsed,
    )
