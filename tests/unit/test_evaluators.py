"""Leaf evaluators and the batched search driver on real games.

Covers :mod:`omega_cluster.search.evaluators` (rollout with random and Commander policies, ``k``
rollouts averaged, terminal leaves, the fast ``random_playout`` path against the generic loop, the
function / heuristic / blend evaluators, :func:`check_evaluations` errors) and
:mod:`omega_cluster.search.batching` (:func:`run_searches` with toy generator searches: the order
leaves are batched and answered in, :class:`BatchStats`, identity with the unbatched loop).
"""

from __future__ import annotations

import math
import random
from collections.abc import Generator, Sequence

import pytest

from omega_cluster.games import CHANCE, make_game
from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search import (
    BatchStats,
    BlendEvaluator,
    Evaluator,
    EvaluatorError,
    FunctionEvaluator,
    HeuristicEvaluator,
    Leaf,
    LeafEvaluation,
    PriorEvaluator,
    RolloutEvaluator,
    check_evaluations,
    run_search,
    run_searches,
)
from omega_cluster.search.evaluators import play_out


# -- helpers ------------------------------------------------------------------------------------
def decision_state(game: Game, seed: int, moves: int = 0) -> State:
    """A state at a decision node: chance resolved and ``moves`` random decisions played."""
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    played = 0
    while state.current_players:
        acting = state.current_players
        if acting == (CHANCE,):
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            continue
        if played >= moves:
            return state
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
        played += 1
    raise AssertionError("the game ended before the requested decision")


def leaf_of(state: State, rng: random.Random) -> Leaf:
    acting = state.current_players
    if not acting:
        return Leaf(state, -1, (), rng)
    return Leaf(state, acting[0], tuple(state.legal_actions(acting[0])), rng)


def terminal_state(game: Game, seed: int) -> State:
    state = decision_state(game, seed)
    play_out(state, [RandomPlayer()] * game.num_players, random.Random(seed), 10_000)
    return state


def rng_position(rng: random.Random) -> float:
    """The next draw of a copy of ``rng`` (two streams agree iff they are at the same position)."""
    probe = random.Random()
    probe.setstate(rng.getstate())
    return probe.random()


# -- RolloutEvaluator ---------------------------------------------------------------------------
def test_random_rollouts_are_averaged_from_the_leaf_rng() -> None:
    game = make_game("leduc_poker")
    state = decision_state(game, seed=3)
    before = state.clone().history
    [ev] = RolloutEvaluator(RandomPlayer(), rollouts=5).evaluate([leaf_of(state, random.Random(7))])
    assert state.history == before  # the leaf state is never mutated
    expected = [0.0, 0.0]
    replay_rng = random.Random(7)
    outcomes = set()
    for _ in range(5):
        sim = play_out(state.clone(), [RandomPlayer()] * 2, replay_rng, 100)
        outcomes.add(sim.returns())
        expected = [e + r / 5 for e, r in zip(expected, sim.returns(), strict=True)]
    assert ev.values == pytest.approx(tuple(expected), abs=1e-12)
    assert ev.prior is None
    assert len(outcomes) > 1  # the average mixes different playouts, not one repeated
    assert sum(ev.values) == pytest.approx(0.0, abs=1e-12)  # Leduc is zero-sum


def test_more_rollouts_draw_more_from_the_leaf_rng() -> None:
    game = make_game("kuhn_poker")
    state = decision_state(game, seed=1)
    one, three = random.Random(5), random.Random(5)
    RolloutEvaluator(RandomPlayer(), rollouts=1).evaluate([leaf_of(state, one)])
    RolloutEvaluator(RandomPlayer(), rollouts=3).evaluate([leaf_of(state, three)])
    assert rng_position(one) != rng_position(three)


def test_terminal_leaves_return_the_returns_without_drawing() -> None:
    game = make_game("kuhn_poker", players=3)
    state = terminal_state(game, seed=2)
    rng = random.Random(11)
    position = rng_position(rng)
    [ev] = RolloutEvaluator(RandomPlayer(), rollouts=4).evaluate([leaf_of(state, rng)])
    assert ev.values == state.returns()
    assert rng_position(rng) == position


