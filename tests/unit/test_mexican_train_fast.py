"""Mexican Train on arrays (the fast search path) against the Python rules, over every rule
variant: the packed state steps exactly as ``MexicanTrainState`` (every field, every move),
legal moves come out in the same order, information-set keys agree, determinizations keep the
searching player's information set (under the public deductions, the Python sampler's worlds), and the rollouts score as the Python rules and the
Commander do."""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
import pytest
from numba import njit

from omega_cluster.games import make_game
from omega_cluster.games._splitmix import rand_below
from omega_cluster.games.fast import FastGame, SplitMixRandom
from omega_cluster.games.mexican_train.fast.game import fast_game
from omega_cluster.games.mexican_train.fast.layout import STATE_SIZE, X_OVER
from omega_cluster.games.mexican_train.fast.state import commander_for, fields, make_pack
from omega_cluster.games.mexican_train.inference import deal_constraints
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.games.mexican_train.officers import _rules_jit as R
from omega_cluster.games.registry import game_plugin

VARIANTS: list[dict[str, Any]] = [
    {"players": 4},
    {"players": 2},
    {"players": 3, "strict_doubles": False},
    {"players": 6},
    {"players": 4, "must_play": False},
    {"players": 4, "draw_until_playable": True},
    {"players": 4, "first_turn_chain": True},
    {"players": 3, "double_set": 9, "double_blank_value": 25},
    {
        "players": 6,
        "objective": "go_out",
        "strict_doubles": False,
        "first_turn_chain": True,
        "must_play": False,
    },
    # no boneyard at all: the round may be blocked at the deal
    {"players": 2, "double_set": 9, "hand_sizes": (27, 18, 13, 10, 9, 7, 6)},
]
IDS = [",".join(f"{k}={v}" for k, v in p.items()) for p in VARIANTS]
SEEDS = 3


@functools.cache
def _fast(i: int) -> tuple[Any, FastGame]:
    game = make_game("mexican_train", rounds=1, **VARIANTS[i])
    fg, why = fast_game(game)
    assert why is None and fg is not None
    return game, fg


@functools.cache
def _positions(i: int) -> list[Any]:
    """Every position of ``SEEDS`` random rounds (the finished ones included)."""
    game, _ = _fast(i)
    rng = random.Random(100 + i)
    out = []
    for seed in range(SEEDS):
        s = game.new_initial_state(seed=seed)
        out.append(s.clone())
        while not s.is_terminal():
            s.apply_action(rng.choice(s.legal_actions()))
            out.append(s.clone())
    return out


def _diff(a: np.ndarray, b: np.ndarray, n: int) -> dict[str, Any]:
    fa, fb = fields(a, n), fields(b, n)
    return {k: (fa[k], fb[k]) for k in fa if fa[k] != fb[k]}


@pytest.mark.parametrize("i", range(len(VARIANTS)), ids=IDS)
def test_kernels_step_exactly_as_the_python_state(i: int) -> None:
    """From each deal, every random move applied by the kernel leaves the vector equal, entry
    for entry, to the packed Python state; legal moves and the acting seat agree at every step,
    and the returns at the round's end."""
    game, fg = _fast(i)
    n = game.num_players
    buf = np.zeros(fg.max_legal, np.int64)
    out = np.zeros(n)
    rng = random.Random(i)
    steps = 0
    for seed in range(SEEDS):
        s = game.new_initial_state(seed=seed)
        S = fg.pack(s)
        while True:
            k = fg.legal(fg.ctx, S, buf)
            assert buf[:k].tolist() == s.legal_actions(), (seed, s.history)
            assert fg.current(fg.ctx, S) == (s.current_players or (-1,))[0]
            fg.returns(fg.ctx, S, out)
            assert tuple(out) == s.returns()
            if s.is_terminal():
                break
            a = rng.choice(s.legal_actions())
            s.apply_action(a)
            fg.apply(fg.ctx, S, a)
            steps += 1
            expected = fg.pack(s)
            assert np.array_equal(S, expected), (seed, s.history, _diff(S, expected, n))
        assert S[X_OVER] == 1 and abs(out.sum() - 1.0) < 1e-12
    assert steps > 20 * SEEDS or i == len(VARIANTS) - 1


@pytest.mark.parametrize("i", range(len(VARIANTS)), ids=IDS)
def test_info_keys_agree_with_the_python_keys(i: int) -> None:
    """Over every position and player, equal fast keys ⇔ equal Python keys (Python worlds of
    the same information set give the same key), and keys are non-negative."""
    game, fg = _fast(i)
    rng = random.Random(7)
    seen: dict[int, int] = {}
    fast_seen: dict[int, int] = {}
    pairs = 0
    for s in _positions(i):
        for p in range(game.num_players):
            worlds = [s, s.sample_world(p, rng)]
            for w in worlds:
                key = fg.info_key(fg.ctx, fg.pack(w), p)
                assert key >= 0
                py = w.information_set_key(p)
                assert seen.setdefault(py, key) == key
                assert fast_seen.setdefault(key, py) == py
                pairs += 1
    assert pairs > 200 and len(seen) < pairs  # worlds did share keys


