"""Games that teach n-tuple tables: each seat's chain of end-of-turn positions, as sparse updates.

A seat's chain is the positions right after each of its own decisions that had a choice (a
forced move, with one legal action, and chance are played through and add nothing), each read
by ``patterns.extract(state, seat)``; its target is the seat's win share when the round ends
(per-round credit: a game with rounds, Mexican Train, gives each seat one chain per round,
ending in that round's winners sharing 1; the move that ends a round adds no position, its
outcome is the target).
:func:`play_games` plays a list of :class:`GameTask` with one :class:`GameKit` (the same code runs
in the one-process loop and in the Ray actors) and returns one :class:`GameResult` per game: the
sparse TD update made on the tables the game was played on, and the outcome.

The players: a *watched* game has the game's heuristic at every seat (blank tables cannot finish
a game well), a self-play game has ``policy(tables)`` at every seat, where ``policy`` is any
picklable factory ``tables -> Player``; :class:`LookaheadPolicy` is the default (a depth-limited
search with the tables as its leaf).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from omega_cluster.errors import UserError
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.patterns import PatternSet
from omega_cluster.games.player import Player
from omega_cluster.games.registry import game_plugin
from omega_cluster.search.ntuple import Chain, SparseUpdate, TupleTables, game_update, seat_targets
from omega_cluster.train._records import round_outcomes

__all__ = [
    "GameKit",
    "GameResult",
    "GameTask",
    "LookaheadPolicy",
    "Policy",
    "TablesSetupError",
    "game_seed",
    "heuristic_of",
    "pattern_set",
    "play_chains",
    "play_games",
]

Policy = Callable[[TupleTables], Player]
"""A factory of the self-play player that reads ``tables`` (picklable: it travels to actors)."""

MAX_STEPS = 100_000


class TablesSetupError(UserError, ValueError):
    """Settings or a game that cannot train tables (bad values, no patterns, no heuristic)."""


def pattern_set(game: Game) -> PatternSet:
    """The game's n-tuple windows (plugin hook ``ntuple_patterns``); one line when it has none."""
    factory = game_plugin(game).hook("ntuple_patterns")
    if factory is None:
        raise TablesSetupError(
            f"game {game.spec.name!r} declares no n-tuple patterns (plugin hook ntuple_patterns)"
        )
    patterns: PatternSet = factory(game)
    return patterns


def heuristic_of(game: Game) -> Callable[[Game], Player]:
    """The factory of the game's ``heuristic`` player, which plays the watched games."""
    factory = game_plugin(game).player("heuristic")
    if factory is None:
        raise TablesSetupError(
            f"game {game.spec.name!r} has no 'heuristic' player for the watched games and the "
            "validation (watch=0 validate=0 trains by self-play alone)"
        )
    return factory


def game_seed(seed: int, index: int) -> int:
    """The deal of training game number ``index`` of a run seeded ``seed`` (fixed, resumable)."""
    return (seed * 1_000_003 + index) % (2**31 - 1)


@dataclass(frozen=True)
class GameTask:
    """One game to play: its number in the run and whether the heuristic plays it."""

    index: int
    seed: int
    watched: bool


@dataclass(frozen=True)
class GameResult:
    """What one game gave: its update, every seat's win share and its decisions."""

    index: int
    watched: bool
    update: SparseUpdate
    shares: tuple[float, ...]
    decisions: int


@dataclass(frozen=True)
class GameKit:
    """Everything a process needs to play training games (picklable)."""

    game: Game
    patterns: PatternSet
    heuristic: Callable[[Game], Player] | None
    policy: Policy | None
    lam: float


