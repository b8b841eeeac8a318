"""The lookahead player: a depth-limited determinized max-n search behind the Player protocol.

:class:`LookaheadPlayer` plays the move :class:`~omega_cluster.search.lookahead.Lookahead`
chooses: ``worlds`` sampled worlds, every move expanded to ``depth`` real decisions (forced moves
and chance played through), the leaves valued by an evaluator, each seat maximising its own value.
The registry builds it from a spec::

    lookahead:<leaf>:<depth>[:worlds=W][:tables=<dir>][:hand=<w>]
    omega-cluster arena game=mexican_train players=2 seats=lookahead:hand:2,commander

``leaf`` is any leaf name of :func:`~omega_cluster.players.search.build_leaf_evaluator`
(``hand``, ``tables`` with ``tables=<dir>``, ``tables+hand`` with ``hand=<w>``, a rollout leaf)
or an Evaluator instance; ``deduce`` (default true) determinizes with the game's public
deductions (its plugin's ``world_constraints``; a game that gives none has nothing to deduce).
Turn-based games only: a simultaneous game is refused in one line that names smmcts. A move
with one legal action is played without searching; :attr:`LookaheadPlayer.last_result` keeps
the last search's :class:`~omega_cluster.search.lookahead.LookaheadResult` (None: forced).
"""

from __future__ import annotations

import random

from omega_cluster.games.api import Game, State
from omega_cluster.games.registry import game_plugin
from omega_cluster.players.registry import PlayerSpecError
from omega_cluster.players.search import build_leaf_evaluator, forced_or_searched
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.search.lookahead import Lookahead, LookaheadResult

__all__ = ["LookaheadPlayer"]


class LookaheadPlayer:
    """Plays the lookahead search's move (module docstring)."""

    def __init__(
        self,
        game: Game,
        evaluator: str | Evaluator,
        depth: int = 1,
        worlds: int = 8,
        deduce: bool = True,
        *,
        tables: str | None = None,
        hand: float | None = None,
    ) -> None:
        if game.spec.simultaneous:
            raise PlayerSpecError(
                f"lookahead searches turn-based games; {game.spec.name} has simultaneous moves "
                "(use smmcts, or search, which picks it)"
            )
        for key, value in (("depth", depth), ("worlds", worlds)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise PlayerSpecError(f"lookahead: {key} must be an int >= 1, got {value!r}")
        if not isinstance(deduce, bool):
            raise PlayerSpecError(f"lookahead: deduce must be true or false, got {deduce!r}")
        self.game = game
        self.evaluator = build_leaf_evaluator(game, evaluator, tables=tables, hand=hand)
        hook = game_plugin(game).hook("world_constraints") if deduce else None
        self.search = Lookahead(
            game,
            self.evaluator,
            depth=depth,
            worlds=worlds,
            world_constraints=None if hook is None else hook(game),
        )
        leaf = evaluator if isinstance(evaluator, str) else type(evaluator).__name__
        self.name = f"lookahead:{leaf}:{depth}"
        self.last_result: LookaheadResult | None = None
        self.searches = 0  # moves searched
        self.forced = 0  # moves with one legal action, played without a search

    def act(self, state: State, player: int, rng: random.Random) -> int:
        legal = state.legal_actions(player)
        if not legal:
            raise ValueError(f"{self.name}: player {player} does not act in this state")
        return forced_or_searched(self, state, player, rng, legal)

    def __repr__(self) -> str:
        s = self.search
        return f"LookaheadPlayer({self.name!r}, evaluator={self.evaluator!r}, worlds={s.worlds})"
