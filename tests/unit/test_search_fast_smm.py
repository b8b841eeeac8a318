"""The compiled Goofspiel kernels and the compiled SM-MCTS against the Python game and SMMCTS.

Kernels: over random playouts of several parameter sets, every packed step equals the packed
Python state, the legal cards, returns, information-set keys (equal exactly when the Python keys
are) and the encoder agree bit for bit, ``sample_world`` keeps what the player knows and the
random rollout plays the moves its random numbers name. Search: the root strategy agrees with the
Python SMMCTS within margins (random rollouts, a deterministic network stand-in, hidden bids,
regret matching), batched searches equal each one alone, and a budget of N is N simulations.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from omega_cluster.games.goofspiel import PLUGIN, GoofspielGame, GoofspielState
from omega_cluster.games.goofspiel.encoder import GoofspielEncoder
from omega_cluster.games.goofspiel.fast import OVER, fast_smm_search
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search._ismcts_jit import rand_below
from omega_cluster.search.evaluators import FunctionEvaluator, LeafEvaluation, RolloutEvaluator
from omega_cluster.search.fast.game import FastLeaf
from omega_cluster.search.fast.smm_driver import run_batched_sm, unsupported
from omega_cluster.search.smmcts import SMMCTS, SMMCTSConfig

pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")

PARAMS = [
    {"num_cards": 4},
    {"num_cards": 6, "imp_info": True},
    {"num_cards": 13, "returns_type": "point_difference"},
    {"num_cards": 13, "imp_info": True, "returns_type": "total_points"},
    {"num_cards": 6, "players": 3},
    {"num_cards": 6, "points_order": "descending", "imp_info": True},
    {"num_cards": 5, "points_order": "ascending", "num_turns": 3, "players": 3},
]


def _fast(game: GoofspielGame):
    fast, why = fast_smm_search(game, GoofspielEncoder(game))
    assert why is None and fast is not None
    return fast


def _play_both(game: GoofspielGame, fast, rng: random.Random, rs: np.ndarray):
    """A random playout of the Python state and the packed one in step; yields each position."""
    state, S = game.new_initial_state(), None
    S = fast.pack(state)
    buf = np.zeros(game.num_cards, np.int64)
    while True:
        assert np.array_equal(S, fast.pack(state))
        yield state, S
        if state.is_terminal():
            assert fast.status(fast.ctx, S) == OVER
            return
        if state.is_chance_node():
            card = fast.apply_chance(fast.ctx, S, rs)
            assert card in state.legal_actions()
            state.apply_action(card)
            continue
        bids = []
        for p in range(game.num_players):
            n = fast.legal(fast.ctx, S, p, buf)
            assert list(buf[:n]) == state.legal_actions(p)
            bids.append(rng.choice(state.legal_actions(p)))
        state.apply_joint_action(bids)
        fast.apply_joint(fast.ctx, S, np.array(bids, np.int64))


@pytest.mark.parametrize("params", PARAMS)
def test_kernels_step_score_key_and_encode_as_the_python_game(params) -> None:
    game = GoofspielGame(**params)
    fast, enc = _fast(game), GoofspielEncoder(game)
    rng, rs = random.Random(1), np.array([7], np.uint64)
    keys: dict[tuple[int, int], int] = {}  # compiled key -> python key (must be one to one)
    back: dict[object, int] = {}
    out = np.zeros(game.num_players)
    buf = np.zeros(game.num_cards, np.int64)
    positions = 0
    for _ in range(25):
        for state, S in _play_both(game, fast, rng, rs):
            positions += 1
            for p in range(game.num_players):
                ck, pk = fast.info_key(fast.ctx, S, p), state.information_set_key(p)
                assert keys.setdefault((p, ck), pk) == pk and back.setdefault((p, pk), ck) == ck
                if len(state.current_players) > 1:
                    obs = np.zeros(fast.obs_size, np.float32)
                    feats = np.zeros((game.num_cards, fast.feat_size), np.float32)
                    n = fast.legal(fast.ctx, S, p, buf)
                    fast.encode(fast.ctx, S, p, buf, n, obs, feats)
                    assert np.array_equal(obs, enc.encode_observation(state, p))
                    want = enc.encode_actions(state, p, state.legal_actions(p))
                    assert np.array_equal(feats[:n], want) and not feats[n:].any()
        fast.returns(fast.ctx, S, out)
        assert tuple(out) == state.returns()
    assert positions >= 100 and len(keys) > 50


def _replay(game: GoofspielGame, state: GoofspielState, player: int, S: np.ndarray, fast):
    """The Python state with the opponent's bids of the packed world ``S``."""
    n, bi = game.num_players, int(fast.ctx[10])
    world, turn = game.new_initial_state(), 0
    for entry in state.history:
        if isinstance(entry, tuple):
            world.apply_joint_action([int(S[bi + turn * n + q]) for q in range(n)])
            turn += 1
        else:
            world.apply_action(entry)
    return world


