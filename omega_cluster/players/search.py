"""Search players: ISMCTS or SM-MCTS behind the Player protocol, usable in the arena.

:class:`SearchPlayer` turns a search (:class:`~omega_cluster.search.ismcts.ISMCTS` for turn-based
games, :class:`~omega_cluster.search.smmcts.SMMCTS` when ``game.spec.simultaneous``) and a leaf
evaluator into a :class:`~omega_cluster.games.player.Player`: ``act(state, player, rng)`` runs one
search for ``player`` and plays its chosen action. The registry (:mod:`.registry`) builds it from
spec strings, so a match can be written on a command line::

    omega-cluster arena game=mexican_train players=2 seats=ismcts:commander_rollout:400,commander

Spec names: ``ismcts``, ``smmcts`` and ``search`` (the algorithm chosen by the game's dynamics),
positional arguments ``leaf`` then ``simulations``, any other search option as ``key=value``
(``ismcts:random:200:c_uct=2.0``).

Leaves (``leaf``): ``random`` / ``random_rollout`` (uniform random playouts), ``commander_rollout``
(Commander at every seat, Mexican Train only: the Ω reference's "Path B"), ``heuristic_rollout``
(the game's rule-based player from the registry), or any
:class:`~omega_cluster.search.evaluators.Evaluator` instance (a network, a blend, …). ``rollouts``
playouts are averaged per leaf (they differ only through the rng: Mexican Train keeps the
boneyard's order in the state, so ``commander_rollout`` plays ``rollouts`` identical playouts —
use ``epsilon`` or a random leaf with more than one). Mexican Train options (``SearchPlayer``):
``deduce=true`` (determinize with what draws and passes prove), ``opponent=<spec>`` (the other
players' moves in the tree come from this player, e.g. ``commander``, instead of their own
nodes), ``belief=commander`` (… and with what the opponents' recent moves say about their hands,
if they are Commanders), ``margin=<w>`` (win share blended with the pip margin), ``epsilon=<p>``
(ε-greedy rollouts), ``anchor=commander`` (keep the Commander's move unless the search clearly
beats it), ``prior=commander`` with ``prior_temperature=<T>`` (PUCT whose prior is the softmax of
the Commander's move scores / T, :class:`~omega_cluster.search.evaluators.PriorEvaluator`),
``rollout_weights=<preset>`` (``commander_rollout`` whose searcher's own seat plays the Commander
with those weights, e.g. ``tuned_4p``, while the other seats stay default Commanders:
:class:`~omega_cluster.games.mexican_train.officers.commander.SeatedCommanders`). Commander rollouts run
compiled when numba is installed (the same moves, ~10× faster: ``Commander.playout_returns``).
Search options any game can use: ``keying=observer`` (single-observer tree: the other players'
nodes keyed by the searcher's information set), ``root_selection=sequential_halving`` (the
root's moves compared on common worlds) and ``root_selection=racing`` (a paired race: batches of
common worlds until one move is left or the budget is spent, ``race_z`` and ``race_batch`` its
knobs, ``race_z=inf`` every move on the same worlds to the budget; see
:mod:`omega_cluster.search.ismcts`). Of these only the full paired evaluation moved the
measured strength beyond noise: at 4p, 5,500 simulations, fair share 1.34 [1.26, 1.41] against
three Commanders where the UCT root gives about 1.25 (see ``bench/bench_ismcts.py`` and, one
decision at a time at 2p and 4p, ``bench/bench_decisions.py``); the others stay as options for
other budgets.

A move with one legal action is played without searching (Mexican Train has many forced draws and
passes). At a simultaneous node the arena asks every acting player separately; each search player
searches for its own seat. :attr:`SearchPlayer.last_result` keeps the last
:class:`~omega_cluster.search.result.SearchResult` (``None`` when the last move was forced), and the
search's tree is dropped when a new game starts, so results never depend on earlier games.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from omega_cluster.games.api import Game, HistoryEntry, State
from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.players.registry import PlayerSpecError, make_player
from omega_cluster.search.evaluators import (
    EpsilonGreedyPlayer,
    Evaluator,
    PriorEvaluator,
    RolloutEvaluator,
    TerminalValue,
)
from omega_cluster.search.result import SearchResult

if TYPE_CHECKING:
    from omega_cluster.search.ismcts import OpponentPolicy, WorldConstraints, WorldSampler

__all__ = [
    "ALGORITHMS",
    "LEAVES",
    "ISMCTSPlayer",
    "SMMCTSPlayer",
    "SearchPlayer",
    "build_leaf_evaluator",
]

ALGORITHMS: tuple[str, ...] = ("auto", "ismcts", "smmcts")


class _Search(Protocol):
    """What the player needs of ISMCTS / SMMCTS."""

    def search(self, state: State, player: int, rng: random.Random) -> SearchResult: ...

    def reset(self) -> None: ...


def _random_policy(game: Game) -> Player:
    return RandomPlayer(game)


def _commander_policy(game: Game) -> Player:
    if game.spec.name != "mexican_train":
        raise PlayerSpecError(
            f"leaf 'commander_rollout' plays Commander, a Mexican Train officer; game "
            f"{game.spec.name!r} has none (use random or heuristic_rollout)"
        )
    from omega_cluster.games.mexican_train.officers import Commander  # heavy: only when asked for

    return Commander(game)


def _heuristic_policy(game: Game) -> Player:
    try:
        return make_player("heuristic", game)
    except PlayerSpecError as err:
        raise PlayerSpecError(
            f"leaf 'heuristic_rollout' needs the game's rule-based player: {err}"
        ) from err


LEAVES: dict[str, Callable[[Game], Player]] = {
    "random": _random_policy,
    "random_rollout": _random_policy,
    "commander_rollout": _commander_policy,
    "heuristic_rollout": _heuristic_policy,
}
"""Leaf names -> the rollout policy they play at every seat."""


def build_leaf_evaluator(
    game: Game,
    leaf: str | Evaluator,
    *,
    rollouts: int = 1,
    epsilon: float = 0.0,
    terminal_value: TerminalValue | None = None,
) -> Evaluator:
    """The evaluator that ``leaf`` names for ``game`` (an Evaluator instance is returned as is).

    ``epsilon`` > 0 makes the rollout policy ε-greedy; ``terminal_value`` scores finished
    rollouts instead of their returns (both for the named rollout leaves only).
    """
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
        raise PlayerSpecError(f"rollouts must be an int >= 1, got {rollouts!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 <= epsilon <= 1:
        raise PlayerSpecError(f"epsilon must be a number in [0, 1], got {epsilon!r}")
    if not isinstance(leaf, str):
        if not callable(getattr(leaf, "evaluate", None)):
            raise PlayerSpecError(
                f"leaf must be one of {', '.join(LEAVES)} or an Evaluator, got {leaf!r}"
            )
        if rollouts != 1 or epsilon or terminal_value is not None:
            raise PlayerSpecError(
                "rollouts applies to the named rollout leaves only (so do epsilon and margin)"
            )
        return leaf
    policy = LEAVES.get(leaf.strip().lower())
    if policy is None:
        raise PlayerSpecError(
            f"unknown leaf {leaf!r}; allowed: {', '.join(LEAVES)} or an Evaluator instance"
        )
    player = policy(game)
    if epsilon:
        player = EpsilonGreedyPlayer(player, epsilon)
    return RolloutEvaluator(player, rollouts=rollouts, terminal_value=terminal_value)


def _opponent(game: Game, opponent: str | Player) -> OpponentPolicy:
    """The model of the other players' moves in the tree (``opponent=commander``)."""
    player = make_player(opponent, game) if isinstance(opponent, str) else opponent
    act = getattr(player, "act", None)
    if not callable(act):
        raise PlayerSpecError(f"opponent must be a player spec or a Player, got {opponent!r}")
    return cast("OpponentPolicy", act)


