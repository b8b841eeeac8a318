"""The fast search path (search/fast): Kuhn's and Leduc's compiled kernels equal the Python games
step by step (state, legal actions, keys, chance, determinizations, returns, encoder); the
compiled tree equals the Python ISMCTS result for result when both draw from one splitmix64
stream (random rollouts under UCT and PUCT, a deterministic network leaf with and without
Dirichlet noise, the network+rollout blend); K searches batched equal each run alone; one
forward pass per batch; a budget of N simulations gives N; the reasons the fast path declines."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from fast_helpers import (
    FAST_ROLLOUT,
    NETWORK_LEAF_CASES,
    PYTHON_ROLLOUT,
    ROLLOUT_CASES,
    ExactNet,
    batched,
    check_batched_alone,
    check_network_leaf,
    check_rollout_search,
    same_result,
)

from omega_cluster.games import make_game
from omega_cluster.games.api import Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.kuhn_poker.encoder import KuhnPokerEncoder
from omega_cluster.games.leduc_poker.encoder import LeducPokerEncoder
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search import (
    RolloutEvaluator,
    run_searches,
)
from omega_cluster.search.fast import FastLeaf, SplitMixRandom, driver, fast_game, fast_path
from omega_cluster.search.fast.driver import run_batched
from omega_cluster.search.fast.nodes import gamma_variate
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig

ENCODERS: dict[str, Any] = {"kuhn_poker": KuhnPokerEncoder, "leduc_poker": LeducPokerEncoder}
# positions (actions from the start) and the player to act
POSITIONS = {
    ("kuhn_poker", 2): [[0, 2], [2, 1], [1, 0, 0], [0, 1, 1], [2, 0, 0, 1]],
    ("kuhn_poker", 3): [[0, 2, 3], [3, 1, 0, 0], [1, 0, 2, 1], [2, 3, 1, 0, 0], [0, 1, 3, 1, 0]],
    ("leduc_poker", 2): [[0, 3], [4, 1], [2, 5, 2], [4, 1, 1, 1, 2], [1, 4, 2, 2, 1, 3]],
}


def _play(game: Game, actions: Sequence[int]) -> State:
    state = game.new_initial_state()
    for a in actions:
        state.apply_action(a)
    return state


def _positions(game: Game) -> list[list[int]]:
    return POSITIONS[(game.spec.name, game.num_players)]


@pytest.fixture(scope="module", params=[("kuhn_poker", 2), ("kuhn_poker", 3), ("leduc_poker", 2)])
def game(request: pytest.FixtureRequest) -> Game:
    name, players = request.param
    return make_game(name, players=players)


# -- the kernels equal the Python game --------------------------------------------------------------
def test_kernels_equal_the_python_game_step_by_step(game: Game) -> None:
    fast, why = fast_game(game)
    assert fast is not None, why
    encoder = ENCODERS[game.spec.name](game)
    n, ctx = game.num_players, fast.ctx
    buf, out = np.zeros(fast.max_legal, np.int64), np.zeros(n)
    obs = np.zeros(fast.obs_size, np.float32)
    feats = np.zeros((fast.max_legal, fast.feat_size), np.float32)
    rng = random.Random(0)
    for seed in range(150):
        state, chance_rng = game.new_initial_state(), SplitMixRandom(seed)
        packed = fast.pack(state)
        rs = np.array([seed], np.uint64)
        while not state.is_terminal():
            acting = state.current_players[0]
            assert fast.current(ctx, packed) == (acting if acting >= 0 else -2)
            for p in range(n):
                assert fast.info_key(ctx, packed, p) == state.information_set_key(p)
            if acting < 0:  # chance: the kernel draws as sample_chance does
                state.apply_action(sample_chance(state.chance_outcomes(), chance_rng.random()))
                fast.chance(ctx, packed, rs)
                assert int(rs[0]) == chance_rng.state
            else:
                k = fast.legal(ctx, packed, buf)
                assert list(buf[:k]) == state.legal_actions(acting)
                obs[:], feats[:] = 0.0, 0.0
                fast.encode(fast.ectx, ctx, packed, acting, buf, k, obs, feats)
                assert (obs == encoder.encode_observation(state, acting)).all()
                assert (feats[:k] == encoder.encode_actions(state, acting, buf[:k])).all()
                _check_sample_world(fast, state, packed, acting, seed)
                action = rng.choice(state.legal_actions(acting))
                state.apply_action(action)
                fast.apply(ctx, packed, action)
            assert (fast.pack(state) == packed).all()
        assert fast.current(ctx, packed) == -1
        fast.returns(ctx, packed, out)
        assert tuple(out) == state.returns()


def _check_sample_world(
    fast: Any, state: State, packed: np.ndarray, player: int, seed: int
) -> None:
    """A determinization from one stream: the Python ``sample_world`` and the kernel agree."""
    python = state.sample_world(player, SplitMixRandom(seed))
    world = np.zeros_like(packed)
    fast.sample_world(fast.ctx, packed, player, np.array([seed], np.uint64), world)
    assert (fast.pack(python) == world).all()


@pytest.mark.parametrize("alpha", [0.03, 0.3, 1.0, 2.5])
def test_gamma_draws_equal_pythons_gammavariate(alpha: float) -> None:
    rng, rs = SplitMixRandom(7), np.array([7], np.uint64)
    for _ in range(200):
        assert gamma_variate(alpha, rs) == rng.gammavariate(alpha, 1.0)
    assert int(rs[0]) == rng.state


# -- the fast path equals the Python search -----------------------------------------------------------
@pytest.mark.parametrize(("selection", "simulations"), ROLLOUT_CASES)
def test_random_rollout_search_equals_the_python_search(
    game: Game, selection: str, simulations: int
) -> None:
    check_rollout_search(game, [_play(game, a) for a in _positions(game)], selection, simulations)


def Net(game: Game) -> ExactNet:
    return ExactNet(game, ENCODERS[game.spec.name](game))


@pytest.mark.parametrize(("selection", "dirichlet", "leaf"), NETWORK_LEAF_CASES)
def test_network_leaf_equals_the_python_search(
    game: Game, selection: str, dirichlet: float, leaf: str
) -> None:
    states = [_play(game, a) for a in _positions(game)[:3]]
    check_network_leaf(game, Net(game), states, selection, dirichlet, leaf)


def test_batched_searches_equal_each_alone_one_forward_per_batch(game: Game) -> None:
    check_batched_alone(game, Net(game), [_play(game, a) for a in _positions(game)])


def test_the_edge_pool_grows_as_the_trees_need(game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool started with one edge a node (a game's max_legal may be large) grows on the way
    and gives the same searches as one sized for the worst case."""
    net = Net(game)
    config = ISMCTSConfig(simulations=80, selection="puct")
    states = [_play(game, a) for a in _positions(game)]
    seeds = list(range(len(states)))
    roomy = batched(game, net, states, seeds, config, FastLeaf("network"))
    monkeypatch.setattr(driver, "_EDGES_PER_NODE", 1)
    tight = batched(game, net, states, seeds, config, FastLeaf("network"))
    for field in ("visits", "means", "root_value", "leaves", "histogram", "tree_nodes"):
        assert np.array_equal(getattr(roomy, field), getattr(tight, field), equal_nan=True)