def test_sample_world_redraws_the_opponent_bids_consistently() -> None:
    game = GoofspielGame(num_cards=8, imp_info=True)
    fast = _fast(game)
    rng, rs = random.Random(3), np.array([11], np.uint64)
    redrawn = checked = 0
    for _ in range(12):
        for state, S in _play_both(game, fast, rng, rs):
            if state.is_terminal() or state._turn == 0:
                continue
            for p in range(2):
                world = np.zeros_like(S)
                fast.sample_world(fast.ctx, S, p, rs, world)
                py = _replay(game, state, p, world, fast)  # legal bids: the replay would raise
                assert np.array_equal(world, fast.pack(py))
                assert py.information_set_key(p) == state.information_set_key(p)
                redrawn += not np.array_equal(world, S)
                checked += 1
    assert checked > 50 and redrawn > checked // 3


def test_random_rollout_plays_the_moves_its_random_numbers_name() -> None:
    game = GoofspielGame(num_cards=6, players=3)
    fast = _fast(game)
    out = np.zeros(3)
    for seed in range(20):
        state = game.new_initial_state()
        S = fast.pack(state)
        rs, replay = np.array([seed], np.uint64), np.array([seed], np.uint64)
        assert fast.rollout(fast.ctx, S, rs, out)
        while not state.is_terminal():
            if state.is_chance_node():
                legal = state.legal_actions()
                state.apply_action(legal[rand_below(replay, len(legal))])
            else:
                bids = []
                for p in range(3):
                    legal = state.legal_actions(p)
                    bids.append(legal[rand_below(replay, len(legal))])
                state.apply_joint_action(bids)
        assert tuple(out) == state.returns() and rs[0] == replay[0]


def test_hook_and_refusals_name_the_reason() -> None:
    assert PLUGIN.hook("fast_smm_search") is fast_smm_search
    fast, why = fast_smm_search(GoofspielGame(num_cards=5, players=3, imp_info=True))
    assert fast is None and "two players" in why
    assert "not a Goofspiel game" in fast_smm_search(object())[1]  # type: ignore[arg-type]
    assert unsupported(SMMCTSConfig(), FastLeaf("random_rollout")) is None
    assert "time_limit_s" in unsupported(SMMCTSConfig(time_limit_s=1.0), FastLeaf("network"))
    assert "leaf 'heuristic'" in unsupported(SMMCTSConfig(), FastLeaf("heuristic"))
    game = GoofspielGame(num_cards=4)
    fast = _fast(game)
    S = fast.pack(game.new_initial_state())  # a chance node: no one bids yet
    one, zero = np.ones(1, np.int64), np.zeros(1, np.int64)
    with pytest.raises(ValueError, match="needs a forward"):
        run_batched_sm(fast, S[None], zero, one, zero, SMMCTSConfig(), FastLeaf("network"))
    with pytest.raises(ValueError, match="root 0 is not a decision of player 0"):
        run_batched_sm(fast, S[None], zero, one, zero, SMMCTSConfig(), FastLeaf("random_rollout"))
    timed = SMMCTSConfig(time_limit_s=2.0)
    with pytest.raises(ValueError, match="time_limit_s=2.0 is not compiled"):
        run_batched_sm(fast, S[None], zero, one, zero, timed, FastLeaf("random_rollout"))


# -- the search ------------------------------------------------------------------------------
_W = np.random.default_rng(5).normal(size=(64, 2))


def _net_values(obs: np.ndarray) -> np.ndarray:
    """The deterministic network stand-in: seat-relative values in (-1, 1) from the observation,
    row by row (a batched matrix product may round differently with the batch size)."""
    w = _W[: obs.shape[1]]
    return np.array(
        [
            [np.tanh(0.7 * float(np.dot(row, w[:, j]))) for j in range(2)]
            for row in obs.astype(np.float64)
        ]
    ).reshape(-1, 2)


def _forward(obs, feats, mask):
    prior = mask / mask.sum(axis=1, keepdims=True)
    return prior, _net_values(obs)


