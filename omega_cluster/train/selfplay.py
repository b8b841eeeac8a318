"""Self-play: K games played concurrently, every decision turned into a training record.

A pure loop (no Ray, no I/O): :class:`SelfPlay` plays ``config.games`` games of one game, keeping
``config.concurrent_games`` (K) of them in flight, and yields :class:`~omega_cluster.data.Record`
rows as games finish. The :mod:`omega_cluster.cluster` actors wrap it and write the records to
shards (:class:`~omega_cluster.data.ShardWriter`); the learner (:mod:`.learner`) trains on them.

Two modes (``SelfPlayConfig.mode``):

* ``"search"`` — every decision is a search: ISMCTS for turn-based games, SM-MCTS where moves are
  simultaneous (each acting player searches for its own seat and is its own record). All K games'
  searches advance together through :func:`~omega_cluster.search.batching.run_searches`, so their
  leaves share one batched evaluator call (a :class:`~omega_cluster.model.NetworkEvaluator`: the
  network leaf; or a rollout evaluator: the rollout leaf). Where the game has compiled kernels
  (``fast=False`` keeps the Python loop) the round's searches run compiled in one batched call
  (:mod:`._fast`): ISMCTS, or for a simultaneous game SM-MCTS. The visit distribution is the policy
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

import dataclasses
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from omega_cluster.data import Record
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import derive_seed, sample_chance
from omega_cluster.games.encoding import Encoder
from omega_cluster.search.batching import BatchStats, SearchSteps, run_searches
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.fast.rng import SplitMixRandom
from omega_cluster.search.ismcts import ISMCTS
from omega_cluster.search.result import SearchResult
from omega_cluster.search.smmcts import SMMCTS
from omega_cluster.train._fast import FastSearches, FastSMSearches
from omega_cluster.train._policy import TeacherEvaluator, sample_index
from omega_cluster.train._records import (
    PendingDecision,
    game_params_json,
    game_records,
)
from omega_cluster.train.config import MODES, SelfPlayConfig, SelfPlayError, SelfPlayStats

__all__ = [
    "MODES",
    "SelfPlay",
    "SelfPlayConfig",
    "SelfPlayError",
    "SelfPlayStats",
    "TeacherEvaluator",
    "play_games",
]


class _Flight:
    """One game in flight: its state, streams and the decisions waiting for the end."""

    __slots__ = ("chance_rng", "index", "moves", "pending", "search_rng", "seed", "state")

    def __init__(self, game: Game, index: int, seed: int) -> None:
        self.index = index
        self.seed = derive_seed(seed, "game", index)
        self.state: State = game.new_initial_state(self.seed)
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
        if encoder.game_name != game.spec.name:
            raise SelfPlayError(
                f"encoder {encoder.name} v{encoder.version} serves {encoder.game_name}, "
                f"not {game.spec.name}"
            )
        if not callable(getattr(evaluator, "evaluate", None)):
            raise SelfPlayError(f"evaluator must have evaluate(leaves), got {evaluator!r}")
        self.game, self.encoder, self.config, self.evaluator = game, encoder, config, evaluator
        self.simultaneous = game.spec.simultaneous
        self._params = game_params_json(game)
        self._searches: dict[tuple[int, float, bool], Any] = {}
        self._batch = BatchStats()
        self._counts = dict.fromkeys(
            ("games", "truncated", "decisions", "records", "searches", "full", "simulations"), 0
        )
        self._seconds = 0.0
        self.fast: FastSearches | FastSMSearches | None = None  # compiled searches, if they apply
        self.fast_reason = "fast=False" if fast else "mode 'network' searches nothing"
        if fast and config.mode == "search" and self.simultaneous:
            # the searches' configuration (checked as the Python searches check it)
            probe = SMMCTS(game, evaluator, simulations=config.search.simulations, fast=False,
                           **config.search_options)  # fmt: skip
            self.fast, self.fast_reason = FastSMSearches.plan_for(game, probe.config, evaluator)
        elif fast and config.mode == "search":
            self.fast, self.fast_reason = FastSearches.plan(game, config.search, evaluator)

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
                active.append(_Flight(self.game, index, cfg.seed))
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
        """Fill ``action`` (and the targets) of every unforced choice, all games at once."""
        cfg = self.config
        todo = [c for c in choices if len(c.legal) > 1]
        for c in choices:
            if len(c.legal) == 1:
                c.action = c.legal[0]
        if cfg.mode == "network":
            self._decide_by_network(todo)
            return
        for c in todo:
            c.full = c.flight.search_rng.random() < cfg.full_search_probability
        if self.fast is not None:
            results = self._search_fast(todo)
        else:
            steps: list[SearchSteps[SearchResult]] = []
            for c in todo:
                temperature = cfg.temperature_at(c.flight.moves)
                search = self._search(c.full, temperature)
                steps.append(search.steps(c.flight.state, c.player, c.flight.search_rng))
            results = run_searches(steps, self.evaluator, self.game.num_players, stats=self._batch)
        for c, result in zip(todo, results, strict=True):
            c.result, c.action = result, result.action
            c.policy = np.asarray(result.policy, np.float32)
            c.root_value = np.asarray(result.root_value, np.float32)
            self._counts["searches"] += 1
            self._counts["full"] += c.full
            self._counts["simulations"] += result.diagnostics.simulations

    def _decide_by_network(self, todo: list[_Choice]) -> None:
        leaves = [Leaf(c.flight.state, c.player, tuple(c.legal), c.flight.search_rng) for c in todo]
        answers: list[LeafEvaluation] = self.evaluator.evaluate(leaves) if leaves else []
        self._batch.calls += bool(leaves)
        self._batch.leaves += len(leaves)
        for c, answer in zip(todo, answers, strict=True):
            if answer.prior is None:
                raise SelfPlayError(
                    f"mode 'network' samples moves from the evaluator's prior, but "
                    f"{self.evaluator!r} returned none (use a NetworkEvaluator)"
                )
            prior = np.asarray(answer.prior, np.float64)
            temperature = self.config.temperature_at(c.flight.moves)
            c.action = c.legal[sample_index(prior, temperature, c.flight.search_rng)]
            if self.config.record_prior:  # a teacher's labels: its values are no search backups
                c.policy, c.full = prior.astype(np.float32), True
            else:
                c.root_value = np.asarray(answer.values, np.float32)

    def _search_fast(self, todo: list[_Choice]) -> list[SearchResult]:
        """Every choice's search on the compiled path, in one batched call (see ``_fast``)."""
        assert self.fast is not None
        cfg = self.config
        if isinstance(self.fast, FastSMSearches):
            return self._search_fast_sm(self.fast, todo)
        configs = []
        for c in todo:
            noise = cfg.search.dirichlet_fraction if c.full else 0.0
            budget = cfg.search.simulations if c.full else cfg.fast_simulations
            configs.append(dataclasses.replace(
                cfg.search, simulations=budget, temperature=cfg.temperature_at(c.flight.moves),
                dirichlet_fraction=noise,
            ))  # fmt: skip
        calls, leaves = self.fast.calls, self.fast.leaves
        results = self.fast.search([c.flight.state for c in todo], [c.player for c in todo],
                                   configs, [c.flight.search_rng for c in todo])  # fmt: skip
        self._batch.calls += self.fast.calls - calls
        self._batch.leaves += self.fast.leaves - leaves
        return results

    def _search_fast_sm(self, fast: FastSMSearches, todo: list[_Choice]) -> list[SearchResult]:
        """Every acting player's SM-MCTS of this round in one batched call (see ``_fast``)."""
        cfg = self.config
        budgets = [cfg.search.simulations if c.full else cfg.fast_simulations for c in todo]
        return fast.search([c.flight.state for c in todo], [c.player for c in todo], budgets,
                           [cfg.temperature_at(c.flight.moves) for c in todo],
                           [c.flight.search_rng for c in todo], self._batch)  # fmt: skip

    def _search(self, full: bool, temperature: float) -> Any:
        """The search object of one (budget, temperature, noise) (built once, then reused)."""
        cfg = self.config
        budget = cfg.search.simulations if full else cfg.fast_simulations
        noisy = full and cfg.search.dirichlet_fraction > 0
        key = (budget, temperature, noisy)
        search = self._searches.get(key)
        if search is None:
            if self.simultaneous:
                search = SMMCTS(self.game, self.evaluator, simulations=budget,
                                temperature=temperature, fast=False,
                                **cfg.search_options)  # fmt: skip
            else:  # root noise on full searches only
                noise = cfg.search.dirichlet_fraction if noisy else 0.0
                search = ISMCTS(self.game, self.evaluator, cfg.search, simulations=budget,
                                temperature=temperature, dirichlet_fraction=noise,
                                fast=self.fast is not None)  # fmt: skip
            self._searches[key] = search
        return search

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
        state, enc = c.flight.state, self.encoder
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
            )
        )

    def _finish(self, flight: _Flight) -> list[Record]:
        self._counts["games"] += 1
        if not flight.pending or flight.state.current_players:  # abandoned, or nothing recorded
            return []
        cfg = self.config
        records = game_records(
            flight.state,
            flight.pending,
            game_seed=flight.seed,
            game_id=f"{cfg.actor}-{cfg.seed}-{flight.index}",
            params_json=self._params,
            champion_version=cfg.champion_version,
            encoder_version=self.encoder.version,
            actor=cfg.actor,
            weight=cfg.record_weight,
            encoder=self.encoder,
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
