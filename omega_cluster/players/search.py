"""Search players: ISMCTS or SM-MCTS behind the Player protocol, usable in the arena.

:class:`SearchPlayer` turns a search (:class:`~omega_cluster.search.ismcts.ISMCTS` for turn-based
games, :class:`~omega_cluster.search.smmcts.SMMCTS` when ``game.spec.simultaneous``) and a leaf
evaluator into a :class:`~omega_cluster.games.player.Player`: ``act(state, player, rng)`` runs one
search for ``player`` and plays its chosen action. The registry (:mod:`.registry`) builds it from
spec strings, so a match can be written on a command line::

    omega-cluster arena game=mexican_train players=2 seats=ismcts:commander_rollout:400,commander

Spec names: ``ismcts``, ``smmcts`` and ``search`` (the algorithm chosen by the game's dynamics),
then ``leaf``, ``simulations``, other options as ``key=value`` (``ismcts:random:200:c_uct=2.0``).

Leaves (``leaf``): ``random`` / ``random_rollout`` (uniform random playouts), ``<name>_rollout``
(playouts with the game plugin's rule-based player ``<name>`` at every seat, e.g.
``heuristic_rollout``, ``commander_rollout``), ``hand`` / ``tables`` / ``tables+hand`` (the
hand-written value, n-tuple tables from ``tables=<dir>``, their blend at ``hand=<weight>``:
:mod:`.table_leaves`; these run the Python search loop), or any
:class:`~omega_cluster.search.evaluators.Evaluator` instance (a network, a blend, …). ``rollouts``
playouts, averaged per leaf, differ only by rng (Mexican Train's state fixes the boneyard order, so
its ``commander_rollout`` playouts repeat); a policy's compiled ``playout_returns`` plays them.

ISMCTS options besides the config's fields: ``deduce=true`` determinizes with the game's public
deductions (its plugin's ``world_constraints`` hook; Mexican Train: a draw or a pass proves the
hand held no playable tile); ``root=<schedule>`` (:data:`ROOT_SCHEDULES`) chooses how the root
spends the budget: ``tree`` (selected like any node, the default) or ``paired`` (every root move
on the same worlds to the budget; see :mod:`omega_cluster.search.ismcts`).

``belief=network`` (ISMCTS, a game whose plugin gives ``belief_worlds``) draws every world of a
search from the belief head of the leaf's network (a network leaf or a ``network+<rollout>``
blend), asked once per decision on the searcher's public observation
(:class:`~omega_cluster.players.belief.NetworkBelief`), under the game's hard deductions (so
``deduce`` is implied); a callable ``(state, player) -> probabilities`` may stand in for the
network. It runs the Python loop: the compiled search deals only under the game's deductions.

A move with one legal action is played without searching. At a simultaneous node each search
player searches for its own seat. :attr:`SearchPlayer.last_result` keeps the last
:class:`~omega_cluster.search.result.SearchResult` (``None`` after a forced move); the tree is
dropped when a new game starts, so results never depend on earlier games.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from omega_cluster.games.api import Game, HistoryEntry, State
from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.games.registry import game_plugin
from omega_cluster.players.leaf_spec import RANDOM, ROLLOUT, TABLE_KINDS, LeafSpec, parse_leaf
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.players.table_leaves import table_leaf
from omega_cluster.search import ismcts, smmcts
from omega_cluster.search.evaluators import Evaluator, RolloutEvaluator
from omega_cluster.search.ismcts import RootSchedule, WorldConstraints, paired_root, tree_root
from omega_cluster.search.result import SearchResult

__all__ = [
    "ALGORITHMS",
    "ROOT_SCHEDULES",
    "ISMCTSPlayer",
    "SMMCTSPlayer",
    "SearchPlayer",
    "build_leaf_evaluator",
    "forced_or_searched",
    "rollout_policy",
]

ALGORITHMS: tuple[str, ...] = ("auto", "ismcts", "smmcts")

ROOT_SCHEDULES: dict[str, RootSchedule] = {"tree": tree_root, "paired": paired_root}
"""``root=<name>`` -> the ISMCTS root schedule (``ISMCTSConfig.root_schedule``)."""

_ROLLOUT = "_rollout"


class _Search(Protocol):
    """What the player needs of ISMCTS / SMMCTS."""

    def search(self, state: State, player: int, rng: random.Random) -> SearchResult: ...

    def reset(self) -> None: ...


class _Counted(Protocol):
    """A searching player that counts its searched and forced moves and keeps the last result."""

    search: Any
    searches: int
    forced: int
    last_result: Any


def forced_or_searched(
    player: _Counted, state: State, seat: int, rng: random.Random, legal: Sequence[int]
) -> int:
    """``seat``'s move: the one legal move without a search (counted in ``forced``, no
    ``last_result``), else the move of ``player.search`` (counted in ``searches``)."""
    if len(legal) == 1:
        player.forced += 1
        player.last_result = None
        return legal[0]
    result = player.search.search(state, seat, rng)
    player.searches += 1
    player.last_result = result
    return result.action


def rollout_policy(game: Game, policy: str) -> Player:
    """The player a rollout leaf plays at every seat of ``game``: ``policy`` is a
    :class:`LeafSpec`'s rollout (``random`` or the game's rule-based player ``<name>``)."""
    if policy == RANDOM:
        return RandomPlayer(game)
    plugin = game_plugin(game)
    factory = plugin.player(policy)
    if factory is None:
        have = ", ".join(f"{p}{_ROLLOUT}" for p in sorted(plugin.players)) or "none"
        raise PlayerSpecError(
            f"leaf '{policy}{_ROLLOUT}' needs the game's rule-based player {policy!r}, which "
            f"{game.spec.name} does not have (its rollout leaves: random, {have})"
        )
    player: Player = factory(game)
    return player


def build_leaf_evaluator(
    game: Game,
    leaf: str | LeafSpec | Evaluator,
    *,
    rollouts: int = 1,
    tables: str | None = None,
    hand: float | None = None,
) -> Evaluator:
    """The evaluator that ``leaf`` names for ``game``: a :class:`LeafSpec` (a leaf text is
    parsed into one, with ``rollouts``) of a rollout or table leaf, or an Evaluator instance,
    returned as is; ``tables`` (a directory) and ``hand`` (a weight) serve the table leaves
    (:mod:`.table_leaves`)."""
    if isinstance(rollouts, bool) or not isinstance(rollouts, int) or rollouts < 1:
        raise PlayerSpecError(f"rollouts must be an int >= 1, got {rollouts!r}")
    if isinstance(leaf, str):  # a player spec's leaf: parsed here, once
        leaf = parse_leaf(leaf, rollouts=rollouts)
    if isinstance(leaf, LeafSpec) and leaf.kind in TABLE_KINDS:
        return table_leaf(game, leaf, tables=tables, hand=hand)
    if tables is not None or hand is not None:
        shown = leaf.text if isinstance(leaf, LeafSpec) else leaf
        raise PlayerSpecError(
            f"tables=<dir> and hand=<weight> apply to the leaves {', '.join(TABLE_KINDS)}, "
            f"not {shown!r}"
        )
    if isinstance(leaf, LeafSpec):
        if leaf.kind != ROLLOUT:
            raise PlayerSpecError(
                f"leaf {leaf.text!r} reads a network, which this player does not hold; allowed "
                "here: random, random_rollout, <player>_rollout, hand, tables, tables+hand or "
                "an Evaluator instance"
            )
        assert leaf.rollout is not None
        return RolloutEvaluator(rollout_policy(game, leaf.rollout), rollouts=leaf.rollouts)
    if not callable(getattr(leaf, "evaluate", None)):
        raise PlayerSpecError(
            f"leaf must be random, random_rollout, <player>_rollout or an Evaluator, got {leaf!r}"
        )
    if rollouts != 1:
        raise PlayerSpecError("rollouts applies to the named rollout leaves only")
    return leaf


def _deductions(game: Game) -> WorldConstraints:
    """The game's public deductions for ``sample_world`` (``deduce=true``), from its plugin."""
    hook = game_plugin(game).hook("world_constraints")
    if hook is None:
        raise PlayerSpecError(
            f"deduce: {game.spec.name!r} gives no public deductions (its plugin has no "
            "world_constraints hook)"
        )
    constraints: WorldConstraints = hook(game)
    return constraints