@pytest.mark.parametrize("i", range(len(VARIANTS)), ids=IDS)
def test_sample_world_redeals_only_what_the_player_cannot_see(i: int) -> None:
    """A world keeps the player's information set (key, hand, board, ends, every count, the
    public record), redeals the same hidden tiles (other hands and boneyard) without one the
    player can see, leaves the root unchanged, and varies."""
    game, fg = _fast(i)
    n = game.num_players
    rs = np.array([12345 + i], np.uint64)
    out = np.zeros(STATE_SIZE, np.int64)
    tiles = game.tiles
    varied = hidden_positions = 0
    for s in _positions(i)[::3]:
        S = fg.pack(s)
        root = S.copy()
        for p in range(n):
            fg.sample_world(fg.ctx, S, p, rs, out)
            assert np.array_equal(S, root)
            assert fg.info_key(fg.ctx, out, p) == fg.info_key(fg.ctx, S, p)
            fs, fw = fields(S, n), fields(out, n)
            others = [q for q in range(n) if q != p]
            for name in fs:
                if name not in ("hands", "boneyard"):
                    assert fs[name] == fw[name], name
            assert fw["hands"][p] == fs["hands"][p]
            twin = fg.pack(s.sample_world(p, random.Random(p)))  # p cannot tell it from s
            again = np.zeros(STATE_SIZE, np.int64)
            fg.sample_world(fg.ctx, twin, p, np.array([7], np.uint64), again)
            fg.sample_world(fg.ctx, S, p, np.array([7], np.uint64), twin)
            assert np.array_equal(again, twin)  # one information set, one seed: one world
            if s.is_terminal():
                assert np.array_equal(out, S)
                continue
            world_hands = [_mask(fw["hands"][q]) for q in range(n)]
            assert [m.bit_count() for m in world_hands] == list(s.hand_sizes)
            assert len(fw["boneyard"]) == len(s.boneyard)
            hidden = [t for q in others for t in tiles.mask_tiles(world_hands[q])]
            hidden += fw["boneyard"]
            assert sorted(hidden) == list(tiles.mask_tiles(s.unseen_mask(p)))  # no repeats
            assert np.all(out[R.S_BONE + len(s.boneyard) : R.S_SIZE] == 0)
            places = sum(1 for q in others if s.hands[q]) + (len(s.boneyard) > 0)
            if places > 1:  # else the deal is forced: the world is the truth
                hidden_positions += 1
                varied += any(world_hands[q] != s.hands[q] for q in others) or fw[
                    "boneyard"
                ] != list(s.boneyard)
    assert varied >= 0.8 * hidden_positions
    assert hidden_positions > 0 or i == len(VARIANTS) - 1


def _mask(words: tuple[int, int]) -> int:
    return words[0] | words[1] << R.WORD


def test_sample_world_is_a_uniform_redeal() -> None:
    """At one 4p position, each hidden tile lands in each hidden place (the three other hands,
    the boneyard) as often as that place's share of the hidden tiles (2,000 worlds)."""
    game, fg = _fast(0)
    s = _positions(0)[9]
    S = fg.pack(s)
    out = np.zeros(STATE_SIZE, np.int64)
    rs = np.array([99], np.uint64)
    unseen = game.tiles.mask_tiles(s.unseen_mask(0))
    where = {t: np.zeros(4) for t in unseen}  # per tile: seats 1, 2, 3, boneyard
    worlds = 2000
    for _ in range(worlds):
        fg.sample_world(fg.ctx, S, 0, rs, out)
        f = fields(out, 4)
        for q in (1, 2, 3):
            for t in game.tiles.mask_tiles(_mask(f["hands"][q])):
                where[t][q - 1] += 1
        for t in f["boneyard"]:
            where[t][3] += 1
    share = np.array([*s.hand_sizes[1:], len(s.boneyard)]) / len(unseen)
    for t in unseen:
        freq = where[t] / worlds
        assert np.all(np.abs(freq - share) < 4 * np.sqrt(share * (1 - share) / worlds) + 1e-9), t


@pytest.mark.parametrize("i", [0, 1, 2, 3], ids=IDS[:4])
def test_constrained_worlds_deal_as_the_python_sampler(i: int) -> None:
    """Wherever the deductions ban a tile, a root carrying them (``constrain``) deals the
    Python sampler's world from the same splitmix64 stream — every hand, the boneyard in
    order, the same draws — and the world honours every ban; kept-draw limits are among them."""
    game, fg = _fast(i)
    n = game.num_players
    out = np.zeros(STATE_SIZE, np.int64)
    checked = limited = 0
    for s in _positions(i):
        for p in range(n):
            facts = deal_constraints(s, p)
            if facts is None or not any(facts.forbidden):
                continue
            S = fg.pack(s)
            fg.constrain(s, p, facts, S)
            root = S.copy()
            rs = np.array([1000 + checked], np.uint64)
            fg.sample_world(fg.ctx, S, p, rs, out)
            rng = SplitMixRandom(1000 + checked)
            world = s.sample_world(p, rng, facts)
            assert np.array_equal(S, root)
            fw = fields(out, n)
            assert [_mask(h) for h in fw["hands"]] == list(world.hands)
            assert fw["boneyard"] == list(world.boneyard)
            assert int(rs[0]) == rng.state
            assert fg.info_key(fg.ctx, out, p) == fg.info_key(fg.ctx, S, p)
            assert not any(world.hands[q] & facts.forbidden[q] for q in range(n) if q != p)
            checked += 1
            limited += bool(facts.limits)
    assert checked > 30 and limited > 0


