"""The gatekeeper's work as pure code: bench specs, bench workers and the promotion decision.

A candidate is benched against the champion at every table of the run (``tables``: the run's
fleet, :mod:`omega_cluster.games.fleet`; one table without a fleet), on fresh deals, each deal
played twice so that only the candidate differs (:mod:`omega_cluster.eval.gate_bench`: the
seat-swapped pair at 2 players, the all-champion control game at N > 2); every deal gives a
pentanomial pair value for the gate. The specs carry role tokens (``@candidate``,
``@champion``) instead of player specs: a :class:`BenchWorker` turns a token into that model's
player from its checkpoint URI (cached per URI and table), and any other seat string into a
player of :mod:`omega_cluster.players.registry` (the fixed anchors).

:class:`Gatekeeper` plays rounds of deals through a ``play`` callable — the tasks of a round
fanned out over workers; in one process just a loop over one :class:`BenchWorker` — with the same
number of deals at every table each round, and asks :func:`omega_cluster.eval.gate.decide` after
each round (one slice per table) until it promotes or rejects (fixed mode: one round of
``games_per_slice`` games per table; SPRT: rounds until the test stops or ``max_games`` over all
tables). After a promotion, :meth:`GateService.anchors` measures the new champion against the
fixed anchors (:mod:`omega_cluster.eval.anchors`).

No Ray and no Hydra settings here: everything takes a frozen :class:`GateServiceConfig` (built
from the run's settings by :mod:`omega_cluster.wiring`), and
:class:`omega_cluster.cluster.actors.GatekeeperActor` supplies a ``play`` that fans the tasks out
over a pool of bench-worker actors.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from omega_cluster.eval.anchors import AnchorReport, champion_exploitability, measure_anchors
from omega_cluster.eval.gate import (
    Contender,
    GateConfig,
    GateDecision,
    SliceResults,
    Verdict,
    decide,
)
from omega_cluster.eval.gate_bench import (
    CANDIDATE,
    CHAMPION,
    gate_specs,
    pair_scores,
    slice_figures,
)
from omega_cluster.eval.matches import (
    MatchSpec,
    SpecResult,
    chunk_specs,
    play_spec,
)
from omega_cluster.eval.stats import elo_from_score
from omega_cluster.games.api import Game
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.fleet import Fleet, TableSlice, fleet_for
from omega_cluster.games.player import Player
from omega_cluster.games.registry import make_game
from omega_cluster.model.inference import network_player_from_checkpoint
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.leaf_spec import LeafSpec
from omega_cluster.players.registry import make_player
from omega_cluster.players.search import SearchPlayer
from omega_cluster.search.ismcts import ISMCTSConfig

__all__ = [
    "CANDIDATE",
    "CHAMPION",
    "BenchTask",
    "BenchWorker",
    "GateOutcome",
    "GateService",
    "GateServiceConfig",
    "Gatekeeper",
    "ModelPlayerSpec",
    "PlayFn",
    "gate_specs",
    "model_player",
]


@dataclass(frozen=True)
class BenchTask:
    """A chunk of bench games and the checkpoint URI of each role token in them."""

    specs: tuple[MatchSpec, ...]
    roles: Mapping[str, str]  # token -> checkpoint URI
    kind: str = ""  # how the models play (ModelPlayerSpec.kind); "": the config's player


PlayFn = Callable[[Sequence[BenchTask]], Sequence[Sequence[SpecResult]]]
"""Plays tasks (anywhere) and returns each task's results, in task order."""


@dataclass(frozen=True)
class ModelPlayerSpec:
    """How a checkpoint plays at a bench table: the greedy policy alone (``network``), or the
    self-play search with the checkpoint's network in its leaf (``search``)."""

    kind: str = "network"  # network | search
    leaf: LeafSpec = field(default_factory=LeafSpec)
    simulations: int = ISMCTSConfig.simulations  # search: simulations per move
    c_uct: float = ISMCTSConfig.c_uct
    c_puct: float = ISMCTSConfig.c_puct


@dataclass(frozen=True)
class GateServiceConfig:
    """Everything the gatekeeper and its bench workers need (module docstring)."""

    game: str
    game_params: Mapping[str, Any]
    gate: GateConfig
    player: ModelPlayerSpec = field(default_factory=ModelPlayerSpec)
    run_seed: int = 0  # each bench's deals derive from it and the candidate's version
    chunk_games: int = 10  # games per bench task
    paired: bool = True  # 2 players: a deal's two seatings form a pair (pentanomial statistics)
    opening_moves: int = 0  # each deal's first decisions at random (a game without chance)
    # the fixed anchors a champion is rated against (player spec -> Elo) and its games against
    # each, per objective and player kind (0: none); the run's tables (None: game_params')
    anchors: Mapping[str, float] = field(default_factory=dict)
    anchor_games: int = 0
    anchor_network_games: int | None = None  # the network alone's (None: anchor_games)
    fleet: Fleet | None = None
    torch_threads: int = 1

    def build_game(self) -> Game:
        return make_game(self.game, **dict(self.game_params))

    def bench_tables(self) -> tuple[TableSlice, ...]:
        """The tables every gate benches: the fleet's, or the one table of ``game_params``."""
        return (self.fleet or fleet_for(self.game, self.game_params)).slices