def _anchor(game: Game, anchor: str | Player | None, z: Any) -> tuple[Player | None, float]:
    """The anchor player (a spec string is built for ``game``) and its threshold."""
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not z >= 0.0:
        raise PlayerSpecError(f"anchor_z must be a number >= 0 (standard errors), got {z!r}")
    if anchor is None:
        return None, float(z)
    if isinstance(anchor, str):
        return make_player(anchor, game), float(z)
    if not callable(getattr(anchor, "act", None)):
        raise PlayerSpecError(f"anchor must be a player spec or a Player, got {anchor!r}")
    return anchor, float(z)


def _deductions(game: Game) -> WorldConstraints:
    """The game's public deductions for ``sample_world`` (``deduce=true``)."""
    if game.spec.name != "mexican_train":
        raise PlayerSpecError(
            f"deduce: no deductions are known for {game.spec.name!r} (available: mexican_train)"
        )
    from omega_cluster.games.mexican_train.inference import deal_constraints

    return deal_constraints


def _belief(game: Game, name: Any) -> WorldSampler:
    """The belief model ``name`` draws determinizations from (``belief=commander``)."""
    if name != "commander" or game.spec.name != "mexican_train":
        raise PlayerSpecError(
            f"belief: unknown belief {name!r} for {game.spec.name!r} (available: commander, "
            "for mexican_train)"
        )
    from omega_cluster.games.mexican_train import MexicanTrainGame
    from omega_cluster.games.mexican_train.belief import CommanderBelief

    assert isinstance(game, MexicanTrainGame)
    return CommanderBelief(game)