@pytest.mark.parametrize("i", range(len(VARIANTS)), ids=IDS)
def test_rollouts_score_as_the_python_rules_and_the_commander(i: int) -> None:
    """The Commander rollout returns ``Commander(game).playout_returns``; the random rollout
    plays legal moves (``legal[int(u * n)]`` of the same splitmix64 numbers, replayed on the
    Python state) and returns what the Python state returns at the end."""
    game, fg = _fast(i)
    n = game.num_players
    commander = Commander(game)
    rctx_c, commander_rollout = fg.rollouts["commander_rollout"]
    rctx_r, random_rollout = fg.rollouts["random_rollout"]
    assert fg.rollouts["heuristic_rollout"][1] is commander_rollout
    out = np.zeros(n)
    checked = 0
    for j, s in enumerate(_positions(i)[::4]):
        S = fg.pack(s)
        scratch = S.copy()
        assert commander_rollout(rctx_c, fg.ctx, scratch, np.zeros(1, np.uint64), out)
        if not s.is_terminal():
            assert tuple(out) == commander.playout_returns(s, random.Random(0))
        else:
            assert tuple(out) == s.returns()
        rs = np.array([j], np.uint64)
        replay_rs = rs.copy()
        scratch = S.copy()
        assert random_rollout(rctx_r, fg.ctx, scratch, rs, out)
        w = s.clone()
        while not w.is_terminal():
            legal = w.legal_actions()
            w.apply_action(legal[rand_below(replay_rs, len(legal))])
        assert tuple(out) == w.returns() and rs[0] == replay_rs[0]
        checked += 1
    assert checked > 10


@njit(cache=True)
def _drive(current, legal, apply, returns, ctx, S, rs, buf, out) -> int:
    """Random moves to the end through kernels passed as arguments (as the compiled tree
    takes them); the number of moves."""
    moves = 0
    while current(ctx, S) >= 0:
        k = legal(ctx, S, buf)
        apply(ctx, S, buf[rand_below(rs, k)])
        moves += 1
    returns(ctx, S, out)
    return moves


def test_kernels_run_when_passed_to_compiled_code() -> None:
    """The kernels are first-class functions: a compiled driver that takes them plays the
    moves the Python rules play with the same random numbers, to the same returns."""
    game, fg = _fast(0)
    buf = np.zeros(fg.max_legal, np.int64)
    out = np.zeros(game.num_players)
    for seed in range(3):
        s = game.new_initial_state(seed=seed)
        S = fg.pack(s)
        rs = np.array([seed], np.uint64)
        replay = rs.copy()
        moves = _drive(fg.current, fg.legal, fg.apply, fg.returns, fg.ctx, S, rs, buf, out)
        while not s.is_terminal():
            legal = s.legal_actions()
            s.apply_action(legal[rand_below(replay, len(legal))])
        assert moves == len(s.history) and tuple(out) == s.returns()
        assert np.array_equal(S, fg.pack(s))


def test_fast_game_refuses_what_the_compiled_rules_do_not_reach() -> None:
    """A campaign of several rounds gets no fast path (and says why); pack refuses a state of
    another game, or of an earlier round than the campaign's last; the plugin hook answers."""
    campaign = make_game("mexican_train", players=4, rounds=2)
    fg, why = fast_game(campaign)
    assert fg is None and why is not None and "rounds=2" in why
    pack = make_pack(campaign, commander_for(campaign))
    with pytest.raises(ValueError, match="last round"):
        pack(campaign.new_initial_state(seed=0))
    game, fg1 = _fast(0)
    with pytest.raises(ValueError, match="not a position of this game"):
        fg1.pack(make_game("mexican_train", players=3, rounds=1).new_initial_state(seed=0))
    twin = make_game("mexican_train", players=4, rounds=1)  # an equal game: its states pack
    assert np.array_equal(
        fg1.pack(twin.new_initial_state(seed=0)), fg1.pack(game.new_initial_state(seed=0))
    )
    hook = game_plugin("mexican_train").hook("fast_search")
    assert hook is not None
    built, reason = hook(game)
    assert reason is None and isinstance(built, FastGame)
    assert (built.num_players, built.num_actions, built.state_size) == (4, 821, STATE_SIZE)
    assert built.ectx is None and built.encode is None
