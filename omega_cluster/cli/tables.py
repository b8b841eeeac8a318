"""``omega-cluster tables game=mexican_train players=2 minutes=10 out=<dir>``: n-tuple value
tables trained by TD self-play (:mod:`omega_cluster.train.ntuple`).

The first ``watch`` games are played by the game's heuristic at every seat while the tables
learn; then every seat plays the depth-1 lookahead search with the tables as its leaf. ``out``
holds the tables (the directory a ``lookahead:tables:1:tables=<out>`` player reads), the
learner's step sizes and ``state.json``: running the command again on the same ``out``
continues the run (the game, its parameters and the seed must be the saved ones). A directory
that holds other files, or a corrupt run, is refused in one line. ``workers=`` > 1 plays on Ray
actors (``cluster=embedded``, a local Ray); ``cluster=inprocess`` is one process. With
``tracking=true`` (default) the curves and the tables go to an MLflow store in ``out``. Keys are
in :data:`TABLES_KEYS`; every other key is a game parameter.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TimeElapsedColumn

from omega_cluster.cli.args import Settings, UsageError, check_writable, key_command
from omega_cluster.errors import UserError
from omega_cluster.games.api import Game
from omega_cluster.train.ntuple import (
    STATE_FILE,
    LookaheadPolicy,
    Policy,
    TableTrainConfig,
    TableTrainer,
    Validation,
    read_state,
    train_tables,
)

__all__ = ["TABLES", "TABLES_KEYS"]

TABLES_KEYS: dict[str, str] = {
    "game": "game name (see `omega-cluster games`)",
    "out": "directory of the tables and the run's state (running again continues it)",
    "minutes": "train this many minutes (this call)",
    "games": "stop when the run has played this many games in all",
    "watch": "the first games, played by the game's heuristic at every seat (default 200)",
    "lam": "TD(lambda): 0 learns from the next position, 1 from the outcome (default 0.5)",
    "alpha": "step size, scaled per entry by its temporal coherence (default 1.0)",
    "worlds": "sampled worlds of the depth-1 lookahead self-play player (default 8)",
    "validate": "games between validations against the heuristic (default 200; 0: none)",
    "workers": "processes that play (default 1; > 1 plays on Ray actors)",
    "cluster": "inprocess (one process) or embedded (a local Ray); default by workers",
    "seed": "the deals of the training games (default 0, or the saved run's)",
    "tracking": "log the curves and the tables to MLflow in out (default true)",
    "quiet": "no progress bar",
}
CLUSTERS = ("inprocess", "embedded")


def _config(s: Settings, saved: dict[str, Any] | None) -> TableTrainConfig:
    """The run's settings: the keys given, else the saved run's, else the defaults."""
    settings = (saved or {}).get("settings", {})
    defaults = TableTrainConfig(games=1)
    minutes = s.number("minutes", low=0, high=1e6)
    games = s.integer("games", minimum=1)
    if minutes is None and games is None:
        raise UsageError("tables needs minutes=<m> or games=<n> to know when to stop")

    def saved_or_default(field: str) -> Any:
        return settings.get(field, getattr(defaults, field))

    watch = s.integer("watch", minimum=0)
    lam = s.number("lam", low=0, high=1, closed=True)
    alpha = s.number("alpha", low=0, high=1e3)
    return replace(
        defaults,
        games=games,
        minutes=minutes,
        watch_games=saved_or_default("watch_games") if watch is None else watch,
        lam=saved_or_default("lam") if lam is None else lam,
        alpha=saved_or_default("alpha") if alpha is None else alpha,
        worlds=s.integer("worlds", 8, minimum=1),
        validate_every=s.integer("validate", 200, minimum=0),
        seed=s.integer("seed", (saved or {}).get("seed", 0), minimum=0),
    )


def default_policy(game: Game, worlds: int) -> Policy:
    """The self-play player: the depth-1 lookahead over the tables leaf, checked now (a game the
    lookahead cannot search is refused before any game is played)."""
    try:
        from omega_cluster.players import lookahead  # noqa: F401 (the search side's player)
    except ImportError:
        raise UserError(
            "the lookahead player (omega_cluster.players.lookahead) is not installed"
        ) from None
    return LookaheadPolicy(game, depth=1, worlds=worlds)


def _trainer(game: Game, s: Settings, out: Path) -> tuple[TableTrainer, bool]:
    """The run in ``out`` continued, or a new one (``out`` empty or absent)."""
    saved = None
    if (out / STATE_FILE).exists():
        saved = read_state(out)
    elif out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(
            f"out={str(out)!r} holds other files and no table run ({STATE_FILE}): "
            "give an empty or new directory"
        )
    config = _config(s, saved)
    policy = default_policy(game, config.worlds)
    if saved is None:
        trainer = TableTrainer(game, config, policy)
    else:
        trainer = TableTrainer.resume(out, game, config, policy)
    policy(trainer.tables)  # build one player now: a game it cannot play fails here, in one line
    return trainer, saved is not None


def _cluster(s: Settings) -> tuple[str, int]:
    workers = s.integer("workers", 1, minimum=1)
    cluster = s.choice("cluster", "inprocess" if workers == 1 else "embedded", CLUSTERS)
    if cluster == "inprocess" and workers > 1:
        raise UsageError(f"workers={workers} needs cluster=embedded (inprocess is one process)")
    return cluster, workers


@contextmanager
def _progress(enabled: bool, trainer: TableTrainer) -> Iterator[Any]:
    """A rich bar on stderr over the games (or the minutes); yields the report hook."""
    cfg = trainer.config
    if not enabled:
        yield lambda t, v: None
        return
    by_games = cfg.games is not None
    total = float(cfg.games) if cfg.games is not None else (cfg.minutes or 0.0) * 60.0
    started, first = time.monotonic(), trainer.counters.games
    columns = (BarColumn(), TimeElapsedColumn())
    with Progress(
        "{task.description}", *columns, console=Console(stderr=True), transient=True
    ) as bar:
        task = bar.add_task("tables", total=total)

        def report(t: TableTrainer, validation: Validation | None) -> None:
            c = t.counters
            last = c.validations[-1] if c.validations else None
            score = f"  validation {last.score:.3f}±{last.stderr:.3f}" if last else ""
            rate = (c.games - first) / max(time.monotonic() - started, 1e-9) * 60.0
            bar.update(
                task,
                completed=c.games if by_games else time.monotonic() - started,
                description=f"{c.games} games ({c.watched} watched, {rate:.0f}/min){score}",
            )

        yield report


def run_tables(args: argparse.Namespace) -> int:
    s = Settings("tables", args.settings, TABLES_KEYS, game_params=True)
    game = s.game()
    s.require("out=<dir>", hint="the tables and the run's state")
    out = Path(s.text("out"))
    check_writable("out", out)
    cluster, workers = _cluster(s)
    tracking = s.flag("tracking", True)
    quiet = s.flag("quiet", False)
    trainer, resumed = _trainer(game, s, out)
    c = trainer.counters
    if resumed:
        print(f"continuing {out}: {c.games} games played ({c.watched} watched)")
    return _train(trainer, out, cluster, workers, tracking=tracking, quiet=quiet)


def _train(
    trainer: TableTrainer, out: Path, cluster: str, workers: int, *, tracking: bool, quiet: bool
) -> int:
    tracker = log = None
    if tracking:
        from omega_cluster.tracking.ntuple import TableTracking, open_table_tracking

        tracker = open_table_tracking(trainer, out)
        log = TableTracking(tracker)
    first, started = trainer.counters.games, time.monotonic()
    status = "FAILED"
    with _progress(not quiet, trainer) as bar:

        def report(t: TableTrainer, validation: Validation | None) -> None:
            bar(t, validation)
            if log is not None:
                log(t, validation)
            if validation is not None:
                bar_print(validation)

        def bar_print(v: Validation) -> None:
            print(f"validation at {v.games_trained} games: {v.score:.3f} ± {v.stderr:.3f} "
                  f"(fair {v.fair:.3f}, {v.games} games vs the heuristic)", flush=True)  # fmt: skip

        try:
            if cluster == "inprocess":
                train_tables(trainer, out=out, report=report)
            else:
                from omega_cluster.cluster.backend import shutdown_ray
                from omega_cluster.cluster.ntuple import start_table_ray, train_tables_ray

                began = start_table_ray(workers)
                try:
                    train_tables_ray(trainer, workers, out=out, report=report)
                finally:
                    if began:
                        shutdown_ray()
            status = "FINISHED"
        except KeyboardInterrupt:
            status = "KILLED"
            raise
        finally:
            if log is not None and tracker is not None:
                log.log_tables(out)
                tracker.close(status)
    c = trainer.counters
    played, seconds = c.games - first, time.monotonic() - started
    print(
        f"{out}: {c.games} games in all ({c.watched} watched), {played} now at "
        f"{played / max(seconds, 1e-9) * 60:.0f} games/min; {c.positions} positions; "
        f"table fill {trainer.tables.fill():.3f}"
    )
    print(f"play it: lookahead:tables:1:tables={out}")
    return 0


TABLES = key_command(
    "tables",
    "train n-tuple value tables by TD self-play (game=, out=, minutes= or games=)",
    TABLES_KEYS,
    run_tables,
    note="every other key is a game parameter.",
)