def test_a_budget_of_n_simulations_gives_n(game: Game) -> None:
    fast, _ = fast_game(game)
    assert fast is not None
    states = [_play(game, a) for a in _positions(game)[:3]]
    budgets = np.array([1, 7, 50])
    for leaf, forward in (
        (FastLeaf("random_rollout"), None),
        (FastLeaf("network"), Net(game).forward),
    ):
        got = run_batched(
            fast, np.stack([fast.pack(s) for s in states]),
            np.array([s.current_players[0] for s in states]), budgets,
            np.arange(3, dtype=np.uint64), ISMCTSConfig(selection="puct"), leaf, forward,
        )  # fmt: skip
        assert list(got.simulations) == list(budgets)
        assert list(got.visits.sum(axis=1)) == list(budgets)
        assert list(got.histogram.sum(axis=1)) == list(budgets)


def test_the_fast_path_serves_batched_steps_too(game: Game) -> None:
    """``ISMCTS.steps`` on the fast path yields no leaf (its rollouts run inside) and returns the
    same result as ``search``; run_searches serves it beside Python searches."""
    search = ISMCTS(game, FAST_ROLLOUT, simulations=100)
    python = ISMCTS(game, PYTHON_ROLLOUT, simulations=100)
    states = [_play(game, a) for a in _positions(game)[:2]]
    steps = [search.steps(s, s.current_players[0], SplitMixRandom(i)) for i, s in enumerate(states)]
    steps += [
        python.steps(s, s.current_players[0], SplitMixRandom(i)) for i, s in enumerate(states)
    ]
    results = run_searches(steps, PYTHON_ROLLOUT, game.num_players)
    for i in range(2):
        same_result(results[i], results[i + 2])
        alone = search.search(states[i], states[i].current_players[0], SplitMixRandom(i))
        same_result(results[i], alone)


# -- when the fast path declines ------------------------------------------------------------------
def test_fast_path_names_what_prevents_it() -> None:
    leduc = make_game("leduc_poker")
    random_leaf = FastLeaf("random_rollout")
    assert fast_path(leduc, ISMCTSConfig(), random_leaf)[0] is not None
    for overrides, reason in (({"leaves_in_flight": 4}, "leaves_in_flight"),):
        fast, why = fast_path(leduc, ISMCTSConfig(**overrides), random_leaf)
        assert fast is None and why is not None and reason in why
    assert "no compiled rollout 'commander_rollout'" in str(
        fast_path(leduc, ISMCTSConfig(), FastLeaf("commander_rollout"))[1]
    )
    assert "2 players" in str(fast_game(make_game("leduc_poker", players=3))[1])
    assert ISMCTS(leduc, RolloutEvaluator(RandomPlayer(), rollouts=2)).fast is None
    assert ISMCTS(make_game("kuhn_poker", players=3), FAST_ROLLOUT).fast is not None
    with pytest.raises(ValueError, match="FastLeaf: leaf 'network\\+' must be"):
        FastLeaf("network+")
    with pytest.raises(ValueError, match="network_value_weight must be in"):
        FastLeaf("network+random_rollout", network_value_weight=1.5)


