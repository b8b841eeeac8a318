"""The first champion from a teacher: the game's rule-based player labels its own moves.

AlphaGo's supervised start (Silver et al. 2016), here from the rule-based player: before self-play,
``learner.warm_start_games`` games (drawn over the run's mix of tables, as self-play draws them)
of the game's rule-based player (``heuristic``: Commander for
Mexican Train) are played with its moves recorded as one-hot policy targets
(:class:`~omega_cluster.train.selfplay.TeacherEvaluator`, self-play mode ``network`` with
``record_prior``), written as shards under ``<run>/warm_start/`` (a store of their own: the
replay window of the run never reads them), and the fresh network is trained on them for
``learner.warm_start_steps`` steps. The result is the run's ``v0``. Self-play then distils the
search's visits, not the teacher's picks (a network trained only on the teacher's picks converges
to a clone of it; here the teacher only sets the prior the first searches start from). Why: a
PUCT search with a uniform prior and a small simulation budget loses to its own rollout policy
(``make train``'s untrained ``v0`` against Commander); a prior that already plays like the
teacher lets the search spend its simulations on the moves that matter.

Pure: no Ray, no MLflow, no Hydra settings (a :class:`WarmStartConfig`, built by the service
layer); the pipeline calls :func:`warm_start` once, when it creates ``v0``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from omega_cluster.data import ShardStore, ShardWriter
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.fleet import Fleet
from omega_cluster.model.network import PolicyValueNet
from omega_cluster.players.registry import make_player
from omega_cluster.train._tables import Table, table_games
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig
from omega_cluster.train.learner import Learner
from omega_cluster.train.selfplay import SelfPlay, TeacherEvaluator

__all__ = ["WarmStartConfig", "WarmStartStats", "warm_start"]


@dataclass(frozen=True)
class WarmStartConfig:
    """How many teacher games to play and label, how long to train on them, and how."""

    games: int  # games of the teacher (learner.warm_start_games)
    steps: int  # learner steps on their rows (learner.warm_start_steps)
    learner: LearnerConfig  # its seed also seeds the teacher's games
    max_moves: int | None = None  # abandon a game after this many decisions
    teacher: str = "heuristic"  # player spec of the teacher
    fleet: Fleet | None = None  # the run's tables: the games are drawn over its mix


@dataclass(frozen=True)
class WarmStartStats:
    """What the warm start did (logged by the pipeline, kept in ``v0``'s metadata)."""

    teacher: str
    games: int
    rows: int
    steps: int
    first_policy_loss: float  # the first step's policy loss (the fresh network)
    policy_loss: float  # the mean over the last (at most 50) steps
    seconds: float

    def metrics(self) -> dict[str, float]:
        return {
            "warm_start/games": float(self.games),
            "warm_start/rows": float(self.rows),
            "warm_start/steps": float(self.steps),
            "warm_start/first_policy_loss": self.first_policy_loss,
            "warm_start/policy_loss": self.policy_loss,
            "warm_start/seconds": self.seconds,
        }


def warm_start(
    config: WarmStartConfig, game: Game, encoder: Encoder, model: PolicyValueNet, directory: Path
) -> WarmStartStats:
    """Train ``model`` in place on ``config.games`` games of the game's rule-based player
    (module docstring); the labelled games are kept as shards under ``directory``."""
    started = time.perf_counter()
    plays = SelfPlayConfig(
        games=config.games,
        concurrent_games=min(32, config.games),
        mode="network",
        record_prior=True,
        temperature=0.0,
        final_temperature=0.0,
        max_moves=config.max_moves,
        seed=config.learner.seed,
        actor="warm_start",
    )
    teacher = make_player(config.teacher, game)
    if config.fleet is None:
        evaluator = TeacherEvaluator(teacher, game.num_players)
        runner = SelfPlay(game, encoder, plays, evaluator=evaluator)
    else:  # each table's own teacher (a rule-based player is built for its table)
        tables = [Table(s.key, g, e, TeacherEvaluator(make_player(config.teacher, g),
                                                      g.num_players))
                  for s, g, e in table_games(config.fleet, like=game)]  # fmt: skip
        runner = SelfPlay.over_fleet(config.fleet, tables, plays)
    records = list(runner.play())
    store = ShardStore(str(directory))
    ShardWriter(store, writer_id="warm_start").write(records)
    learner = Learner(model, config.learner, game=game, encoder=encoder)
    window = learner.window(store, window_rows=max(len(records), 1))
    first = learner.train_steps(window, 1)
    last, rest = first, config.steps - 1
    if rest > 50:
        learner.train_steps(window, rest - 50)
        rest = 50
    if rest > 0:
        last = learner.train_steps(window, rest)  # its loss: the mean over the last <= 50 steps
    model.eval()
    return WarmStartStats(
        teacher=getattr(teacher, "name", type(teacher).__name__),
        games=config.games,
        rows=len(records),
        steps=config.steps,
        first_policy_loss=float(first.policy_loss),
        policy_loss=float(last.policy_loss),
        seconds=time.perf_counter() - started,
    )
