"""Self-play: K games played concurrently, every decision turned into a training record.

A pure loop (no Ray, no I/O): :class:`SelfPlay` plays ``config.games`` games of one game, keeping
``config.concurrent_games`` (K) of them in flight, and yields :class:`~omega_cluster.data.Record`
rows as games finish. :meth:`SelfPlay.over_fleet` plays a mix of tables (a fleet: table sizes ×
objectives): each game draws its table from the mix by its index, one network plays every seat
of every table (one encoder and leaf evaluator per table, :mod:`._tables`), and each decision
round searches the games of each table together. The :mod:`omega_cluster.cluster` actors wrap it and write the records to
shards (:class:`~omega_cluster.data.ShardWriter`); the learner (:mod:`.learner`) trains on them.

Two modes (``SelfPlayConfig.mode``):

* ``"search"`` — every decision is a search: ISMCTS for turn-based games, SM-MCTS where moves are
  simultaneous (each acting player searches for its own seat and is its own record). All K games'
  searches of a table go through one batched search
  (:func:`~omega_cluster.search.batched.batched_search`, its path chosen once per table): the
  compiled driver where the game, search and leaf allow it (``fast=False`` keeps the Python
  loop), one forward pass per batch of leaves across the round's searches; else the Python loop
  (:func:`~omega_cluster.search.batching.run_searches`), whose leaves share one batched evaluator
  call (a :class:`~omega_cluster.model.NetworkEvaluator`: the network leaf; or a rollout
  evaluator: the rollout leaf). The visit distribution is the policy
  target (AlphaZero). **Playout-cap randomisation** (Wu 2019, KataGo): with probability
  ``full_search_probability`` a move gets a full search of ``search.simulations`` and its visits are a
  policy target (``policy_weight=1``), else a cheap search of ``fast_simulations`` that only picks
  the move (``policy_weight=0``; the row still trains the value). Dirichlet root noise goes on
  full searches only (KataGo), so the cheap moves stay the network's best play.
* ``"network"`` — no search: each move is sampled from the network's policy (the evaluator's
  prior), all K games' positions in one forward pass: the data of the actor-critic learner
  (REINFORCE with a baseline, Williams 1992). With ``record_prior`` the prior
  itself is the policy target: with a :class:`TeacherEvaluator` (a rule-based player's moves as a
  one-hot prior) this writes the labelled games of a warm start (weak-teacher
  records, down-weighted through ``record_weight``).

Both use a temperature schedule (``temperature`` for each game's first ``temperature_moves``
decisions, then ``final_temperature``; 0 = argmax) for exploration early and strength late.
Chance nodes are sampled from ``chance_outcomes`` with the game's own rng; moves with a single
legal action are played without a search (recorded only with ``record_forced``). Every game is
reproducible: its seed (``Game.replay(seed, history)`` rebuilds any recorded position), chance rng
and search rng derive from ``(config.seed, game index)`` only.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from omega_cluster.data import Record
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import derive_seed, sample_chance
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.fleet import Fleet
from omega_cluster.search.batched import Budget
from omega_cluster.search.batching import BatchStats
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.fast.rng import SplitMixRandom
from omega_cluster.search.result import SearchResult
from omega_cluster.train._policy import TeacherEvaluator, sample_index
from omega_cluster.train._records import PendingDecision, game_records
from omega_cluster.train._tables import Table, _Play, fleet_order, search_path, table_key
from omega_cluster.train.config import MODES, SelfPlayConfig, SelfPlayError, SelfPlayStats

__all__ = [
    "MODES",
    "SelfPlay",
    "SelfPlayConfig",
    "SelfPlayError",
    "SelfPlayStats",
    "Table",
    "TeacherEvaluator",
    "play_games",
]


class _Flight:
    """One game in flight: its state, streams and the decisions waiting for the end."""

    __slots__ = ("chance_rng", "index", "moves", "pending", "play", "search_rng", "seed", "state")

    def __init__(self, play: _Play, index: int, seed: int) -> None:
        self.play = play  # the game's table
        self.index = index
        self.seed = derive_seed(seed, "game", index)
        self.state: State = play.table.game.new_initial_state(self.seed)
        self.chance_rng = random.Random(derive_seed(seed, "chance", index))
        # splitmix64: the compiled search draws from this very stream (see ``_fast``)
        self.search_rng = SplitMixRandom(derive_seed(seed, "search", index))
        self.moves = 0  # player decisions so far
        self.pending: list[PendingDecision] = []


@dataclass
class _Choice:
    """One acting player's decision at the current node of a game in flight."""

    flight: _Flight
    player: int
    legal: list[int]
    full: bool = False  # a full search (policy target)
    action: int = -1
    result: SearchResult | None = None
    policy: np.ndarray | None = None
    root_value: np.ndarray | None = None


