"""The lookahead search and player: depth-1 choice, what a ply counts, max-n at depth 2, stops at
the end, determinism, the spec and its refusals."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
from game_helpers import assert_spec_refused

from omega_cluster.games.api import CHANCE, Game, GameSpec, ParamSpec, State
from omega_cluster.games.registry import make_game
from omega_cluster.players.lookahead import LookaheadPlayer
from omega_cluster.players.registry import make_player
from omega_cluster.search.evaluators import Leaf, LeafEvaluation
from omega_cluster.search.lookahead import Lookahead

# -- a tiny handmade game: a tree of paths ----------------------------------------------------
# TREE[path] = ("seat", seat, actions) | ("chance", actions) | ("end", returns)


class TreeGame(Game):
    name = "tree_game"
    parameters: ClassVar[dict[str, ParamSpec]] = {}

    def __init__(
        self, tree: dict[tuple[int, ...], tuple[Any, ...]], players: int, hidden: bool = False
    ) -> None:
        super().__init__()
        self.tree = tree
        self.drawn: list[Any] = []  # the constraints of every sample_world call
        self.spec = GameSpec(
            name="tree_game",
            num_players=players,
            min_players=players,
            max_players=players,
            num_actions=4,
            simultaneous=False,
            hidden_information=hidden,
            explicit_chance=True,
        )

    def new_initial_state(self, seed: int = 0) -> TreeState:
        return TreeState(self, ())


class TreeState(State):
    __slots__ = ("path",)

    def __init__(self, game: TreeGame, path: tuple[int, ...]) -> None:
        self.game, self.path, self.history = game, path, list(path)

    def _node(self) -> tuple[Any, ...]:
        node: tuple[Any, ...] = self.game.tree[self.path]  # type: ignore[attr-defined]
        return node

    @property
    def current_players(self) -> tuple[int, ...]:
        node = self._node()
        return {"seat": lambda: (node[1],), "chance": lambda: (CHANCE,), "end": tuple}[node[0]]()

    def legal_actions(self, player: int | None = None) -> Sequence[int]:
        node = self._node()
        return list(node[-1]) if node[0] in ("seat", "chance") else []

    def chance_outcomes(self) -> Sequence[tuple[int, float]]:
        acts = self._node()[1]
        return [(a, 1.0 / len(acts)) for a in acts]

    def _apply_action(self, action: int) -> None:
        self.path = (*self.path, action)
        self.history.append(action)

    def returns(self) -> tuple[float, ...]:
        node = self._node()
        return tuple(node[1]) if node[0] == "end" else (0.0,) * self.game.num_players

    def observation(self, player: int) -> tuple[int, ...]:
        return self.path

    def information_set_key(self, player: int) -> tuple[int, ...]:
        return self.path

    def sample_world(self, player: int, rng: Any, constraints: Any = None) -> TreeState:
        self.game.drawn.append(constraints)  # type: ignore[attr-defined]
        return self.clone()

    def clone(self) -> TreeState:
        return TreeState(self.game, self.path)  # type: ignore[arg-type]


class PathValues:
    """An evaluator valuing a leaf by a table of paths (terminal leaves: their returns); it
    records every batch it is asked for."""

    def __init__(self, table: dict[tuple[int, ...], tuple[float, ...]], players: int) -> None:
        self.table, self.players = table, players
        self.batches: list[list[tuple[int, ...]]] = []

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        self.batches.append([leaf.state.path for leaf in leaves])  # type: ignore[attr-defined]
        out = []
        for leaf in leaves:
            state: Any = leaf.state
            if not state.current_players:
                out.append(LeafEvaluation(state.returns()))
            else:
                out.append(LeafEvaluation(self.table.get(state.path, (0.5,) * self.players)))
        return out


def _root(game: TreeGame) -> TreeState:
    return game.new_initial_state()


# seat 0 picks 0 or 1; seat 1 then picks 0 or 1 (three seats: seat 2 never moves)
MAXN_TREE: dict[tuple[int, ...], tuple[Any, ...]] = {
    (): ("seat", 0, (0, 1)),
    (0,): ("seat", 1, (0, 1)),
    (1,): ("seat", 1, (0, 1)),
    (0, 0): ("end", (0.9, 0.05, 0.05)),
    (0, 1): ("end", (0.1, 0.8, 0.1)),
    (1, 0): ("end", (0.5, 0.3, 0.2)),
    (1, 1): ("end", (0.4, 0.2, 0.4)),
}


def test_depth_one_plays_the_move_the_evaluator_prefers() -> None:
    game = TreeGame(MAXN_TREE, 3)
    evaluator = PathValues({(0,): (0.2, 0.4, 0.4), (1,): (0.7, 0.2, 0.1)}, 3)
    result = Lookahead(game, evaluator, depth=1, worlds=4).search(_root(game), 0, random.Random(0))
    assert result.action == 1 and result.values == pytest.approx((0.2, 0.7))
    # perfect information, no chance: one world stands for all, one batch of the two moves
    assert result.worlds == 1 and evaluator.batches == [[(0,), (1,)]]
    flipped = PathValues({(0,): (0.8, 0.1, 0.1), (1,): (0.7, 0.2, 0.1)}, 3)
    assert Lookahead(game, flipped, depth=1).search(_root(game), 0, random.Random(0)).action == 0


def test_max_n_at_depth_two_lets_each_seat_maximise_its_own_value() -> None:
    game = TreeGame(MAXN_TREE, 3)
    evaluator = PathValues({}, 3)
    result = Lookahead(game, evaluator, depth=2).search(_root(game), 0, random.Random(0))
    # after 0, seat 1 takes (0, 1) (0.8 for it), leaving seat 0 with 0.1; after 1 it takes (1, 0)
    assert result.action == 1 and result.values == pytest.approx((0.1, 0.5))
    assert evaluator.batches == [[(0, 0), (0, 1), (1, 0), (1, 1)]]


def test_ties_go_to_the_lowest_action() -> None:
    game = TreeGame(MAXN_TREE, 3)
    result = Lookahead(game, PathValues({}, 3), depth=1).search(_root(game), 0, random.Random(0))
    assert result.values == (0.5, 0.5) and result.action == 0


# seat 0 picks 0 or 1; then a forced move of seat 1, a coin, a choice of seat 1, the end
PLY_TREE: dict[tuple[int, ...], tuple[Any, ...]] = {(): ("seat", 0, (0, 1))}
for _a in (0, 1):
    PLY_TREE[(_a,)] = ("seat", 1, (2,))  # forced
    PLY_TREE[(_a, 2)] = ("chance", (0, 1))
    for _c in (0, 1):
        PLY_TREE[(_a, 2, _c)] = ("seat", 1, (0, 1))
        for _b in (0, 1):
            PLY_TREE[(_a, 2, _c, _b)] = ("end", (float(_a == _b), float(_a != _b)))


def test_forced_moves_and_chance_are_played_through_without_counting_a_ply() -> None:
    game = TreeGame(PLY_TREE, 2)
    evaluator = PathValues({}, 2)
    result = Lookahead(game, evaluator, depth=1, worlds=6).search(_root(game), 0, random.Random(3))
    # each leaf is the decision after the forced move and the coin; chance makes worlds differ
    assert result.worlds == 6 and len(evaluator.batches) == 6
    assert all(len(path) == 3 and path[1] == 2 for batch in evaluator.batches for path in batch)
    assert {path[2] for batch in evaluator.batches for path in batch} == {0, 1}
    deeper = PathValues({}, 2)
    result = Lookahead(game, deeper, depth=2, worlds=2).search(_root(game), 0, random.Random(3))
    assert all(len(path) == 4 for batch in deeper.batches for path in batch)
    # seat 0 wins if seat 1 matches its pick; seat 1 avoids it, so seat 0 loses either way
    assert result.values == (0.0, 0.0) and result.leaves == 8


def test_the_search_stops_at_the_end() -> None:
    tree = {(): ("seat", 0, (0, 1)), (0,): ("end", (1.0, 0.0)), (1,): ("seat", 1, (0, 1))}
    tree |= {(1, 0): ("end", (0.0, 1.0)), (1, 1): ("end", (0.5, 0.5))}
    game = TreeGame(tree, 2)
    evaluator = PathValues({}, 2)
    result = Lookahead(game, evaluator, depth=3).search(_root(game), 0, random.Random(0))
    assert result.action == 0 and result.values == (1.0, 0.0)
    assert evaluator.batches == [[(0,), (1, 0), (1, 1)]]


def _kuhn_decision(seed: int) -> tuple[Game, State]:
    game = make_game("kuhn_poker")
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    while state.current_players == (CHANCE,):
        state.apply_action(rng.choice(state.legal_actions()))
    return game, state


def test_the_search_is_deterministic_for_a_given_rng_and_samples_worlds() -> None:
    game, state = _kuhn_decision(1)
    player = state.current_players[0]

    def run(seed: int) -> Any:
        search = LookaheadPlayer(game, "random_rollout", depth=2, worlds=5).search
        return search.search(state, player, random.Random(seed))

    first, again = run(7), run(7)
    assert dataclasses.replace(again, seconds=first.seconds) == first
    assert first.worlds == 5 and first.leaves > 5 * len(first.legal)
    assert any(run(s).values != first.values for s in (8, 9, 10))


def test_the_player_plays_forced_moves_without_a_search() -> None:
    game = TreeGame(PLY_TREE, 2)
    player = LookaheadPlayer(game, PathValues({}, 2), depth=1)
    state = _root(game)
    state.apply_action(0)
    assert player.act(state, 1, random.Random(0)) == 2
    assert player.forced == 1 and player.searches == 0 and player.last_result is None


def test_the_spec_builds_the_player_with_deductions() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    player = make_player("lookahead:random_rollout:2:worlds=3", game)
    assert isinstance(player, LookaheadPlayer) and player.name == "lookahead:random_rollout:2"
    assert player.search.depth == 2 and player.search.worlds == 3
    assert player.search.world_constraints is not None
    blind = make_player("lookahead:random_rollout:1:deduce=false", game)
    assert isinstance(blind, LookaheadPlayer) and blind.search.world_constraints is None
    state = game.new_initial_state(5)
    rng = random.Random(0)
    while not state.is_terminal():
        p = state.current_players[0]
        state.apply_action(player.act(state, p, rng))
    assert player.searches > 0 and sum(state.returns()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("spec", "game_name", "message"),
    [
        ("lookahead:random_rollout:1", "goofspiel", r"turn-based games; goofspiel .*use smmcts"),
        ("lookahead:random_rollout:0", "kuhn_poker", r"lookahead: depth must be an int >= 1"),
        ("lookahead:random_rollout:1:worlds=x", "kuhn_poker", r"worlds must be an int >= 1"),
        ("lookahead:magic:1", "kuhn_poker", r"unknown leaf 'magic'"),
        ("lookahead:random:1:tables=/x", "kuhn_poker", r"tables=<dir> and hand=<weight> apply"),
    ],
)
def test_bad_specs_are_refused_in_one_line(spec: str, game_name: str, message: str) -> None:
    assert_spec_refused(spec, game_name, message)


def test_the_deductions_are_asked_once_a_search_and_every_world_gets_them() -> None:
    game = TreeGame(MAXN_TREE, 3, hidden=True)
    asked: list[int] = []

    def deductions(state: State, player: int) -> Any:
        asked.append(player)
        return ("facts", player)

    evaluator = PathValues({}, 3)
    search = Lookahead(game, evaluator, depth=1, worlds=5, world_constraints=deductions)
    result = search.search(_root(game), 0, random.Random(0))
    assert asked == [0] and game.drawn == [("facts", 0)] * 5
    assert result.worlds == 5 and len(evaluator.batches) == 5  # hidden: every world searched
    game.drawn.clear()
    Lookahead(game, evaluator, worlds=2).search(_root(game), 0, random.Random(0))
    assert game.drawn == [None, None]
