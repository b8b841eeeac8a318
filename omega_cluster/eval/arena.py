"""The arena: matches between players at one table, seats rotated over shared deals.

Everything that compares players (the CLI's ``arena`` command, the gatekeeper's bench games, the
Elo anchors) plays through :func:`play_match`, which turns a game, one player per seat and a seed
into a :class:`MatchResult`: one :class:`GameRecord` per game and one :class:`PlayerResult` per
player, with 95% intervals from :mod:`omega_cluster.eval.stats`.

Seats and seeds (the rule). With ``N = game.num_players`` and ``rotate_seats=True``, game ``i`` of a
match plays deal ``d = i // N`` at rotation ``r = i % N``: match player ``j`` sits at seat
``(j + r) % N``. So every deal is played ``N`` times, once with each player in each seat, which
cancels both the luck of the deal and the seat advantage (first player, dealer, blinds) from the
comparison — the duplicate-bridge idea (duplicate scoring of the same deal at every seat). If
``games`` is not a multiple of ``N``, the last deal is played only at rotations
``0 … games mod N − 1``; seats are then slightly unbalanced, :attr:`MatchResult.balanced` is false
and the table says so. With ``rotate_seats=False`` player ``j`` always sits at seat ``j`` and game
``i`` plays deal ``i``.

Randomness is derived, never shared, so a match replays exactly from its seed and a deal is the
same whoever sits where: the deal seed is :func:`~omega_cluster.games.chance.derive_seed` ``(seed, "deal", d)``; it is passed
to ``new_initial_state`` (implicit chance: shuffles) and seeds the chance ``random.Random`` that
samples explicit chance nodes (Kuhn's, Leduc's and Goofspiel's deals), which therefore depends on
the deal only. Each seat's player gets its own ``random.Random`` from ``(seed, "player", i, seat)``.
A game without chance (connect four, tic-tac-toe) between deterministic players (a greedy
network) would repeat one game on every deal, so :func:`play_game` can open each deal with
``opening`` decisions drawn uniformly from the legal actions by an rng of the deal seed alone:
the deal is then its opening, shared by every seating of it (the gate's paired deals).
Per step the arena uses ``random.Random`` rather than numpy, whose per-call overhead is larger
than a draw (see :mod:`omega_cluster.games.api`).

Benches that are cut into chunks and played elsewhere (Ray workers) describe each game as data
instead: :mod:`omega_cluster.eval.matches` (match specifications, slices, merging) and
:mod:`omega_cluster.eval.paired` (A and B on the same deals) play them through :func:`play_game`.

At a simultaneous node every acting player is asked for its action on the same state and the
joint action is applied. Player actions go through the checked ``apply_action`` /
``apply_joint_action``, so a buggy player fails loudly with the game's illegal-move message.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from omega_cluster.errors import UserError
from omega_cluster.eval.stats import ConfidenceInterval, mean_ci, wilson_interval
from omega_cluster.eval.table import format_table, print_table, results_table
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.chance import derive_seed, sample_chance
from omega_cluster.games.player import Player
from omega_cluster.players.registry import make_player

__all__ = [
    "DEFAULT_MAX_STEPS",
    "ArenaError",
    "CountsHook",
    "GameRecord",
    "MatchResult",
    "PlayerResult",
    "format_table",
    "play_game",
    "play_match",
    "print_table",
    "progress_bar",
    "results_table",
]

CountsHook = Callable[[State], Mapping[str, Sequence[float]]]
"""Game-specific counts of a finished game: name -> one value per seat (e.g. trains opened)."""

DEFAULT_MAX_STEPS = 1_000_000  # a game that runs longer is taken to be stuck in a loop


class ArenaError(UserError, ValueError):
    """Bad match arguments (table size, game count, seed) or a game that does not end."""


@dataclass(frozen=True)
class GameRecord:
    """One finished game. Per-seat tuples are indexed by seat; ``seating`` maps seats to players."""

    index: int  # position in the match (0 for a lone play_game)
    deal: int  # deal index: index // N when seats rotate, else index
    deal_seed: int  # seed of new_initial_state and of the chance rng
    rotation: int  # r: match player j sits at seat (j + r) % N
    seating: tuple[int, ...]  # seating[seat] = index of the match player in that seat
    returns: tuple[float, ...]  # float[N] per seat, State.returns()
    win_shares: tuple[float, ...]  # float[N] per seat, sums to 1 (tied winners share)
    scores: tuple[float, ...]  # float[N] per seat, the game's natural score
    num_decisions: int  # player decisions (each acting player at a simultaneous node counts one)
    history_length: int  # len(state.history): chance outcomes and joint actions included
    counts: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # per seat, from the hook

    def seat_of(self, player: int) -> int:
        """The seat where match player ``player`` sat."""
        return self.seating.index(player)


@dataclass(frozen=True)
class PlayerResult:
    """One player's figures over a match. Fair share = N × mean win share: 1.0 is par."""

    label: str  # unique in the match: "ensign#2" when a name repeats
    index: int  # position in the players given to play_match
    games: int
    wins: float  # sum of win shares
    win_rate: float  # wins / games
    win_rate_ci: ConfidenceInterval  # Wilson interval
    fair_share: (
        float  # N × mean win share; N for a player who always wins, 0 for one who never does
    )
    fair_share_ci: ConfidenceInterval  # t interval on the per-game N × win share
    mean_return: float
    return_ci: ConfidenceInterval
    mean_score: float
    score_ci: ConfidenceInterval
    seat_games: tuple[int, ...]  # int[N]: games played in each seat
    counts: Mapping[str, float] = field(default_factory=dict)  # hook counts, mean per game