def _belief_constraints(game: Game, belief: Any, evaluator: Evaluator) -> WorldConstraints:
    """The ``world_constraints`` of ``belief=network`` (or of a belief callable) for ``game``."""
    hook = game_plugin(game).hook("belief_worlds")
    if hook is None:
        raise PlayerSpecError(
            f"belief: {game.spec.name!r} draws no worlds from a belief (its plugin has no "
            "belief_worlds hook)"
        )
    if belief == "network":
        from omega_cluster.players.belief import NetworkBelief, network_of  # torch, when asked

        network = network_of(evaluator)
        if network is None:
            raise PlayerSpecError(
                f"belief=network needs a network leaf (or network+<rollout>), got {evaluator!r}"
            )
        belief = NetworkBelief(*network)
    elif not callable(belief) or isinstance(belief, str):
        raise PlayerSpecError(
            f"belief must be network, none or a callable (state, player) -> probabilities, "
            f"got {belief!r}"
        )
    constraints: WorldConstraints = hook(game)(belief)
    return constraints


def _root_schedule(root: str | RootSchedule) -> RootSchedule:
    """The ISMCTS root schedule ``root`` names (a schedule function is returned as is)."""
    if callable(root):
        return root
    schedule = ROOT_SCHEDULES.get(root.strip().lower()) if isinstance(root, str) else None
    if schedule is None:
        raise PlayerSpecError(
            f"root must be one of {', '.join(ROOT_SCHEDULES)} or a root schedule function, "
            f"got {root!r}"
        )
    return schedule