def _with_prior(game: Game, evaluator: Evaluator, name: Any, temperature: Any) -> Evaluator:
    """``evaluator`` with the PUCT prior ``name`` (``prior=commander``) at every leaf."""
    if name != "commander" or game.spec.name != "mexican_train":
        raise PlayerSpecError(
            f"prior: unknown prior {name!r} for {game.spec.name!r} (available: commander, "
            "for mexican_train)"
        )
    if (
        isinstance(temperature, bool)
        or not isinstance(temperature, (int, float))
        or not temperature > 0
    ):
        raise PlayerSpecError(f"prior_temperature must be a number > 0, got {temperature!r}")
    from omega_cluster.games.mexican_train.officers.commander import Commander

    commander, t = Commander(game), float(temperature)

    def prior(state: State, player: int, legal: Sequence[int]) -> list[float]:
        return commander.policy(state, player, legal, t)

    return PriorEvaluator(evaluator, prior, name=f"commander(T={t:g})")


def _seated_commanders(game: Game, leaf: Any, epsilon: float, weights: Any) -> Any:
    """Commander rollouts whose searcher's seat plays the preset ``weights``
    (``rollout_weights=tuned_4p``), the other seats the default Commander."""
    if leaf != "commander_rollout" or epsilon:
        raise PlayerSpecError(
            f"rollout_weights applies to leaf=commander_rollout without epsilon, got "
            f"leaf={leaf!r}, epsilon={epsilon!r}"
        )
    from omega_cluster.games.mexican_train.officers.commander import Commander, SeatedCommanders

    try:
        own = Commander(game, weights=str(weights))
    except ValueError as err:
        raise PlayerSpecError(f"rollout_weights: {err}") from err
    return SeatedCommanders(own, Commander(game))


def _margin_value(game: Game, weight: Any) -> TerminalValue:
    """The game's win-share / score-margin blend (``margin=<weight>``)."""
    if game.spec.name != "mexican_train":
        raise PlayerSpecError(
            f"margin: no score-margin value is known for {game.spec.name!r} "
            "(available: mexican_train)"
        )
    from omega_cluster.games.mexican_train.officers.values import pip_margin_value

    try:
        return pip_margin_value(weight)
    except ValueError as err:
        raise PlayerSpecError(str(err)) from err


def _check_budget(simulations: Any) -> None:
    if simulations is None:  # the search config's default count (or D × S from the options)
        return
    if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
        raise PlayerSpecError(
            f"simulations must be a positive int (or None with another budget), got {simulations!r}"
        )


def _choose_algorithm(game: Game, algorithm: str) -> str:
    chosen = algorithm.strip().lower() if isinstance(algorithm, str) else algorithm
    if chosen not in ALGORITHMS:
        raise PlayerSpecError(f"unknown algorithm {algorithm!r}; allowed: {', '.join(ALGORITHMS)}")
    if chosen == "auto":
        return "smmcts" if game.spec.simultaneous else "ismcts"
    if chosen == "ismcts" and game.spec.simultaneous:
        raise PlayerSpecError(
            f"ismcts searches turn-based games; {game.spec.name} has simultaneous moves "
            "(use smmcts or search, which picks it)"
        )
    return str(chosen)


def _build_search(
    game: Game, algorithm: str, evaluator: Evaluator, options: dict[str, Any]
) -> _Search:
    """Construct the search; a bad option becomes a spec error naming the accepted ones."""
    from omega_cluster.search import ismcts, smmcts  # the searches import more than players need

    config_cls: type = ismcts.ISMCTSConfig if algorithm == "ismcts" else smmcts.SMMCTSConfig
    accepted = [f.name for f in dataclasses.fields(config_cls)]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise PlayerSpecError(
            f"{algorithm}: unknown option(s) {', '.join(unknown)}; accepted: {', '.join(accepted)}"
        )
    try:
        if algorithm == "ismcts":
            return ismcts.ISMCTS(game, evaluator, **options)
        return smmcts.SMMCTS(game, evaluator, **options)
    except (TypeError, ValueError) as err:
        if isinstance(err, PlayerSpecError):
            raise
        raise PlayerSpecError(f"{algorithm}: {err}") from err