@dataclass(frozen=True)
class MatchResult:
    """A whole match: its arguments, one record per game and one result per player."""

    game: str  # game.spec.name
    params: Mapping[str, Any]  # the game's resolved parameters
    num_players: int
    games: int
    seed: int
    rotate_seats: bool
    players: tuple[PlayerResult, ...]
    records: tuple[GameRecord, ...]
    elapsed_s: float = field(default=0.0, compare=False)  # wall time; not part of equality

    @property
    def balanced(self) -> bool:
        """Whether every player sat in every seat equally often."""
        return all(len(set(p.seat_games)) == 1 for p in self.players)

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(p.label for p in self.players)

    def player(self, label: str) -> PlayerResult:
        for result in self.players:
            if result.label == label:
                return result
        raise KeyError(f"no player {label!r} in this match; players: {', '.join(self.labels)}")


def play_game(
    game: Game,
    players_by_seat: Sequence[Player],
    *,
    seed: int,
    rngs: Sequence[random.Random] | None = None,
    counts: CountsHook | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    opening: int = 0,
) -> GameRecord:
    """Play one game of deal ``seed`` with ``players_by_seat[s]`` in seat ``s``; its first
    ``opening`` decisions are the deal's random opening (module docstring), not the players'.

    ``rngs`` (one per seat) default to ``derive_seed(seed, "player", 0, seat)``.
    """
    _check_table(game, players_by_seat)
    if isinstance(opening, bool) or not isinstance(opening, int) or opening < 0:
        raise ArenaError(f"opening must be an int >= 0 (decisions), got {opening!r}")
    if rngs is None:
        rngs = [random.Random(derive_seed(seed, "player", 0, s)) for s in range(game.num_players)]
    return _play(game, players_by_seat, seed, rngs, counts, max_steps, 0, 0, 0, None, opening)