@pytest.mark.parametrize("players", [2, 4])
def test_fast_random_playout_matches_the_generic_loop(players: int) -> None:
    """Mexican Train's ``random_playout`` plays the same moves from the same random numbers."""
    game = make_game("mexican_train", players=players, rounds=1)
    states = [decision_state(game, seed, moves=4 * seed) for seed in range(6)]
    fast = RolloutEvaluator(RandomPlayer(), rollouts=2)
    slow = RolloutEvaluator(RandomPlayer(), rollouts=2, use_fast_playout=False)
    fast_rng, slow_rng = random.Random(9), random.Random(9)
    fast_values = fast.evaluate([leaf_of(s, fast_rng) for s in states])
    slow_values = slow.evaluate([leaf_of(s, slow_rng) for s in states])
    assert [e.values for e in fast_values] == [e.values for e in slow_values]
    assert rng_position(fast_rng) == rng_position(slow_rng)
    assert len({e.values for e in fast_values}) > 1  # different leaves, different outcomes
    for ev in fast_values:  # win shares: each rollout's shares sum to 1
        assert sum(ev.values) == pytest.approx(1.0)


def test_commander_rollout_plays_the_round_out_with_commander_at_every_seat() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    commander = Commander(game)
    states = [decision_state(game, seed, moves=6) for seed in range(4)]
    evaluations = RolloutEvaluator(commander, rollouts=2).evaluate(
        [leaf_of(s, random.Random(seed)) for seed, s in enumerate(states)]
    )
    for state, ev in zip(states, evaluations, strict=True):
        sim = play_out(state.clone(), [commander, commander], random.Random(0), 10_000)
        # Commander is deterministic and the boneyard order is part of the state, so both
        # rollouts (and this replay) reach the same end.
        assert ev.values == sim.returns()
        assert set(ev.values) <= {0.0, 0.5, 1.0} and sum(ev.values) == 1.0


def test_rollout_evaluator_rejects_bad_settings_and_endless_games() -> None:
    with pytest.raises(ValueError, match="rollouts must be >= 1"):
        RolloutEvaluator(RandomPlayer(), rollouts=0)
    game = make_game("mexican_train", players=2, rounds=1)
    state = decision_state(game, seed=0)
    evaluator = RolloutEvaluator(RandomPlayer(), max_steps=3, use_fast_playout=False)
    with pytest.raises(EvaluatorError, match="did not end within 3 steps"):
        evaluator.evaluate([leaf_of(state, random.Random(0))])


def test_rollout_handles_simultaneous_and_chance_nodes() -> None:
    game = make_game("goofspiel", num_cards=5)
    state = decision_state(game, seed=4)
    assert len(state.current_players) == 2  # a simultaneous node
    [ev] = RolloutEvaluator(RandomPlayer(), rollouts=8).evaluate(
        [Leaf(state, 0, tuple(state.legal_actions(0)), random.Random(1))]
    )
    assert all(-1.0 <= v <= 1.0 for v in ev.values) and sum(ev.values) == pytest.approx(0.0)


def test_every_evaluator_satisfies_the_protocol() -> None:
    rollout = RolloutEvaluator(RandomPlayer())
    function = FunctionEvaluator(lambda leaves: [LeafEvaluation((0.0, 0.0)) for _ in leaves])
    heuristic = HeuristicEvaluator(lambda state: (0.0, 0.0))
    for evaluator in (rollout, function, heuristic, BlendEvaluator(rollout, heuristic)):
        assert isinstance(evaluator, Evaluator)
    assert "rollouts=1" in repr(rollout)