def test_run_batched_names_bad_input() -> None:
    game = make_game("kuhn_poker")
    fast, _ = fast_game(game)
    assert fast is not None
    root = fast.pack(_play(game, [0, 2]))[None, :]
    one, cfg = np.array([1]), ISMCTSConfig()
    with pytest.raises(ValueError, match="roots must be int64"):
        run_batched(fast, root[:, :3], one * 0, one, one, cfg, FastLeaf("random_rollout"))
    with pytest.raises(ValueError, match="needs a forward function"):
        run_batched(fast, root, one * 0, one, one, cfg, FastLeaf("network"))
    with pytest.raises(ValueError, match="forward returned priors"):
        run_batched(fast, root, one * 0, one, one, cfg, FastLeaf("network"),
                    lambda o, f, m: (np.zeros((1, 5)), np.zeros((1, 2))))  # fmt: skip


def test_a_compiled_tree_reused_from_run_to_run_equals_fresh_ones(
    game: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``CompiledTree`` keeps its arrays between runs (what a search object does move after
    move): runs of one object, in any order, after runs of other shapes and after its edge pool
    grew, equal runs of fresh ones; nothing of a run leaks into the next."""
    monkeypatch.setattr(driver, "_EDGES_PER_NODE", 1)  # the first runs grow the pool
    states = [_play(game, a) for a in _positions(game)]
    players = np.array([s.current_players[0] for s in states])
    net = Net(game)
    for leaf, forward, config in (
        (FastLeaf("random_rollout"), None, ISMCTSConfig(simulations=150, c_uct=2.0)),
        (FastLeaf("network"), net.forward,
         ISMCTSConfig(simulations=70, selection="puct", dirichlet_fraction=0.25)),
    ):  # fmt: skip
        fast, _ = fast_path(game, config, leaf)
        assert fast is not None
        tree = driver.CompiledTree(fast, leaf)
        roots = np.stack([fast.pack(s) for s in states])
        runs = [([k], [config.simulations]) for k in range(len(states))]
        runs += [(list(range(len(states))), [config.simulations] * len(states)), ([0], [0])]
        runs += [([k], [config.simulations]) for k in reversed(range(len(states)))]
        for i, (rows, budgets) in enumerate(runs):
            seeds = np.array([i + r for r in rows], np.uint64)
            args = (roots[rows], players[rows], np.array(budgets), seeds, config, forward)
            got = tree.run(*args)
            fresh = run_batched(fast, *args[:5], leaf, forward)
            for field in ("legal", "n_legal", "visits", "means", "root_value", "prior",
                          "simulations", "leaves", "tree_nodes", "histogram", "rng_states"):  # fmt: skip
                a, b = getattr(got, field), getattr(fresh, field)
                assert np.array_equal(a, b, equal_nan=True), (i, field)


def test_a_run_that_starts_inside_another_gets_arrays_of_its_own(game: Game) -> None:
    """A forward pass that runs the same ``CompiledTree`` (as a second thread could) does not
    disturb the run it is called from: both equal runs of fresh trees."""
    net = Net(game)
    config = ISMCTSConfig(simulations=60, selection="puct")
    leaf = FastLeaf("network")
    fast, _ = fast_path(game, config, leaf)
    assert fast is not None
    tree = driver.CompiledTree(fast, leaf)
    states = [_play(game, a) for a in _positions(game)]
    roots = np.stack([fast.pack(s) for s in states])
    players = np.array([s.current_players[0] for s in states])
    budgets, seeds = np.full(len(states), 60), np.arange(len(states), dtype=np.uint64)
    inner: list[Any] = []

    def searching_forward(obs: Any, feats: Any, mask: Any) -> Any:
        if not inner:  # the first batch starts a run of the same shape on the same tree
            inner.append(tree.run(roots, players, budgets, seeds + 9, config, net.forward))
        return net.forward(obs, feats, mask)

    outer = tree.run(roots, players, budgets, seeds, config, searching_forward)
    again = tree.run(roots, players, budgets, seeds, config, net.forward)  # the kept arrays
    fresh = run_batched(fast, roots, players, budgets, seeds, config, leaf, net.forward)
    fresh_inner = run_batched(fast, roots, players, budgets, seeds + 9, config, leaf, net.forward)
    for field in ("visits", "means", "root_value", "leaves", "histogram", "tree_nodes"):
        for got, want in ((outer, fresh), (again, fresh), (inner[0], fresh_inner)):
            assert np.array_equal(getattr(got, field), getattr(want, field), equal_nan=True)