def play_match(
    game: Game,
    players: Sequence[Player | str],
    *,
    games: int,
    seed: int,
    rotate_seats: bool = True,
    progress: bool = False,
    labels: Sequence[str] | None = None,
    counts: CountsHook | None = None,
    level: float = 0.95,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> MatchResult:
    """Play ``games`` games between ``players`` (one per seat) with the seat rule of the module.

    A ``str`` player is a spec for :func:`omega_cluster.players.registry.make_player` and labels
    itself with the spec. ``labels`` override the names; repeated names get ``#k`` suffixes.
    ``counts`` adds game-specific per-seat counts to each record and their means to each player.
    """
    built, names = _build_players(game, players)
    _check_table(game, built)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ArenaError(f"games must be a positive int, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArenaError(f"seed must be an int, got {seed!r}")
    if labels is not None:
        if len(labels) != len(built):
            raise ArenaError(f"{len(labels)} labels for {len(built)} players")
        names = [str(label) for label in labels]
    n = game.num_players
    started = time.perf_counter()
    records: list[GameRecord] = []
    with progress_bar(progress, games, game.spec.name) as advance:
        for i in range(games):
            deal, rotation = (i // n, i % n) if rotate_seats else (i, 0)
            seating = tuple((s - rotation) % n for s in range(n))  # player j at seat (j + r) % n
            deal_seed = derive_seed(seed, "deal", deal)
            by_seat = [built[j] for j in seating]
            rngs = [random.Random(derive_seed(seed, "player", i, s)) for s in range(n)]
            record = _play(
                game, by_seat, deal_seed, rngs, counts, max_steps, i, deal, rotation, seating
            )
            records.append(record)
            advance()
    summaries = tuple(
        _summarize(j, label, records, n, level) for j, label in enumerate(_unique_labels(names))
    )
    return MatchResult(
        game=game.spec.name,
        params=dict(game.params),
        num_players=n,
        games=games,
        seed=seed,
        rotate_seats=rotate_seats,
        players=summaries,
        records=tuple(records),
        elapsed_s=time.perf_counter() - started,
    )


def _play(
    game: Game,
    by_seat: Sequence[Player],
    deal_seed: int,
    rngs: Sequence[random.Random],
    counts: CountsHook | None,
    max_steps: int,
    index: int,
    deal: int,
    rotation: int,
    seating: tuple[int, ...] | None,
    opening: int = 0,
) -> GameRecord:
    """The game loop: chance from the deal's rng, one action per acting player (the first
    ``opening`` decisions uniform from the deal's opening rng), until the end."""
    state = game.new_initial_state(deal_seed)
    chance_rng = random.Random(derive_seed(deal_seed, "chance"))
    opening_rng = random.Random(derive_seed(deal_seed, "opening"))
    decisions = steps = 0

    def act(player: int) -> int:
        if decisions < opening:  # the deal's opening
            legal = state.legal_actions(player)
            return legal[opening_rng.randrange(len(legal))]
        return by_seat[player].act(state, player, rngs[player])

    while acting := state.current_players:
        steps += 1
        if steps > max_steps:
            raise ArenaError(
                f"{game.spec.name}: deal seed {deal_seed} did not end within {max_steps} steps"
            )
        if acting[0] == CHANCE:
            state.apply_action_unchecked(
                sample_chance(state.chance_outcomes(), chance_rng.random())
            )
        elif len(acting) == 1:
            state.apply_action(act(acting[0]))
            decisions += 1
        else:
            joint = tuple(act(p) for p in acting)
            state.apply_joint_action(joint)
            decisions += len(acting)
    n = game.num_players
    extra = {k: tuple(float(v) for v in vs) for k, vs in (counts(state) if counts else {}).items()}
    for key, values in extra.items():
        if len(values) != n:
            raise ArenaError(f"counts hook: {key!r} has {len(values)} values for {n} seats")
    return GameRecord(
        index=index,
        deal=deal,
        deal_seed=deal_seed,
        rotation=rotation,
        seating=seating if seating is not None else tuple(range(n)),
        returns=tuple(float(r) for r in state.returns()),
        win_shares=tuple(float(w) for w in state.win_shares()),
        scores=tuple(float(s) for s in state.scores()),
        num_decisions=decisions,
        history_length=len(state.history),
        counts=extra,
    )


def _summarize(
    j: int, label: str, records: Sequence[GameRecord], n: int, level: float
) -> PlayerResult:
    seats = [r.seat_of(j) for r in records]
    shares = [r.win_shares[s] for r, s in zip(records, seats, strict=True)]
    returns = [r.returns[s] for r, s in zip(records, seats, strict=True)]
    scores = [r.scores[s] for r, s in zip(records, seats, strict=True)]
    wins = sum(shares)
    fair = mean_ci([n * x for x in shares], level)
    ret = mean_ci(returns, level)
    score = mean_ci(scores, level)
    keys = records[0].counts.keys() if records else ()
    counts = {
        k: sum(r.counts[k][s] for r, s in zip(records, seats, strict=True)) / len(records)
        for k in keys
    }
    return PlayerResult(
        label=label,
        index=j,
        games=len(records),
        wins=wins,
        win_rate=wins / len(records),
        win_rate_ci=wilson_interval(min(wins, len(records)), len(records), level),
        fair_share=fair.estimate,
        fair_share_ci=fair,
        mean_return=ret.estimate,
        return_ci=ret,
        mean_score=score.estimate,
        score_ci=score,
        seat_games=tuple(seats.count(s) for s in range(n)),
        counts=counts,
    )


def _build_players(game: Game, players: Sequence[Player | str]) -> tuple[list[Player], list[str]]:
    if isinstance(players, str):
        raise ArenaError(f"players must be a sequence of players or specs, not the str {players!r}")
    built: list[Player] = []
    names: list[str] = []
    for p in players:
        if isinstance(p, str):
            built.append(make_player(p, game))
            names.append(p.strip())
        else:
            built.append(p)
            names.append(str(getattr(p, "name", type(p).__name__)))
    return built, names


def _check_table(game: Game, players: Sequence[Any]) -> None:
    n = game.num_players
    if len(players) != n:
        raise ArenaError(
            f"{game.spec.name} with players={n} seats {n} players, got {len(players)}: "
            f"give one player per seat (or build the game with players={len(players)}; "
            f"it supports {game.spec.min_players}–{game.spec.max_players})"
        )
    for seat, p in enumerate(players):
        if not callable(getattr(p, "act", None)):
            raise ArenaError(f"seat {seat}: {p!r} is not a player (it has no act method)")


def _unique_labels(names: Sequence[str]) -> list[str]:
    """Repeated names get ``#1``, ``#2``… in order; unique names stay as they are."""
    seen: dict[str, int] = {}
    labels = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        labels.append(f"{name}#{seen[name]}" if names.count(name) > 1 else name)
    return labels


@contextmanager
def progress_bar(enabled: bool, total: int, what: str) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr (the table goes to stdout), or a no-op ``advance``."""
    if not enabled:
        yield lambda: None
        return

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(
        "{task.description}", *columns, console=Console(stderr=True), transient=True
    ) as bar:
        task = bar.add_task(f"{what} games", total=total)
        yield lambda: bar.advance(task)