def play_chains(
    game: Game, players: Sequence[Player], patterns: PatternSet, seed: int, outputs: int
) -> tuple[list[Chain], State, int]:
    """Play one game (``players[p]`` at seat p, deal ``seed``); every seat's chains (one per
    round, module doc), the final state and the number of decisions with a choice."""
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    n = game.num_players
    taken: list[tuple[int, int, np.ndarray]] = []  # (seat, history index, indices after)
    steps = 0
    while True:
        acting = state.current_players
        if not acting:
            break
        if acting[0] == CHANCE:
            state.apply_action_unchecked(sample_chance(state.chance_outcomes(), rng.random()))
        else:
            chose = [p for p in acting if len(state.legal_actions(p)) > 1]
            moves = tuple(_move(state, p, players[p], rng) for p in acting)
            at, deal = len(state.history), getattr(state, "round_index", None)
            if len(acting) == 1:
                state.apply_action(moves[0])
            else:
                state.apply_joint_action(moves)
            for p in chose:
                # a move that ends a round shows the next deal: the round's outcome is its target
                if getattr(state, "round_index", None) == deal:
                    taken.append((p, at, patterns.extract(state, p)))
                else:
                    taken.append((p, at, np.zeros(0, dtype=np.int64)))
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError(f"game {seed} did not end within {MAX_STEPS} steps")
    return _round_chains(state, taken, n, outputs), state, len(taken)


def _round_chains(
    state: State, taken: list[tuple[int, int, np.ndarray]], n: int, outputs: int
) -> list[Chain]:
    """Each seat's positions cut into rounds, each ending in its round's win shares (the game's
    final shares for a game without rounds)."""
    final = np.asarray(state.win_shares(), dtype=np.float64)
    outcomes = round_outcomes(state, [at for _, at, _ in taken])
    chains: dict[tuple[int, int], list[np.ndarray]] = {}
    targets: dict[tuple[int, int], np.ndarray] = {}
    rounds = getattr(state, "round_of_decision", None)
    for (seat, at, ix), shares in zip(taken, outcomes, strict=True):
        key = (seat, int(rounds(at)) if rounds is not None and shares is not None else 0)
        chains.setdefault(key, [])
        if ix.size:
            chains[key].append(ix)
        targets[key] = seat_targets(list(final if shares is None else shares), seat, outputs)
    return [Chain(chains[key], targets[key]) for key in sorted(chains)]


def _move(state: State, seat: int, player: Player, rng: random.Random) -> int:
    legal = state.legal_actions(seat)
    return legal[0] if len(legal) == 1 else player.act(state, seat, rng)


def play_games(kit: GameKit, tables: TupleTables, tasks: Sequence[GameTask]) -> list[GameResult]:
    """Play ``tasks`` on ``tables`` (read, not changed) and return their updates (module doc)."""
    n = kit.game.num_players
    results = []
    watchers: list[Player] | None = None
    selfplay: list[Player] | None = None
    for task in tasks:
        if task.watched:
            if kit.heuristic is None:
                raise TablesSetupError("a watched game needs the game's heuristic player")
            watchers = watchers or [kit.heuristic(kit.game) for _ in range(n)]
            players = watchers
        else:
            if kit.policy is None:
                raise TablesSetupError("a self-play game needs a policy")
            selfplay = selfplay or [kit.policy(tables) for _ in range(n)]
            players = selfplay
        chains, state, decisions = play_chains(
            kit.game, players, kit.patterns, task.seed, tables.outputs
        )
        update = game_update(tables, chains, kit.lam)
        results.append(
            GameResult(task.index, task.watched, update, tuple(state.win_shares()), decisions)
        )
    return results


@dataclass(frozen=True)
class LookaheadPolicy:
    """The default self-play player: a depth-``depth`` lookahead search with the tables leaf
    over ``worlds`` sampled worlds (``omega_cluster.players.lookahead``)."""

    game: Game
    depth: int = 1
    worlds: int = 8

    def __call__(self, tables: TupleTables) -> Player:
        from omega_cluster.players.lookahead import LookaheadPlayer  # the search side's player
        from omega_cluster.search.ntuple import TableEvaluator

        evaluator = TableEvaluator(tables, self.game.num_players)
        player: Player = LookaheadPlayer(self.game, evaluator, depth=self.depth, worlds=self.worlds)
        return player