def model_player(
    spec: ModelPlayerSpec, game: Game, uri: str, *, simulations: int | None = None
) -> Player:
    """The player the checkpoint at ``uri`` makes under ``spec``: the greedy policy alone
    (``network``), or the self-play search with this checkpoint's network in its leaf
    (``search``: PUCT on the network prior for turn-based games) at ``simulations`` per move
    (default ``spec.simulations``)."""
    player = network_player_from_checkpoint(game, uri, greedy=True)
    if spec.kind == "network":
        return player
    net = player._evaluator
    evaluator = spec.leaf.build(game, net.model, net.encoder)
    options: dict[str, Any] = {}
    if not game.spec.simultaneous:
        puct = spec.leaf.uses_network
        options = {"selection": "puct" if puct else "uct", "c_puct": spec.c_puct,
                   "c_uct": spec.c_uct}  # fmt: skip
    budget = spec.simulations if simulations is None else simulations
    return SearchPlayer(game, leaf=evaluator, simulations=budget, **options)


class BenchWorker:
    """Plays bench tasks; builds each model's player once per URI, player kind and table (a
    fleet's tables differ in players and objective; the players are built for their table)."""

    def __init__(self, config: GateServiceConfig, *, max_cached: int = 16) -> None:
        pin_threads(config.torch_threads)
        self.config = config
        self.game = config.build_game()
        self.max_cached = max_cached * max(1, len(config.bench_tables()))  # models x tables
        self._games: dict[Any, Game] = {}
        self._models: dict[tuple[str, str, Any], Player] = {}
        self._anchors: dict[tuple[str, Any], Player] = {}

    def _table(self, spec: MatchSpec) -> Game:
        if spec.params not in self._games:
            self._games[spec.params] = make_game(spec.game, **dict(spec.params))
        return self._games[spec.params]

    def _model_player(self, uri: str, kind: str, spec: MatchSpec) -> Player:
        key = (uri, kind, spec.params)
        if key not in self._models:
            if len(self._models) >= self.max_cached:
                self._models.pop(next(iter(self._models)))
            player = self.config.player
            player = replace(player, kind=kind) if kind else player
            self._models[key] = model_player(player, self._table(spec), uri)
        return self._models[key]

    def _player(self, token: str, task: BenchTask, spec: MatchSpec) -> Player:
        if token in task.roles:
            return self._model_player(task.roles[token], task.kind, spec)
        if (token, spec.params) not in self._anchors:
            self._anchors[token, spec.params] = make_player(token, self._table(spec))
        return self._anchors[token, spec.params]

    def play(self, task: BenchTask) -> tuple[SpecResult, ...]:
        out = []
        for spec in task.specs:
            players = [self._player(seat, task, spec) for seat in spec.seats]
            for p in players:
                reset = getattr(p, "reset", None)
                if callable(reset):
                    reset()
            out.append(play_spec(spec, players=players, counts=False))
        return tuple(out)


@dataclass(frozen=True)
class GateOutcome:
    """One gate decision, flat enough to log and to persist."""

    candidate: int
    champion: int
    verdict: str  # promote | reject
    reason: str
    games: int
    score: float  # the candidate's head-to-head score
    score_low: float
    score_high: float
    elo_gap: float  # Elo of the candidate over the champion (finite: see _finite_gap)
    elo_low: float
    elo_high: float
    llr: float | None
    seconds: float
    slices: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    @property
    def promoted(self) -> bool:
        return self.verdict == "promote"


def _finite_gap(
    decision: GateDecision, games: int
) -> tuple[float, float, float, float, float, float]:
    """(score, low, high, gap, gap_low, gap_high), scores kept half a game inside (0, 1) so a
    perfect record still gives a finite Elo gap (a smoke run's first candidate often wins all)."""
    s = decision.score
    est, low, high = (s.estimate, s.low, s.high) if s is not None else (0.5, 0.0, 1.0)
    eps = 0.5 / max(games, 1)

    def clip(x: float) -> float:
        return min(1.0 - eps, max(eps, x))

    gap, gap_low, gap_high = (elo_from_score(clip(x)) for x in (est, low, high))
    return est, low, high, gap, gap_low, gap_high


