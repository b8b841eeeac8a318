"""The learner of n-tuple tables and its one-process loop, resumable from a directory.

:class:`TableTrainer` owns the tables, their temporal-coherence accumulators and the run's
counters. It hands out :class:`~.play.GameTask` (game ``i`` is watched while ``i < watch_games``,
then self-play), merges the games' sparse updates (:meth:`TableTrainer.apply`), runs the
validation every ``validate_every`` games (the policy at one seat against the heuristic at the
others, on fixed deals that no training game uses, the focus seat rotating) and saves everything
into one directory: the tables (``tables.safetensors``, ``layout.json``: a directory the search
leaf ``tables`` reads as is), the accumulators and ``state.json``. :meth:`TableTrainer.resume`
continues from it; a directory of another game, table size or layout is refused in one line.

:func:`train_tables` is the one-process loop (a batch of games on the live tables, merge, repeat);
``omega_cluster.cluster.ntuple`` drives the same trainer with Ray actors.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from omega_cluster.games.api import Game
from omega_cluster.games.patterns import PatternSet
from omega_cluster.search.ntuple import TablesError, TemporalCoherence, TupleTables
from omega_cluster.train.ntuple.play import (
    GameKit,
    GameResult,
    GameTask,
    Policy,
    TablesSetupError,
    game_seed,
    heuristic_of,
    pattern_set,
    play_chains,
    play_games,
)

__all__ = [
    "STATE_FILE",
    "RunCounters",
    "TableTrainConfig",
    "TableTrainer",
    "Validation",
    "after_merge",
    "read_state",
    "train_tables",
]

STATE_FILE = "state.json"
STATE_FORMAT = "omega_cluster.ntuple-run"
VALIDATION_SEED = 2**30  # validation deals start here, far from every training deal


@dataclass(frozen=True)
class TableTrainConfig:
    """One run of table training (``games`` and/or ``minutes`` end it; both count this call)."""

    watch_games: int = 200  # the first games, played by the heuristic at every seat
    games: int | None = None  # stop when the run has played this many games in all
    minutes: float | None = None  # stop after this many minutes of this call
    lam: float = 0.5  # TD(λ): 0 learns from the next position, 1 from the outcome
    alpha: float = 1.0  # the step size (scaled per entry by its temporal coherence)
    outputs: int = 1  # 1: the seat's own share; num_players: every seat's share
    worlds: int = 8  # sampled worlds of the default lookahead policy
    seed: int = 0  # the deals of the training games
    validate_every: int = 200  # games between validations (0: none)
    validation_games: int = 40  # validation deals (the focus seat rotates over them)
    batch: int = 8  # games played on one version of the tables before a merge

    def __post_init__(self) -> None:
        if self.games is None and self.minutes is None:
            raise TablesSetupError("table training needs games= or minutes= to know when to stop")
        if not 0.0 <= self.lam <= 1.0:
            raise TablesSetupError(f"lam={self.lam} must be in [0, 1]")
        if not self.alpha > 0.0:
            raise TablesSetupError(f"alpha={self.alpha} must be > 0")
        for key in ("watch_games", "validate_every", "validation_games"):
            if getattr(self, key) < 0:
                raise TablesSetupError(f"{key}={getattr(self, key)} must be >= 0")
        if self.batch < 1 or self.outputs < 1 or self.worlds < 1:
            raise TablesSetupError("batch, outputs and worlds must be >= 1")


@dataclass
class Validation:
    """One validation: the policy's mean win share at one seat against the heuristic."""

    games_trained: int
    score: float
    stderr: float
    games: int
    fair: float  # the share of an equal player (1 / num_players)


@dataclass
class RunCounters:
    """The run's counters, saved in ``state.json``."""

    games: int = 0
    watched: int = 0
    positions: int = 0
    seconds: float = 0.0
    validations: list[Validation] = field(default_factory=list)