class SelfPlay:
    """Plays ``config.games`` games of ``game`` and yields their records (module docstring).

    ``evaluator``: the leaf evaluator of the searches (mode ``"search"``) or the policy that
    plays (mode ``"network"``: it must return a prior, e.g. a ``NetworkEvaluator``).
    ``encoder``: encodes each recorded position (observation and action features).
    :meth:`over_fleet` plays a mix of tables instead.
    """

    def __init__(
        self,
        game: Game,
        encoder: Encoder,
        config: SelfPlayConfig,
        *,
        evaluator: Evaluator,
        fast: bool = True,
    ) -> None:
        self._setup([Table(table_key(game), game, encoder, evaluator)], None, config, fast)

    @classmethod
    def over_fleet(
        cls, fleet: Fleet, tables: Sequence[Table], config: SelfPlayConfig, *, fast: bool = True
    ) -> SelfPlay:
        """Self-play over the mix: game ``i`` plays the table ``fleet.draw(config.seed, i)``
        (a retried chunk replays the same tables); ``tables`` holds one :class:`Table` per
        slice of ``fleet`` (one network in every evaluator). The compiled searches batch the
        games of each table together."""
        runner = cls.__new__(cls)
        runner._setup(fleet_order(fleet, tables), fleet, config, fast)
        return runner

    def _setup(
        self, tables: Sequence[Table], fleet: Fleet | None, config: SelfPlayConfig, fast: bool
    ) -> None:
        self.config, self.fleet = config, fleet
        self.plays = {t.key: _Play.of(t, config, fast) for t in tables}
        first = next(iter(self.plays.values()))
        # the first table's parts (the only table without a fleet)
        self.game, self.encoder = first.table.game, first.table.encoder
        self.evaluator = first.table.evaluator
        self.fast, self.fast_reason = first.fast, first.fast_reason
        self._batch = BatchStats()
        self._counts = dict.fromkeys(
            ("games", "truncated", "decisions", "records", "searches", "full", "simulations"), 0
        )
        self._slices = dict.fromkeys(self.plays, 0)
        self._seconds = 0.0

    @property
    def search_path(self) -> str:
        """``compiled`` where every table searches compiled, else the Python loop and why."""
        return search_path(list(self.plays.values()))

    def _table_of(self, index: int) -> _Play:
        if self.fleet is None:
            return next(iter(self.plays.values()))
        return self.plays[self.fleet.draw(self.config.seed, index).key]

    @property
    def stats(self) -> SelfPlayStats:
        c = self._counts
        return SelfPlayStats(
            games=c["games"],
            truncated_games=c["truncated"],
            decisions=c["decisions"],
            records=c["records"],
            searches=c["searches"],
            full_searches=c["full"],
            simulations=c["simulations"],
            evaluator_calls=self._batch.calls,
            leaves=self._batch.leaves,
            seconds=self._seconds,
            slices=dict(self._slices),
        )

    # -- the loop: advance every game to a decision, decide them all at once, repeat ------------
    def play(self) -> Iterator[Record]:
        """Yield every record of every game, game by game as they finish (call once)."""
        cfg = self.config
        upcoming = iter(range(cfg.games))
        active: list[_Flight] = []
        mark = time.perf_counter()  # time spent in the consumer (between yields) is not counted
        while True:
            while (
                len(active) < cfg.concurrent_games and (index := next(upcoming, None)) is not None
            ):
                active.append(_Flight(self._table_of(index), index, cfg.seed))
            if not active:
                break
            choices: list[_Choice] = []
            still: list[_Flight] = []
            for flight in active:
                node = self._advance(flight)
                if node is not None:
                    still.append(flight)
                    choices.extend(node)
                    continue
                records = self._finish(flight)
                if records:
                    now = time.perf_counter()
                    self._seconds += now - mark
                    yield from records
                    mark = time.perf_counter()
            active = still
            if choices:
                self._decide(choices)
                self._apply(choices)
        self._seconds += time.perf_counter() - mark

    def _advance(self, flight: _Flight) -> list[_Choice] | None:
        """Play chance nodes and forced moves; return the choices at the next real decision
        (None when the game is over or abandoned)."""
        state, cfg = flight.state, self.config
        while True:
            acting = state.current_players
            if not acting:
                return None
            if cfg.max_moves is not None and flight.moves >= cfg.max_moves:
                flight.pending.clear()
                self._counts["truncated"] += 1
                return None
            if acting[0] == CHANCE:
                chance = sample_chance(state.chance_outcomes(), flight.chance_rng.random())
                state.apply_action_unchecked(chance)
                continue
            choices = [_Choice(flight, p, list(state.legal_actions(p))) for p in acting]
            if any(len(c.legal) > 1 for c in choices):
                return choices
            for c in choices:  # every acting player is forced
                c.action = c.legal[0]
            self._apply(choices)

    def _decide(self, choices: list[_Choice]) -> None:
        """Fill ``action`` (and the targets) of every unforced choice: the games of each table
        at once (one batched search, or one forward pass, per table)."""
        cfg = self.config
        by_table: dict[str, list[_Choice]] = {}
        for c in choices:
            if len(c.legal) == 1:
                c.action = c.legal[0]
            else:
                by_table.setdefault(c.flight.play.table.key, []).append(c)
        for key, todo in by_table.items():
            play = self.plays[key]
            if cfg.mode == "network":
                self._decide_by_network(play, todo)
            else:
                self._decide_by_search(play, todo)

    def _decide_by_search(self, play: _Play, todo: list[_Choice]) -> None:
        cfg = self.config
        for c in todo:
            c.full = c.flight.search_rng.random() < cfg.full_search_probability
        assert play.searcher is not None  # mode 'search'
        results = play.searcher.run(
            [c.flight.state for c in todo], [c.player for c in todo],
            [self._budget(c) for c in todo], [c.flight.search_rng for c in todo],
            stats=self._batch,
        )  # fmt: skip
        for c, result in zip(todo, results, strict=True):
            c.result, c.action = result, result.action
            c.policy = np.asarray(result.policy, np.float32)
            c.root_value = np.asarray(result.root_value, np.float32)
            self._counts["searches"] += 1
            self._counts["full"] += c.full
            self._counts["simulations"] += result.diagnostics.simulations

    def _budget(self, c: _Choice) -> Budget:
        """The playout cap: a full search (its visits a policy target, root noise on) or a cheap
        one that only picks the move; the temperature of the game's move number."""
        cfg = self.config
        simulations = cfg.search.simulations if c.full else cfg.fast_simulations
        return Budget(simulations, cfg.temperature_at(c.flight.moves), noise=c.full)

    def _decide_by_network(self, play: _Play, todo: list[_Choice]) -> None:
        evaluator = play.table.evaluator
        leaves = [Leaf(c.flight.state, c.player, tuple(c.legal), c.flight.search_rng) for c in todo]
        answers: list[LeafEvaluation] = evaluator.evaluate(leaves) if leaves else []
        self._batch.calls += bool(leaves)
        self._batch.leaves += len(leaves)
        for c, answer in zip(todo, answers, strict=True):
            if answer.prior is None:
                raise SelfPlayError(
                    f"mode 'network' samples moves from the evaluator's prior, but "
                    f"{evaluator!r} returned none (use a NetworkEvaluator)"
                )
            prior = np.asarray(answer.prior, np.float64)
            temperature = self.config.temperature_at(c.flight.moves)
            c.action = c.legal[sample_index(prior, temperature, c.flight.search_rng)]
            if self.config.record_prior:  # a teacher's labels: its values are no search backups
                c.policy, c.full = prior.astype(np.float32), True
            else:
                c.root_value = np.asarray(answer.values, np.float32)

    def _apply(self, choices: list[_Choice]) -> None:
        """Record the choices and play them (a joint action where several players act)."""
        by_flight: dict[int, list[_Choice]] = {}
        for c in choices:
            by_flight.setdefault(id(c.flight), []).append(c)
        for group in by_flight.values():
            flight = group[0].flight
            state = flight.state
            for c in group:
                self._record(c)
            flight.moves += len(group)
            self._counts["decisions"] += len(group)
            if len(group) == 1:
                state.apply_action(group[0].action)
            else:
                state.apply_joint_action(tuple(c.action for c in group))

    def _record(self, c: _Choice) -> None:
        forced = len(c.legal) == 1
        if forced and not self.config.record_forced:
            return
        state, enc = c.flight.state, c.flight.play.table.encoder
        policy = c.policy
        if forced:
            policy = np.ones(1, np.float32)
        c.flight.pending.append(
            PendingDecision(
                history=tuple(state.history),
                player=c.player,
                observation=enc.encode_observation(state, c.player),
                legal=np.asarray(c.legal, np.int32),
                features=enc.encode_actions(state, c.player, c.legal),
                policy=policy,
                policy_weight=1.0 if (c.full and not forced) else 0.0,
                action=c.action,
                root_value=c.root_value,
                hidden_state=state.hidden_state(c.player),  # the true state: training only
            )
        )

    def _finish(self, flight: _Flight) -> list[Record]:
        self._counts["games"] += 1
        self._slices[flight.play.table.key] += 1
        if not flight.pending or flight.state.current_players:  # abandoned, or nothing recorded
            return []
        cfg = self.config
        records = game_records(
            flight.state,
            flight.pending,
            game_seed=flight.seed,
            game_id=f"{cfg.actor}-{cfg.seed}-{flight.index}",
            params_json=flight.play.params,
            champion_version=cfg.champion_version,
            encoder_version=flight.play.table.encoder.version,
            actor=cfg.actor,
            weight=cfg.record_weight,
            encoder=flight.play.table.encoder,
        )
        flight.pending = []
        self._counts["records"] += len(records)
        return records


def play_games(
    game: Game, encoder: Encoder, config: SelfPlayConfig, *, evaluator: Evaluator
) -> tuple[list[Record], SelfPlayStats]:
    """Run a whole self-play session: all its records and its stats."""
    runner = SelfPlay(game, encoder, config, evaluator=evaluator)
    records = list(runner.play())
    return records, runner.stats