# -- FunctionEvaluator, HeuristicEvaluator, BlendEvaluator --------------------------------------
def test_function_evaluator_sends_only_live_leaves_in_order() -> None:
    game = make_game("leduc_poker")
    live = [decision_state(game, seed) for seed in range(3)]
    dead = terminal_state(game, seed=5)
    seen: list[list[State]] = []

    def value_and_prior(leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        seen.append([leaf.state for leaf in leaves])
        return [
            LeafEvaluation((float(i), -float(i)), (1 / len(leaf.legal),) * len(leaf.legal))
            for i, leaf in enumerate(leaves)
        ]

    rng = random.Random(0)
    leaves = [
        leaf_of(live[0], rng),
        leaf_of(dead, rng),
        leaf_of(live[1], rng),
        leaf_of(live[2], rng),
    ]
    out = FunctionEvaluator(value_and_prior, name="net").evaluate(leaves)
    assert seen == [[live[0], live[1], live[2]]]  # one call, terminal left out, order kept
    assert [ev.values for ev in out] == [(0.0, -0.0), dead.returns(), (1.0, -1.0), (2.0, -2.0)]
    assert out[1].prior is None and out[0].prior is not None
    check_evaluations(leaves, out, 2)


def test_function_evaluator_names_a_count_mismatch() -> None:
    game = make_game("kuhn_poker")
    leaves = [leaf_of(decision_state(game, s), random.Random(s)) for s in range(3)]
    short = FunctionEvaluator(lambda batch: [LeafEvaluation((0.0, 0.0))], name="short_net")
    with pytest.raises(EvaluatorError, match=r"short_net: returned 1 evaluations for 3 leaves"):
        short.evaluate(leaves)


def test_function_evaluator_with_only_terminal_leaves_never_calls() -> None:
    game = make_game("kuhn_poker")
    dead = terminal_state(game, seed=1)

    def fail(leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        raise AssertionError("called for terminal leaves")

    [ev] = FunctionEvaluator(fail).evaluate([leaf_of(dead, random.Random(0))])
    assert ev.values == dead.returns()


def test_heuristic_evaluator_values_live_states_and_returns_at_the_end() -> None:
    game = make_game("leduc_poker")
    live, dead = decision_state(game, 2), terminal_state(game, 3)
    calls: list[State] = []

    def pot_share(state: State) -> tuple[int, int]:
        calls.append(state)
        return (len(state.history), -len(state.history))

    out = HeuristicEvaluator(pot_share).evaluate(
        [leaf_of(live, random.Random(0)), leaf_of(dead, random.Random(0))]
    )
    assert calls == [live]
    n = float(len(live.history))
    assert out[0] == LeafEvaluation((n, -n)) and isinstance(out[0].values[0], float)
    assert out[1] == LeafEvaluation(dead.returns())


def _constant(values: tuple[float, ...], prior: bool) -> FunctionEvaluator:
    def fn(leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        return [
            LeafEvaluation(
                values,
                tuple(1.0 if a == leaf.legal[0] else 0.0 for a in leaf.legal) if prior else None,
            )
            for leaf in leaves
        ]

    return FunctionEvaluator(fn)


def test_blend_weights_values_and_takes_the_first_prior() -> None:
    game = make_game("kuhn_poker")
    leaf = leaf_of(decision_state(game, 0), random.Random(0))
    with_prior = _constant((1.0, -1.0), prior=True)
    heuristic = HeuristicEvaluator(lambda state: (4.0, 2.0))
    [ev] = BlendEvaluator(with_prior, heuristic).evaluate([leaf])  # default weights 1 and 1/4
    assert ev.values == pytest.approx((2.0, -0.5))
    assert ev.prior == (1.0, 0.0)
    [ev] = BlendEvaluator(heuristic, with_prior, weight_a=0.5, weight_b=2.0).evaluate([leaf])
    assert ev.values == pytest.approx((4.0, -1.0))
    assert ev.prior == (1.0, 0.0)  # a gives none, so b's
    [ev] = BlendEvaluator(heuristic, _constant((0.0, 0.0), prior=False)).evaluate([leaf])
    assert ev.prior is None
    with pytest.raises(ValueError, match="finite"):
        BlendEvaluator(heuristic, heuristic, weight_b=math.nan)


# -- check_evaluations --------------------------------------------------------------------------
def test_prior_evaluator_adds_its_prior_to_live_leaves_only() -> None:
    """The base's values are kept; live leaves get ``prior_fn``'s distribution over their legal
    actions (in the leaf's order), finished ones none; a bad prior is caught by the check."""
    game = make_game("kuhn_poker")
    seen: list[tuple[int, tuple[int, ...]]] = []

    def first_heavy(state: State, player: int, legal: Sequence[int]) -> list[float]:
        seen.append((player, tuple(legal)))
        return [0.75] + [0.25 / (len(legal) - 1)] * (len(legal) - 1)

    heuristic = HeuristicEvaluator(lambda state: (0.25, -0.25))
    evaluator = PriorEvaluator(heuristic, first_heavy, name="first")
    assert isinstance(evaluator, Evaluator) and "first" in repr(evaluator)
    live = leaf_of(decision_state(game, 1), random.Random(0))
    done = leaf_of(terminal_state(game, 2), random.Random(0))
    answers = evaluator.evaluate([live, done])
    assert answers[0] == LeafEvaluation((0.25, -0.25), (0.75, 0.25))
    assert answers[1].prior is None and answers[1].values == tuple(done.state.returns())
    assert seen == [(live.player, live.legal)]
    check_evaluations([live, done], answers, game.num_players)
    wrong = PriorEvaluator(heuristic, lambda state, player, legal: [1.0])
    with pytest.raises(EvaluatorError, match="prior"):
        check_evaluations([live], wrong.evaluate([live]), game.num_players)
    with pytest.raises(ValueError, match="PriorEvaluator needs"):
        PriorEvaluator(heuristic, "not callable")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("evaluation", "problem"),
    [
        (
            LeafEvaluation((0.5,)),
            r"leaf 0: values \(0\.5,\) have 1 entries, expected one per player \(2\)",
        ),
        (LeafEvaluation((0.5, 0.5, 0.0)), r"have 3 entries, expected one per player \(2\)"),
        (LeafEvaluation((math.nan, 0.0)), r"leaf 0: values .* not all finite"),
        (LeafEvaluation((0.0, math.inf)), r"not all finite"),
        (LeafEvaluation((0.0, 0.0), (1.0,)), r"prior has 1 entries but player 0 has 2 legal"),
        (LeafEvaluation((0.0, 0.0), (0.2, 0.3, 0.5)), r"prior has 3 entries"),
        (LeafEvaluation((0.0, 0.0), (0.6, 0.6)), r"leaf 0: prior sums to 1\.2\d*, not 1"),
        (LeafEvaluation((0.0, 0.0), (1.5, -0.5)), r"negative or NaN entry"),
        (LeafEvaluation((0.0, 0.0), (math.nan, 1.0)), r"negative or NaN entry"),
    ],
)
def test_check_evaluations_names_the_problem(evaluation: LeafEvaluation, problem: str) -> None:
    game = make_game("kuhn_poker")
    leaf = leaf_of(decision_state(game, 0), random.Random(0))
    assert leaf.legal == (0, 1)
    with pytest.raises(EvaluatorError, match=problem):
        check_evaluations([leaf], [evaluation], 2)


def test_check_evaluations_counts_and_accepts_good_answers() -> None:
    game = make_game("kuhn_poker")
    leaves = [leaf_of(decision_state(game, s), random.Random(s)) for s in range(2)]
    good = [LeafEvaluation((1.0, -1.0), (0.25, 0.75)), LeafEvaluation((0.0, 0.0))]
    check_evaluations(leaves, good, 2)  # no error
    with pytest.raises(EvaluatorError, match="returned 1 evaluations for 2 leaves"):
        check_evaluations(leaves, good[:1], 2)
    bad_second = [good[0], LeafEvaluation((0.0, 0.0), (0.5, 0.4))]
    with pytest.raises(EvaluatorError, match="leaf 1: prior sums to 0.9"):
        check_evaluations(leaves, bad_second, 2)


# -- run_searches -------------------------------------------------------------------------------
class RecordingEvaluator:
    """Random rollouts (from each leaf's own rng), remembering every batch it was given."""

    def __init__(self) -> None:
        self.inner = RolloutEvaluator(RandomPlayer())
        self.batches: list[list[int]] = []  # tags of the leaves of each call

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        self.batches.append([TAGS[id(leaf)] for leaf in leaves])
        return self.inner.evaluate(leaves)


TAGS: dict[int, int] = {}  # id(leaf) -> search index * 100 + request number * 10 + position


def toy_search(
    game: Game, seed: int, requests: int, width: int, tag: int
) -> Generator[list[Leaf], list[LeafEvaluation], tuple[tuple[float, ...], ...]]:
    """Walks one random line of ``game``; at each of ``requests`` steps asks for ``width`` leaves
    (the current state and ``width - 1`` random continuations) and steers by their values."""
    rng = random.Random(seed)
    state = decision_state(game, seed)
    seen: list[tuple[float, ...]] = []
    for r in range(requests):
        leaves = []
        for k in range(width):
            probe = state.clone()
            for _ in range(k):
                if probe.current_players and probe.current_players != (CHANCE,):
                    legal = probe.legal_actions()
                    probe.apply_action(legal[int(rng.random() * len(legal))])
            leaf = leaf_of(probe, rng)
            TAGS[id(leaf)] = tag * 100 + r * 10 + k
            leaves.append(leaf)
        answers = yield leaves
        assert len(answers) == width
        seen.extend(ev.values for ev in answers)
        if not state.current_players:
            continue  # the line ended: keep asking about the final state
        if state.current_players == (CHANCE,):
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
        else:
            mover = state.current_players[0]
            legal = state.legal_actions()
            best = max(range(len(legal)), key=lambda i: (answers[0].values[mover], -i))
            state.apply_action(legal[best] if rng.random() < 0.5 else legal[-1])
    return tuple(seen)


def test_run_searches_batches_every_pending_request_in_search_order() -> None:
    game = make_game("leduc_poker")
    TAGS.clear()
    evaluator = RecordingEvaluator()
    stats = BatchStats()
    searches = [
        toy_search(game, seed=1, requests=1, width=1, tag=0),
        toy_search(game, seed=2, requests=3, width=2, tag=1),
        toy_search(game, seed=3, requests=0, width=1, tag=2),  # finishes without asking
        toy_search(game, seed=4, requests=2, width=1, tag=3),
    ]
    results = run_searches(searches, evaluator, game.num_players, stats=stats)
    assert evaluator.batches == [
        [0, 100, 101, 300],  # every search's first request, in search order
        [110, 111, 310],  # search 0 has finished
        [120, 121],
    ]
    assert results[2] == ()
    assert [len(r) for r in results] == [1, 6, 0, 2]
    assert (stats.calls, stats.leaves, stats.max_batch) == (3, 9, 4)
    assert stats.mean_batch == pytest.approx(3.0)
    assert "mean_batch=3.0" in repr(stats)


def test_run_searches_gives_each_search_the_same_answers_as_alone() -> None:
    """Rollouts draw from each leaf's own rng, so the serving order never changes a result."""
    game = make_game("mexican_train", players=3, rounds=1)
    evaluator = RolloutEvaluator(RandomPlayer())
    args = [(seed, 4 + seed % 3, 1 + seed % 2) for seed in range(5)]
    together = run_searches(
        [toy_search(game, s, r, w, tag=s) for s, r, w in args], evaluator, game.num_players
    )
    alone = [
        run_search(toy_search(game, s, r, w, tag=s), evaluator, game.num_players)
        for s, r, w in args
    ]
    assert together == alone
    assert len({r for r in together}) == len(args)


def test_run_searches_checks_the_evaluator_answers() -> None:
    game = make_game("kuhn_poker")
    wrong_shape = FunctionEvaluator(lambda leaves: [LeafEvaluation((0.0,)) for _ in leaves])
    with pytest.raises(EvaluatorError, match="expected one per player"):
        run_searches([toy_search(game, 0, 1, 1, tag=0)], wrong_shape, game.num_players)
    assert run_searches([], wrong_shape, game.num_players) == []