class Gatekeeper:
    """Benches candidates against the champion and decides (module docstring)."""

    def __init__(self, config: GateServiceConfig, *, parallelism: int = 1) -> None:
        self.service_config = config
        self.config = config.gate
        game = config.build_game()
        self.game_name, self.players = game.spec.name, game.num_players
        self.params = dict(config.game_params)
        self.paired = config.paired and self.players == 2
        self.objective = game.spec.objective
        self.parallelism = max(1, parallelism)
        self.tables = config.bench_tables()

    def _tasks(self, specs: Sequence[MatchSpec], roles: Mapping[str, str]) -> list[BenchTask]:
        size = max(self.players, self.service_config.chunk_games // self.players * self.players)
        return [BenchTask(chunk, dict(roles)) for chunk in chunk_specs(specs, size=size)]

    def _round_deals(self, played: int) -> int:
        """Deals per table this round (every deal is two games, at any table size)."""
        if self.config.mode == "fixed":
            return max(0, math.ceil(self.config.games_per_slice / 2) - played)
        chunk = max(1, self.service_config.chunk_games // 2)
        return chunk * max(1, math.ceil(self.parallelism / len(self.tables)))

    def _play_round(
        self, seed: int, deals: range, roles: Mapping[str, str], play: PlayFn
    ) -> list[list[SpecResult]]:
        """One round: ``deals`` at every table, in tasks of one table each; results per table,
        sorted by (deal, arm)."""
        size = max(2, self.service_config.chunk_games // 2 * 2)
        tasks: list[BenchTask] = []
        owner: list[int] = []
        for i, table in enumerate(self.tables):
            table_seed = derive_seed(seed, table.key) if len(self.tables) > 1 else seed
            specs = gate_specs(self.game_name, table.params, table.players, seed=table_seed,
                               deals=deals, opening=self.service_config.opening_moves)  # fmt: skip
            for chunk in chunk_specs(specs, size=size):
                tasks.append(BenchTask(chunk, dict(roles)))
                owner.append(i)
        out: list[list[SpecResult]] = [[] for _ in self.tables]
        for i, results in zip(owner, play(tasks), strict=True):
            out[i].extend(results)
        for results in out:
            results.sort(key=lambda r: (r.spec.deal, r.spec.arm))
        return out

    def _slices(self, results: Sequence[Sequence[SpecResult]]) -> list[SliceResults]:
        return [SliceResults(t.key, pair_scores(rs), paired=self.service_config.paired or
                             t.players > 2) for t, rs in zip(self.tables, results, strict=True)]  # fmt: skip

    def bench(
        self,
        candidate: Contender,
        candidate_uri: str,
        champion: Contender,
        champion_uri: str,
        play: PlayFn,
    ) -> GateOutcome:
        """Play rounds of deals at every table until the gate promotes or rejects."""
        started = time.perf_counter()
        seed = derive_seed(self.service_config.run_seed, "gate", candidate.version)
        roles = {CANDIDATE: candidate_uri, CHAMPION: champion_uri}
        results: list[list[SpecResult]] = [[] for _ in self.tables]
        deals = 0
        while True:
            n = self._round_deals(deals)
            if n == 0 and not deals:
                raise ValueError("the gate's first round has no games; raise games_per_slice")
            if n:
                for mine, new in zip(results, self._play_round(seed, range(deals, deals + n),
                                                               roles, play), strict=True):  # fmt: skip
                    mine.extend(new)
                deals += n
            slices = self._slices(results)
            decision = decide(candidate, champion, slices, self.config)
            games = decision.games
            if decision.verdict is not Verdict.CONTINUE:
                break
            if self.config.max_games is not None and games >= self.config.max_games:
                break  # decide() rejects at max_games; this guards a misconfigured loop
        verdict = "promote" if decision.verdict is Verdict.PROMOTE else "reject"
        est, low, high, gap, gap_low, gap_high = _finite_gap(decision, games)
        figures = [slice_figures(s, rs, summary, self.config.slice_level)
                   for s, rs, summary in zip(slices, results, decision.slices, strict=True)]  # fmt: skip
        return GateOutcome(
            candidate.version, champion.version, verdict, decision.reason, games,
            est, low, high, gap, gap_low, gap_high, decision.llr,
            time.perf_counter() - started, tuple(f.row(games) for f in figures),
        )  # fmt: skip


class GateService:
    """What the gatekeeper actor serves: :class:`Gatekeeper` plus a ``play`` for its benches.

    ``play`` defaults to one in-process :class:`BenchWorker` (no Ray); the Ray actor passes a
    function that fans tasks out over its pool of bench-worker actors.
    """

    def __init__(
        self, config: GateServiceConfig, *, play: PlayFn | None = None, parallelism: int = 1
    ) -> None:
        pin_threads(config.torch_threads)  # its benches may play here (no pool given)
        self.config = config
        self.gatekeeper = Gatekeeper(config, parallelism=parallelism)
        if play is None:
            worker = BenchWorker(config)

            def play_here(tasks: Sequence[BenchTask]) -> list[tuple[SpecResult, ...]]:
                return [worker.play(t) for t in tasks]

            play = play_here
        self.play = play

    def bench(
        self, candidate: int, parent: int, candidate_uri: str, champion: int, champion_uri: str
    ) -> GateOutcome:
        return self.gatekeeper.bench(
            Contender(candidate, parent), candidate_uri, Contender(champion), champion_uri,
            self.play,
        )  # fmt: skip

    def anchors(self, version: int, uri: str) -> AnchorReport:
        """The champion's games against the fixed anchors and its anchored ratings, and its
        exploitability where the game is small enough to solve."""
        report = measure_anchors(self.config, version, uri, self.play)
        solved = champion_exploitability(self.config, version, uri)
        return replace(report, exploitability=solved) if solved else report