def _python_network(game: GoofspielGame) -> FunctionEvaluator:
    enc = GoofspielEncoder(game)

    def fn(leaves):
        out = []
        for leaf in leaves:
            rel = _net_values(enc.encode_observation(leaf.state, leaf.player)[None])[0]
            n = game.num_players
            absolute = tuple(float(rel[(p - leaf.player) % n]) for p in range(n))
            out.append(LeafEvaluation(absolute, (1.0 / len(leaf.legal),) * len(leaf.legal)))
        return out

    return FunctionEvaluator(fn)


def _root(game: GoofspielGame, card: int) -> GoofspielState:
    state = game.new_initial_state()
    if state.is_chance_node():
        state.apply_action(card)
    return state


CASES = [  # (params, selection, leaf, final_strategy, margin on the mean strategy)
    ({"num_cards": 4}, "ucb", "random_rollout", "visits", 0.08),
    ({"num_cards": 4}, "ucb", "network", "visits", 0.08),
    ({"num_cards": 5, "imp_info": True}, "ucb", "network+random_rollout", "visits", 0.08),
    # a regret-matching average strategy varies widely between seeds (sd ~0.2 an action)
    ({"num_cards": 4}, "regret_matching", "random_rollout", "average", 0.15),
    ({"num_cards": 4}, "exp3", "random_rollout", "average", 0.08),
]


@pytest.mark.parametrize(("params", "selection", "leaf", "final", "margin"), CASES)
def test_root_strategy_agrees_with_the_python_search(
    params, selection, leaf, final, margin
) -> None:
    game = GoofspielGame(**params)
    fast = _fast(game)
    root = _root(game, game.num_cards - 1)
    cfg = SMMCTSConfig(simulations=600, selection=selection, final_strategy=final)
    seeds = 12
    res = run_batched_sm(
        fast, np.stack([fast.pack(root)] * seeds), np.zeros(seeds, np.int64),
        np.full(seeds, 600), np.arange(seeds, dtype=np.uint64), cfg, FastLeaf(leaf, 0.5), _forward,
    )  # fmt: skip
    rollout = RolloutEvaluator(RandomPlayer())
    evaluator = {"random_rollout": rollout, "network": _python_network(game)}.get(leaf)
    if evaluator is None:
        from omega_cluster.search.evaluators import BlendEvaluator

        evaluator = BlendEvaluator(_python_network(game), rollout, weight_a=0.5, weight_b=0.5)
    search = SMMCTS(game, evaluator, cfg, fast=False)
    python = [search.search(root, 0, random.Random(s)) for s in range(seeds)]
    m = res.num_legal[0]
    assert all(tuple(res.legal[k, :m]) == r.legal for k, r in enumerate(python))
    mean_c = res.policy[:, :m].mean(axis=0)
    mean_p = np.mean([r.policy for r in python], axis=0)
    assert np.abs(mean_c - mean_p).max() < margin, (mean_c, mean_p)
    value_c = res.root_value[:, 0].mean()
    value_p = np.mean([r.root_value[0] for r in python])
    assert abs(value_c - value_p) < 0.1, (value_c, value_p)
    assert (res.simulations == 600).all() and (res.visits[:, :m].sum(axis=1) == 600).all()


def test_batched_searches_equal_each_alone_and_budgets_are_simulations() -> None:
    game = GoofspielGame(num_cards=6, imp_info=True)
    fast = _fast(game)
    rng = random.Random(9)
    roots, players = [], []
    for i in range(5):
        state = game.new_initial_state()
        while True:  # a few random turns in
            if state.is_chance_node():
                state.apply_action(rng.choice(state.legal_actions()))
            elif state._turn >= i % 4:
                break
            else:
                state.apply_joint_action([rng.choice(state.legal_actions(p)) for p in range(2)])
        roots.append(fast.pack(state))
        players.append(i % 2)
    R, P = np.stack(roots), np.array(players)
    budgets, seeds = np.array([1, 7, 40, 100, 33]), np.array([5, 6, 7, 8, 9], np.uint64)
    cfg = SMMCTSConfig(selection="exp3")
    together = run_batched_sm(fast, R, P, budgets, seeds, cfg, FastLeaf("network"), _forward)
    assert list(together.simulations) == list(budgets)
    assert 0 < together.forward_calls <= max(budgets) and together.leaves.sum() <= budgets.sum()
    for k in range(5):
        alone = run_batched_sm(fast, R[k : k + 1], P[k : k + 1], budgets[k : k + 1],
                               seeds[k : k + 1], cfg, FastLeaf("network"), _forward)  # fmt: skip
        for name in ("legal", "visits", "policy", "root_value", "leaves", "tree_nodes"):
            assert np.array_equal(
                getattr(alone, name)[0], getattr(together, name)[k], equal_nan=True
            )
