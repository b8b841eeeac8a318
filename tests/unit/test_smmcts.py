"""Simultaneous-move MCTS (omega_cluster.search.smmcts): mixed strategies, strength, determinism,
batching, temperature and time limit, hidden information, bad input."""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

import pytest

from omega_cluster.games import make_game
from omega_cluster.games.api import CHANCE, Game, GameError, GameSpec, ParamSpec, State
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search.batching import run_search, run_searches
from omega_cluster.search.evaluators import RolloutEvaluator
from omega_cluster.search.result import SearchResult
from omega_cluster.search.smmcts import SMMCTS, SMMCTSConfig

ROLLOUT = RolloutEvaluator(RandomPlayer())


# -- a one-shot zero-sum matrix game, defined here so the test needs nothing else -----------------
class MatrixGame(Game):
    """Both players pick a row/column at once; player 0 gets ``payoff[a][b]``, player 1 minus it."""

    name: ClassVar[str] = "test_matrix"
    parameters: ClassVar[dict[str, ParamSpec]] = {
        "players": ParamSpec(2, "players", int, choices=(2,)),
        "payoff": ParamSpec(((0, -1, 1), (1, 0, -1), (-1, 1, 0)), "row player's payoffs", tuple),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.payoff = self.params["payoff"]
        top = max(abs(x) for row in self.payoff for x in row)
        self.spec = GameSpec(
            name=self.name,
            num_players=2,
            min_players=2,
            max_players=2,
            num_actions=len(self.payoff),
            simultaneous=True,
            hidden_information=False,
            explicit_chance=False,
            min_return=-float(top),
            max_return=float(top),
            zero_sum=True,
        )

    def new_initial_state(self, seed: int = 0) -> MatrixState:
        return MatrixState(self)


class MatrixState(State):
    __slots__ = ("done",)
    game: MatrixGame

    def __init__(self, game: MatrixGame) -> None:
        self.game, self.history, self.done = game, [], False

    @property
    def current_players(self) -> tuple[int, ...]:
        return () if self.done else (0, 1)

    def legal_actions(self, player: int | None = None) -> list[int]:
        return [] if self.done or player not in (0, 1) else list(range(len(self.game.payoff)))

    def _apply_action(self, action: int) -> None:
        raise GameError("a matrix game has only a joint move")

    def _apply_joint_action(self, actions: tuple[int, ...]) -> None:
        self.history.append(actions)
        self.done = True

    def returns(self) -> tuple[float, ...]:
        if not self.done:
            return (0.0, 0.0)
        a, b = self.history[0]  # type: ignore[misc]
        x = float(self.game.payoff[a][b])
        return (x, -x)

    def observation(self, player: int) -> Hashable:
        return tuple(self.history)

    def information_set_key(self, player: int) -> Hashable:
        return tuple(self.history)

    def clone(self) -> MatrixState:
        new = MatrixState(self.game)
        new.history, new.done = self.history[:], self.done
        return new


# Biased rock-paper-scissors: rock beats scissors by 2. Equilibrium (both seats) = (1/4, 1/2, 1/4).
BIASED_RPS = ((0, -1, 2), (1, 0, -1), (-2, 1, 0))


def _play(game: Game, searcher: SMMCTS, seat: int, seed: int) -> float:
    """One game: ``searcher`` at ``seat``, uniform random elsewhere; chance from the game rng."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    while state.current_players:
        acting = state.current_players
        if acting == (CHANCE,):
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            continue
        joint = tuple(
            searcher.search(state, p, rng).action
            if p == seat
            else RandomPlayer().act(state, p, rng)
            for p in acting
        )
        state.apply_joint_action(joint)  # checked: an illegal search move fails here
    return state.returns()[seat]


def _goofspiel_after(game: Game, history: Sequence[Any]) -> State:
    state = game.new_initial_state()
    for entry in history:
        if isinstance(entry, tuple):
            state.apply_joint_action(entry)
        else:
            state.apply_action(entry)
    return state


def _same(a: SearchResult, b: SearchResult) -> bool:
    d, e = a.diagnostics, b.diagnostics
    return (a.action, a.policy, a.visits, a.root_value, d.tree_nodes, d.depth_histogram) == (
        b.action,
        b.policy,
        b.visits,
        b.root_value,
        e.tree_nodes,
        e.depth_histogram,
    ) and str(a.action_values) == str(b.action_values)  # str: nan == nan


# -- mixed strategies ----------------------------------------------------------------------------
@pytest.mark.parametrize("selection", ["exp3", "regret_matching"])
def test_average_strategy_approaches_equilibrium(selection: str) -> None:
    """Exp3 / regret matching's average strategy approaches the equilibrium of a one-shot game:
    uniform for RPS, (1/4, 1/2, 1/4) for the biased RPS; within 0.08 per action after 20k
    iterations (measured deviations are ~0.01-0.03 across seeds)."""
    for payoff, target in [
        (((0, -1, 1), (1, 0, -1), (-1, 1, 0)), (1 / 3, 1 / 3, 1 / 3)),
        (BIASED_RPS, (0.25, 0.5, 0.25)),
    ]:
        game = MatrixGame(payoff=payoff)
        search = SMMCTS(game, ROLLOUT, simulations=20_000, selection=selection)
        for player in (0, 1):
            result = search.search(game.new_initial_state(), player, random.Random(7))
            assert len(result.policy) == 3
            assert all(abs(p - t) < 0.08 for p, t in zip(result.policy, target, strict=True)), (
                result.policy
            )
            assert search.config.final_strategy == "visits"
            average = SMMCTS(
                game, ROLLOUT, simulations=20_000, selection=selection, final_strategy="average"
            ).search(game.new_initial_state(), player, random.Random(7))
            assert all(abs(p - t) < 0.08 for p, t in zip(average.policy, target, strict=True))


def test_decoupled_ucb_stays_mixed() -> None:
    """Decoupled UCB's visit distribution on RPS does not collapse to a pure strategy (every action
    keeps > 20% of the visits, measured ~33%); with a fourth, strictly dominated move (it loses to
    everything) that move gets < 5% of the visits (measured ~2%) and the others stay mixed."""
    rps = make_game("openspiel:matrix_rps")
    result = SMMCTS(rps, ROLLOUT, simulations=3000).search(
        rps.new_initial_state(), 0, random.Random(1)
    )
    assert min(result.policy) > 0.2 and max(result.policy) < 0.5, result.policy
    with_dud = MatrixGame(payoff=((0, -1, 1, 1), (1, 0, -1, 1), (-1, 1, 0, 1), (-1, -1, -1, -1)))
    for player in (0, 1):
        result = SMMCTS(with_dud, ROLLOUT, simulations=3000).search(
            with_dud.new_initial_state(), player, random.Random(1)
        )
        assert result.policy[3] < 0.05 and min(result.policy[:3]) > 0.2, result.policy


# -- strength and hidden information ---------------------------------------------------------
@pytest.mark.parametrize("fast", [False, True])
def test_goofspiel5_beats_random(fast: bool) -> None:
    """60 seat-alternated Goofspiel-5 games vs uniform random, 200 iterations, argmax play (the best
    response to a fixed opponent): measured 48 wins / 10 losses; bar: wins >= 2x losses and > 55%
    of the games. The Python loop and the compiled SM-MCTS (Goofspiel has one) alike."""
    game = make_game("goofspiel", num_cards=5)
    search = SMMCTS(game, ROLLOUT, simulations=200, temperature=0.0, fast=fast)
    assert (search.fast is not None) == fast
    results = [_play(game, search, i % 2, 1000 + i) for i in range(60)]
    wins, losses = sum(r > 0 for r in results), sum(r < 0 for r in results)
    assert wins >= 2 * losses and wins > 33, (wins, losses)


def test_goofspiel_imp_info_samples_worlds_and_stays_legal() -> None:
    """With hidden bids every iteration draws a world (sample_world); moves stay legal (the arena's
    checked apply_joint_action) and the searcher still beats random: 30 games, measured 23 wins /
    6 losses; bar: wins >= 2x losses."""
    game = make_game("goofspiel", num_cards=5, imp_info=True)
    search = SMMCTS(game, ROLLOUT, simulations=150, temperature=0.0, fast=False)
    state = _goofspiel_after(game, [4, (4, 2), 3])
    result = search.search(state, 0, random.Random(2))
    assert result.diagnostics.determinizations == 151  # one per iteration + the root's bandits
    assert result.legal == (0, 1, 2, 3) and result.action in result.legal
    results = [_play(game, search, i % 2, 2000 + i) for i in range(30)]
    assert sum(r > 0 for r in results) >= 2 * sum(r < 0 for r in results)


def test_hidden_information_does_not_leak() -> None:
    """Two states in the same information set of player 0 (the opponent's hidden bids differ, the
    outcomes agree) give identical search results for the same rng."""
    game = make_game("goofspiel", num_cards=6, imp_info=True)
    a = _goofspiel_after(game, [5, (5, 2), 1, (0, 3), 4])
    b = _goofspiel_after(game, [5, (5, 1), 1, (0, 4), 4])
    assert a.information_set_key(0) == b.information_set_key(0) and a.history != b.history
    search = SMMCTS(game, ROLLOUT, simulations=300, fast=False)
    assert _same(search.search(a, 0, random.Random(5)), search.search(b, 0, random.Random(5)))


def test_sequential_games_degenerate_to_mcts() -> None:
    """A game without simultaneous nodes: every node is a one-player bandit (plain UCT). Tic-tac-toe
    with a win in one for x (cell 2 completes the top row) is found; hidden-information Kuhn runs."""
    game = make_game("openspiel:tic_tac_toe")
    state = _goofspiel_after(game, [0, 3, 1, 4])
    result = SMMCTS(game, ROLLOUT, simulations=400, temperature=0.0).search(
        state, 0, random.Random(0)
    )
    assert result.action == 2 and result.visits[result.legal.index(2)] == max(result.visits)
    kuhn = make_game("kuhn_poker")
    state = _goofspiel_after(kuhn, [0, 2])
    result = SMMCTS(kuhn, ROLLOUT, simulations=200).search(state, 0, random.Random(0))
    assert result.legal == tuple(state.legal_actions(0)) and sum(result.visits) == 200


def test_three_player_goofspiel() -> None:
    game = make_game("goofspiel", players=3, num_cards=4)
    search = SMMCTS(game, ROLLOUT, simulations=100)
    assert all(_play(game, search, seat, seat) in (-0.5, -1.0, 0.0, 0.5, 1.0) for seat in range(3))


# -- determinism and batching ----------------------------------------------------------------
def test_deterministic_given_the_rng() -> None:
    game = make_game("goofspiel", num_cards=6)
    state = _goofspiel_after(game, [2])
    for selection in ("ucb", "exp3", "regret_matching"):
        search = SMMCTS(game, ROLLOUT, simulations=300, selection=selection)
        first = search.search(state, 1, random.Random(11))
        assert _same(first, search.search(state, 1, random.Random(11)))
        assert not _same(first, search.search(state, 1, random.Random(12)))


def test_batched_equals_unbatched() -> None:
    """run_searches over several searches (one instance, leaves from each search's own rng) gives
    the results each search gives alone."""
    game = make_game("goofspiel", num_cards=6, imp_info=True)
    search = SMMCTS(game, ROLLOUT, simulations=120, selection="exp3", fast=False)
    states = [_goofspiel_after(game, h) for h in ([1], [5, (2, 3), 0], [4, (5, 5), 2])]
    jobs = [(s, p, seed) for seed, s in enumerate(states) for p in (0, 1)]
    alone = [run_search(search.steps(s, p, random.Random(seed)), ROLLOUT, 2) for s, p, seed in jobs]
    together = run_searches(
        [search.steps(s, p, random.Random(seed)) for s, p, seed in jobs], ROLLOUT, 2
    )
    assert all(_same(x, y) for x, y in zip(alone, together, strict=True))
    assert sum(r.diagnostics.leaf_evaluations for r in together) > 0


# -- temperature, time limit ----------------------------------------------------------------
def test_temperature_zero_plays_the_argmax_and_time_limit_stops() -> None:
    game = make_game("goofspiel", num_cards=6)
    state = _goofspiel_after(game, [5])
    result = SMMCTS(game, ROLLOUT, simulations=300, temperature=0.0).search(
        state, 0, random.Random(1)
    )
    assert result.policy[result.legal.index(result.action)] == max(result.policy)
    timed = SMMCTS(game, ROLLOUT, simulations=10**9, time_limit_s=0.05).search(
        state, 0, random.Random(1)
    )
    # stopped by the clock: 10**9 simulations would run for hours (a loaded machine may add a
    # second or two to the 0.05 s)
    assert 1 <= timed.diagnostics.simulations < 10**9 and timed.diagnostics.seconds < 10.0


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"simulations": 0}, "simulations=0 is invalid; allowed: an int >= 1"),
        ({"simulations": -5}, "simulations=-5"),
        ({"selection": "thompson"}, "selection='thompson' is invalid; allowed: 'ucb', 'exp3'"),
        ({"final_strategy": "max"}, "final_strategy='max' is invalid; allowed: 'visits'"),
        ({"temperature": -1.0}, "temperature"),
        ({"time_limit_s": 0}, "time_limit_s"),
        ({"c_uct": float("nan")}, "c_uct"),
        ({"budget": 3}, "unknown option.s. budget; valid options: c_uct"),
    ],
)
def test_bad_config(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SMMCTS(make_game("goofspiel", num_cards=4), ROLLOUT, **overrides)


def test_bad_search_calls() -> None:
    game = make_game("goofspiel", num_cards=4)
    search = SMMCTS(game, ROLLOUT, SMMCTSConfig(simulations=10))
    with pytest.raises(GameError, match="does not act in this state"):
        search.search(game.new_initial_state(), 0, random.Random(0))  # a chance node
    state = _goofspiel_after(game, [3])
    with pytest.raises(GameError, match="player 2 does not act"):
        search.search(state, 2, random.Random(0))