class TableTrainer:
    """Tables, accumulators and counters of one run (module doc)."""

    def __init__(
        self,
        game: Game,
        config: TableTrainConfig,
        policy: Policy | None,
        *,
        patterns: PatternSet | None = None,
    ) -> None:
        self.game, self.config = game, config
        patterns = patterns or pattern_set(game)
        watch = config.watch_games > 0 or (
            config.validate_every > 0 and config.validation_games > 0
        )
        self.kit = GameKit(
            game, patterns, heuristic_of(game) if watch else None, policy, config.lam
        )
        meta = {"game": game.spec.name, "params": dict(game.params), "players": game.num_players}
        if config.outputs not in (1, game.num_players):
            raise TablesSetupError(f"outputs={config.outputs} must be 1 or {game.num_players}")
        self.tables = TupleTables(patterns, config.outputs, meta=meta)
        self.coherence = TemporalCoherence(self.tables, config.alpha)
        self.counters = RunCounters()
        self._next = 0  # the next game to hand out (games in flight are ahead of counters.games)

    # -- the schedule --------------------------------------------------------------------------
    def tasks(self, count: int) -> list[GameTask]:
        """The next ``count`` games (fewer at ``games=`` and at the next validation)."""
        if self.config.games is not None:
            count = min(count, self.config.games - self._next)
        every = self.config.validate_every
        if every > 0:  # a batch ends at the next validation, so it runs at a multiple of it
            count = min(count, every - self._next % every)
        out = [
            GameTask(i, game_seed(self.config.seed, i), i < self.config.watch_games)
            for i in range(self._next, self._next + max(count, 0))
        ]
        self._next += len(out)
        return out

    def apply(self, results: list[GameResult]) -> int:
        """Merge the games' updates into the tables; returns the entries touched."""
        touched = self.coherence.merge([r.update for r in results])
        c = self.counters
        c.games += len(results)
        c.watched += sum(r.watched for r in results)
        c.positions += sum(r.update.positions for r in results)
        return touched

    def done(self, started: float) -> bool:
        """Whether this call's budget (games or minutes) is spent."""
        cfg = self.config
        if cfg.games is not None and self.counters.games >= cfg.games:
            return True
        return cfg.minutes is not None and time.monotonic() - started >= cfg.minutes * 60.0

    def validation_due(self, last: int) -> bool:
        """Whether ``validate_every`` games have passed since game ``last``."""
        every = self.config.validate_every
        return every > 0 and self.counters.games // every > last // every

    def validate(self) -> Validation:
        """Play the validation deals (module doc); the result is kept in the counters."""
        kit, n = self.kit, self.game.num_players
        games = self.config.validation_games
        if kit.policy is None or kit.heuristic is None or games == 0:
            raise TablesSetupError(
                "a validation needs a policy, the heuristic and validation_games > 0"
            )
        focus_player = kit.policy(self.tables)
        others = [kit.heuristic(self.game) for _ in range(n)]
        scores = []
        for i in range(games):
            focus = i % n
            players = [focus_player if p == focus else others[p] for p in range(n)]
            _, state, _ = play_chains(self.game, players, kit.patterns, VALIDATION_SEED + i, 1)
            scores.append(state.win_shares()[focus])
        mean = sum(scores) / games
        var = sum((s - mean) ** 2 for s in scores) / max(games - 1, 1)
        result = Validation(self.counters.games, mean, math.sqrt(var / games), games, 1.0 / n)
        self.counters.validations.append(result)
        return result

    # -- the directory -------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "format": STATE_FORMAT,
            "game": self.game.spec.name,
            "params": dict(self.game.params),
            "outputs": cfg.outputs,
            "seed": cfg.seed,
            "settings": {"lam": cfg.lam, "alpha": cfg.alpha, "watch_games": cfg.watch_games},
            "counters": asdict(self.counters),
        }

    def save(self, out: str | Path) -> None:
        """Tables, accumulators and ``state.json`` into ``out`` (the state last: it commits)."""
        root = Path(out)
        c = self.counters
        self.tables.meta.update(games=c.games, watched=c.watched, lam=self.config.lam)
        self.tables.save(root)
        self.coherence.save(root)
        tmp = root / (STATE_FILE + ".tmp")
        tmp.write_text(json.dumps(self.state(), indent=1, sort_keys=True, default=str))
        tmp.replace(root / STATE_FILE)

    @classmethod
    def resume(
        cls,
        out: str | Path,
        game: Game,
        config: TableTrainConfig,
        policy: Policy | None,
        *,
        patterns: PatternSet | None = None,
    ) -> TableTrainer:
        """The run saved in ``out``, continued with ``config`` (its game, parameters, outputs and
        seed must be the saved ones; one line otherwise)."""
        root = Path(out)
        saved = read_state(root)
        mine = {"game": game.spec.name, "params": dict(game.params), "outputs": config.outputs}
        mine["seed"] = config.seed
        for key, value in mine.items():
            if json.loads(json.dumps(value, default=str)) != saved.get(key):
                raise TablesError(
                    f"{root} holds a run with {key}={saved.get(key)!r}, not {value!r} "
                    "(use another out= for a new run)"
                )
        trainer = cls(game, config, policy, patterns=patterns)
        loaded = TupleTables.load(root, trainer.tables.patterns, game=game.spec.name)
        trainer.tables.weights[:] = loaded.weights
        trainer.tables.meta = {**loaded.meta, **trainer.tables.meta}  # keeps its run id
        trainer.coherence.load(root)
        counts = dict(saved["counters"])
        counts["validations"] = [Validation(**v) for v in counts.get("validations", [])]
        trainer.counters = RunCounters(**counts)
        trainer._next = trainer.counters.games
        return trainer


def read_state(root: Path) -> dict[str, Any]:
    """``root/state.json`` of a table run, checked (one line when it is not one)."""
    file = root / STATE_FILE
    try:
        state = json.loads(file.read_text())
    except FileNotFoundError:
        raise TablesError(f"{root} holds no table run ({STATE_FILE} is missing)") from None
    except (OSError, ValueError) as err:
        raise TablesError(f"{file} is unreadable ({err})") from None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        raise TablesError(f"{file} is not the state of a table run")
    if not isinstance(state.get("counters"), dict):
        raise TablesError(f"{file} has no counters")
    return state


Report = Callable[[TableTrainer, Validation | None], None]
"""Called after every merge (with the validation when one was just run)."""


def after_merge(
    trainer: TableTrainer, last: int, out: str | Path | None, report: Report | None
) -> None:
    """What follows a merge (``last``: the games played before it): validate when due, save at
    a validation, report."""
    validation = trainer.validate() if trainer.validation_due(last) else None
    if validation is not None and out is not None:
        trainer.save(out)
    if report is not None:
        report(trainer, validation)


def train_tables(
    trainer: TableTrainer, *, out: str | Path | None = None, report: Report | None = None
) -> RunCounters:
    """The one-process loop: ``batch`` games on the live tables, merge, validate when due, save
    at every validation and at the end (also when interrupted)."""
    started = time.monotonic()
    seconds0 = trainer.counters.seconds
    try:
        while not trainer.done(started):
            tasks = trainer.tasks(trainer.config.batch)
            if not tasks:
                break
            last = trainer.counters.games
            trainer.apply(play_games(trainer.kit, trainer.tables, tasks))
            trainer.counters.seconds = seconds0 + time.monotonic() - started
            after_merge(trainer, last, out, report)
    finally:
        trainer.counters.seconds = seconds0 + time.monotonic() - started
        if out is not None:
            trainer.save(out)
    return trainer.counters