class SearchPlayer:
    """Plays the action an ISMCTS or SM-MCTS search chooses (see the module docstring).

    ``algorithm``: ``auto`` (SM-MCTS if the game has simultaneous moves, else ISMCTS), ``ismcts``
    or ``smmcts``. ``leaf``: a name of :data:`LEAVES` or an Evaluator. ``simulations``: the
    simulation budget per move; ``time_limit_s`` adds a wall-clock limit (the first limit
    reached stops the search, so give a large ``simulations`` for a pure time budget) and
    ISMCTS's ``determinizations`` × ``simulations_per_determinization`` replaces the count;
    ``None`` leaves the search config's default.
    ``rollouts``: playouts averaged per leaf. ``epsilon``: the rollout policy plays a uniform
    random move with this probability (ε-greedy rollouts). ISMCTS only: ``deduce`` (bool)
    determinizes with the game's public deductions (Mexican Train: a draw or a pass proves the
    hand held no playable tile, :mod:`~omega_cluster.games.mexican_train.inference`); ``belief``
    (``commander``) draws them from the posterior under "the opponents are Commanders"
    (:mod:`~omega_cluster.games.mexican_train.belief`, deductions included); ``margin``
    (weight in [0, 1]) scores finished rollouts and finished states in the tree by the win share
    blended with the score margin (:mod:`~omega_cluster.games.mexican_train.officers.values`). ``anchor``
    (a player spec or a Player, e.g. ``commander``) and ``anchor_z``: play the anchor's move
    unless the search's choice beats it by ``anchor_z`` standard errors (see
    :meth:`_anchored`). ``prior`` (``commander``) and ``prior_temperature``: PUCT with the
    Commander's softmax of move scores as the prior at every leaf. ``rollout_weights`` (a
    :data:`~omega_cluster.games.mexican_train.officers.weights.PRESETS` name): with ``commander_rollout``,
    the searcher's own seat plays the Commander with those weights in the rollouts, the other
    seats the default Commander. Every other keyword is an
    option of the search's config
    (``ISMCTSConfig`` / ``SMMCTSConfig``), e.g. ``c_uct=2.0``, ``time_limit_s=0.5``.

    A player competes, so it plays the argmax of the search policy (``temperature=0``) unless
    told otherwise; self-play samples instead. (Measured on Goofspiel-13 at 300 iterations:
    SM-MCTS scores 70% against joint-action MCTS playing its most-visited action, 55% sampling
    from its visit distribution, which at small budgets is mostly exploration.)
    """

    default_algorithm = "auto"  # when no algorithm is given (subclasses fix their own)

    def __init__(
        self,
        game: Game,
        *,
        algorithm: str | None = None,
        leaf: str | Evaluator = "random",
        simulations: int | None = 400,
        rollouts: int = 1,
        epsilon: float = 0.0,
        margin: float = 0.0,
        deduce: bool = False,
        belief: str | None = None,
        opponent: str | Player | None = None,
        anchor: str | Player | None = None,
        anchor_z: float = 1.0,
        prior: str | None = None,
        prior_temperature: float = 5.0,
        rollout_weights: str | None = None,
        **options: Any,
    ) -> None:
        _check_budget(simulations)
        self.game = game
        self.algorithm = _choose_algorithm(game, algorithm or self.default_algorithm)
        terminal_value = _margin_value(game, margin) if margin else None
        self._seated = None  # SeatedCommanders (rollout_weights): told its seat before a search
        if rollout_weights is not None:
            self._seated = _seated_commanders(game, leaf, epsilon, rollout_weights)
            self.evaluator: Evaluator = RolloutEvaluator(
                self._seated, rollouts=rollouts, terminal_value=terminal_value
            )
        else:
            self.evaluator = build_leaf_evaluator(
                game, leaf, rollouts=rollouts, epsilon=epsilon, terminal_value=terminal_value
            )
        if (deduce or terminal_value is not None) and self.algorithm != "ismcts":
            raise PlayerSpecError("deduce and margin are ISMCTS options (turn-based games)")
        if not isinstance(deduce, bool):
            raise PlayerSpecError(f"deduce must be true or false, got {deduce!r}")
        if deduce:
            options["world_constraints"] = _deductions(game)
        if belief is not None:
            if self.algorithm != "ismcts" or deduce:
                raise PlayerSpecError(
                    "belief is an ISMCTS option and applies the deductions itself (drop deduce)"
                )
            options["world_sampler"] = _belief(game, belief)
        if prior is not None:
            if self.algorithm != "ismcts":
                raise PlayerSpecError("prior is an ISMCTS option (turn-based games)")
            if options.setdefault("selection", "puct") != "puct":
                raise PlayerSpecError(
                    f"prior={prior} feeds PUCT; selection={options['selection']!r} ignores "
                    "priors (drop it or use selection=puct)"
                )
            self.evaluator = _with_prior(game, self.evaluator, prior, prior_temperature)
        if opponent is not None:
            if self.algorithm != "ismcts":
                raise PlayerSpecError("opponent is an ISMCTS option (turn-based games)")
            options["opponent_policy"] = _opponent(game, opponent)
        if terminal_value is not None:
            options["terminal_value"] = terminal_value
        self.anchor, self.anchor_z = _anchor(game, anchor, anchor_z)
        if simulations is not None:
            options["simulations"] = simulations
        options.setdefault("temperature", 0.0)
        self.options = dict(options)
        self.search = _build_search(game, self.algorithm, self.evaluator, options)
        leaf_name = leaf if isinstance(leaf, str) else type(leaf).__name__
        budget = "" if simulations is None else f":{simulations}"
        self.name = f"{self.algorithm}:{leaf_name}{budget}"
        self.last_result: SearchResult | None = None  # None: the last move was forced
        self.searches = 0  # moves searched
        self.forced = 0  # moves with one legal action, played without a search
        self.anchored = 0  # searched moves where the anchor's move was played instead
        self._history: list[HistoryEntry] | None = None  # the game the tree belongs to

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if not legal:
            raise ValueError(f"{self.name}: player {player} does not act in this state")
        self._follow_game(state)
        if len(legal) == 1:
            self.forced += 1
            self.last_result = None
            return legal[0]
        if self._seated is not None:
            self._seated.owner = player  # its own seat's continuation in the rollouts
        result = self.search.search(state, player, rng)
        self.searches += 1
        self.last_result = result
        if self.anchor is not None and self.options["temperature"] == 0.0:
            return self._anchored(result, state, player, rng)
        return result.action

    def _anchored(self, result: SearchResult, state: State, player: int, rng: random.Random) -> int:
        """The anchor's move unless the search's choice beats it by ``anchor_z`` standard errors.

        Near-equal moves are told apart by noise at search budgets (a few hundred rollouts of
        0/1 outcomes per move): a strong heuristic's choice is the safer one unless the search
        has evidence against it. Each mean's variance is bounded as a Bernoulli variable's on
        the game's return range (at least 1% of the range squared, so a 0/1 streak still has
        an error bar).
        """
        choice = self.anchor.act(state, player, rng)  # type: ignore[union-attr]
        if choice == result.action or choice not in result.legal:
            return result.action
        i, j = result.legal.index(result.action), result.legal.index(choice)
        if result.visits[j] == 0:  # the search never tried it (caps, widening)
            return result.action
        low, high = self.game.spec.min_return, self.game.spec.max_return
        span = (high - low) if low is not None and high is not None and high > low else 1.0
        base = low if low is not None else 0.0

        def variance(k: int) -> float:
            m = min(1.0, max(0.0, (result.action_values[k] - base) / span))
            return max(m * (1.0 - m), 0.01) / result.visits[k]

        gap = (result.action_values[i] - result.action_values[j]) / span
        if gap > self.anchor_z * math.sqrt(variance(i) + variance(j)):
            return result.action
        self.anchored += 1
        return choice

    def reset(self) -> None:
        """Forget the search tree (a new game starts)."""
        self.search.reset()
        self._history = None

    def _follow_game(self, state: State) -> None:
        """Drop the tree when ``state`` is not a continuation of the game seen so far."""
        seen = self._history
        if seen is not None and state.history[: len(seen)] != seen:
            self.search.reset()
        self._history = list(state.history)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.options.items() if k != "simulations")
        return f"{type(self).__name__}({self.name!r}, evaluator={self.evaluator!r}{extra})"


class ISMCTSPlayer(SearchPlayer):
    """:class:`SearchPlayer` with ``algorithm="ismcts"`` (the ``ismcts`` spec)."""

    default_algorithm = "ismcts"


class SMMCTSPlayer(SearchPlayer):
    """:class:`SearchPlayer` with ``algorithm="smmcts"`` (the ``smmcts`` spec)."""

    default_algorithm = "smmcts"