def _check_budget(simulations: Any) -> None:
    if simulations is None:  # the search config's default count
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


def _ismcts_options(
    game: Game, algorithm: str, evaluator: Evaluator, extra: dict[str, Any], options: dict[str, Any]
) -> None:
    """Turn the ISMCTS-only player options ``deduce``, ``belief`` and ``root`` into config fields."""
    deduce, belief, root = extra["deduce"], extra["belief"], extra["root"]
    if not isinstance(deduce, bool):
        raise PlayerSpecError(f"deduce must be true or false, got {deduce!r}")
    if algorithm != "ismcts":
        if deduce or belief is not None or root != "tree":
            raise PlayerSpecError("deduce, belief and root are ISMCTS options (turn-based games)")
        return
    if belief is not None:  # the belief's worlds honour the hard deductions too
        if "world_constraints" in options:
            raise PlayerSpecError("give belief or world_constraints, not both")
        options["world_constraints"] = _belief_constraints(game, belief, evaluator)
    elif deduce:
        options["world_constraints"] = _deductions(game)
    if root != "tree":
        if "root_schedule" in options:
            raise PlayerSpecError("give root or root_schedule, not both")
        options["root_schedule"] = _root_schedule(root)


class SearchPlayer:
    """Plays the action an ISMCTS or SM-MCTS search chooses (see the module docstring).

    ``algorithm``: ``auto`` (SM-MCTS if the game has simultaneous moves, else ISMCTS), ``ismcts``
    or ``smmcts``. ``leaf``: a leaf text (:func:`~.leaf_spec.parse_leaf`), a ``LeafSpec`` or
    an Evaluator. ``simulations``: the simulation budget per move (``None``: the search
    config's default; SM-MCTS also takes ``time_limit_s``, a wall-clock limit). ``rollouts``:
    playouts averaged per leaf.
    ISMCTS only: ``deduce`` (bool) determinizes with the game's public deductions (its plugin's
    ``world_constraints``); ``belief`` (``network``, or a callable ``(state, player) ->
    probabilities``) draws the worlds from a belief (module docstring); ``root`` (a name of
    :data:`ROOT_SCHEDULES` or a root schedule function) chooses how the root spends the budget.
    Every other keyword is an option of the search's config (``ISMCTSConfig`` /
    ``SMMCTSConfig``), e.g. ``c_uct=2.0``.

    A player competes, so it plays the argmax of the search policy (``temperature=0``) unless
    told otherwise; self-play samples instead. (At small budgets the visit distribution is
    mostly exploration, so sampling from it plays weaker: ``bench/bench_smmcts.py``.)
    """

    default_algorithm = "auto"  # when no algorithm is given (subclasses fix their own)

    def __init__(
        self,
        game: Game,
        *,
        algorithm: str | None = None,
        leaf: str | LeafSpec | Evaluator = "random",
        simulations: int | None = ismcts.ISMCTSConfig.simulations,
        rollouts: int = 1,
        deduce: bool = False,
        belief: str | Callable[[State, int], Any] | None = None,
        root: str | RootSchedule = "tree",
        tables: str | None = None,
        hand: float | None = None,
        **options: Any,
    ) -> None:
        _check_budget(simulations)
        self.game = game
        self.algorithm = _choose_algorithm(game, algorithm or self.default_algorithm)
        self.evaluator = build_leaf_evaluator(
            game, leaf, rollouts=rollouts, tables=tables, hand=hand
        )
        extra = {"deduce": deduce, "belief": belief, "root": root}
        _ismcts_options(game, self.algorithm, self.evaluator, extra, options)
        if simulations is not None:
            options["simulations"] = simulations
        options.setdefault("temperature", 0.0)
        self.options = dict(options)
        self.search = _build_search(game, self.algorithm, self.evaluator, options)
        shown = leaf.text if isinstance(leaf, LeafSpec) else type(leaf).__name__
        leaf_name = leaf if isinstance(leaf, str) else shown
        budget = "" if simulations is None else f":{simulations}"
        self.name = f"{self.algorithm}:{leaf_name}{budget}"
        self.last_result: SearchResult | None = None  # None: the last move was forced
        self.searches = 0  # moves searched
        self.forced = 0  # moves with one legal action, played without a search
        self._history: list[HistoryEntry] | None = None  # the game the tree belongs to

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if not legal:
            raise ValueError(f"{self.name}: player {player} does not act in this state")
        self._follow_game(state)
        return forced_or_searched(self, state, player, rng, legal)

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
