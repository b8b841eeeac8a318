"""The compiled Mexican Train encoder (numba) against ``MexicanTrainEncoder``: the very same
float32 observation and action features, bit for bit, over positions of random and Commander
games at 2, 3, 4, 6 and 8 players, both objectives, every rule variant and every encoder option."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from omega_cluster._optional import numba_available
from omega_cluster.games import make_game
from omega_cluster.games.encoding import EncoderError
from omega_cluster.games.mexican_train.encoder import MexicanTrainEncoder
from omega_cluster.games.mexican_train.officers import Commander

pytestmark = pytest.mark.skipif(not numba_available(), reason="numba is an optional extra")

VARIANTS: list[dict[str, Any]] = [
    {"players": 2, "rounds": 1},
    {"players": 3, "rounds": 2},  # a campaign: round 1 positions, pip totals, campaign_dump
    {"players": 4, "rounds": 1},
    {"players": 6, "rounds": 1},
    {"players": 3, "rounds": 1, "strict_doubles": False},
    {"players": 4, "rounds": 1, "must_play": False},
    {"players": 4, "rounds": 1, "draw_until_playable": True},
    {"players": 4, "rounds": 1, "first_turn_chain": True},
    {"players": 2, "rounds": 2, "double_set": 9, "double_blank_value": 25},
    {
        "players": 6,
        "rounds": 1,
        "objective": "go_out",
        "first_turn_chain": True,
        "must_play": False,
    },
    {"players": 2, "rounds": 2, "objective": "go_out"},  # a go_out campaign: rounds won count
    {"players": 8, "rounds": 1, "objective": "go_out"},
]
OPTIONS: list[dict[str, Any]] = [
    {},
    {"log_length": 0, "heuristic_features": False},
    {"log_length": 64, "max_players": None},  # None: max_players = the table size
]


def _pack_for_test(state: Any, commander: Any) -> np.ndarray:
    """The packed state of :mod:`...fast.layout`, filled from a Python state: the compiled
    rules' fields as ``CompiledCommander.pack`` fills them, then the X_* fields."""
    from omega_cluster.games.mexican_train.fast import layout as L
    from omega_cluster.games.mexican_train.officers._rules_jit import S_TOTAL
    from omega_cluster.games.mexican_train.views import recent_actions

    S = np.zeros(L.STATE_SIZE, np.int64)
    S[:S_TOTAL] = commander.pack(state)
    S[L.X_HASH] = np.uint64(state.log_hash).view(np.int64)
    S[L.X_ROUND], S[L.X_ENGINE], S[L.X_OVER] = state.round_index, state.engine, state.over
    S[L.X_WENT_OUT] = -1
    S[L.X_LENGTHS : L.X_LENGTHS + len(state.lengths)] = state.lengths
    recent = recent_actions(state, L.MAX_LOG)
    S[L.X_HN] = len(recent)
    for i, (actor, action) in enumerate(recent):
        S[L.X_HIST + 2 * i], S[L.X_HIST + 2 * i + 1] = actor, action
    return S


def _positions(game: Any, seeds: range, rng: random.Random) -> Iterator[Any]:
    """Every decision of games where each move is the Commander's (60 %) or a random one, so
    positions off the Commander's own path occur too."""
    commander = Commander(game)
    for seed in seeds:
        state = game.new_initial_state(seed=seed)
        while not state.is_terminal():
            yield state
            p = state.current_players[0]
            legal = state.legal_actions(p)
            move = commander.act(state, p, rng) if rng.random() < 0.6 else rng.choice(legal)
            state.apply_action(move)


def _check(encoder: MexicanTrainEncoder, game: Any, state: Any, ectx: tuple, cc: Any) -> None:
    """The acting player's observation and action rows, then the next seat's observation."""
    from omega_cluster.games.mexican_train.fast.encode import encode

    S = _pack_for_test(state, cc)
    p = state.current_players[0]
    legal = state.legal_actions(p)
    want_obs = encoder.encode_observation(state, p)
    want_feats = encoder.encode_actions(state, p, legal)
    obs = np.zeros(encoder.observation_size, np.float32)
    feats = np.zeros((len(legal) + 3, encoder.action_feature_size), np.float32)
    tail = [game.draw_action, game.pass_action, 0]  # past n: never read
    encode(ectx, None, S, p, np.asarray([*legal, *tail], np.int64), len(legal), obs, feats)
    assert np.array_equal(obs, want_obs), np.flatnonzero(obs != want_obs)
    assert np.array_equal(feats[: len(legal)], want_feats), np.argwhere(
        feats[: len(legal)] != want_feats
    )
    assert not feats[len(legal) :].any()  # rows past n stay as the caller left them
    other = (p + 1) % game.num_players  # any seat's view, not only the acting one's
    obs[:] = 0
    encode(ectx, None, S, other, np.zeros(0, np.int64), 0, obs, feats)
    assert np.array_equal(obs, encoder.encode_observation(state, other))


@pytest.mark.parametrize(
    "params", VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items())
)
def test_compiled_encoder_writes_the_python_encoders_floats(params: dict[str, Any]) -> None:
    """At every decision of a few mixed Commander/random games, for each encoder option set,
    ``encode`` writes exactly ``encode_observation`` and ``encode_actions``."""
    from omega_cluster.games.mexican_train.fast.encode import make_encoder_ctx, supported
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    game = make_game("mexican_train", **params)
    cc = CompiledCommander(game, [0.0] * 20, 3, 60)
    encoders = []
    for opts in OPTIONS:
        kw = {**opts, "max_players": opts.get("max_players", 8) or game.num_players}
        encoder = MexicanTrainEncoder(game, **kw)
        assert supported(encoder, game) is None
        encoders.append((encoder, make_encoder_ctx(encoder, game)))
    rng = random.Random(11)
    checked = 0
    for i, state in enumerate(_positions(game, range(2), rng)):
        encoder, ectx = encoders[i % len(encoders)]
        _check(encoder, game, state, ectx, cc)
        checked += 1
    assert checked > 60


def test_unsupported_encoders_are_named() -> None:
    """An encoder the kernel cannot mirror gets one line saying why (and no context)."""
    from omega_cluster.games.mexican_train.fast.encode import make_encoder_ctx, supported

    game = make_game("mexican_train", players=4, rounds=1)
    other = make_game("mexican_train", players=4, rounds=1, double_set=9)
    encoder = MexicanTrainEncoder(game)
    assert supported(encoder, other) == (
        "the encoder is for the double-12 set, the game plays double-9"
    )
    assert "max_players=4 < the table's 6" in str(
        supported(MexicanTrainEncoder(game, max_players=4), make_game("mexican_train", players=6))
    )
    with pytest.raises(ValueError, match="double-12 set, the game plays double-9"):
        make_encoder_ctx(encoder, other)
    with pytest.raises(EncoderError):  # the Python encoder's own checks still apply
        MexicanTrainEncoder(game, log_length=65)


@pytest.mark.parametrize("players", [2, 4])
def test_a_full_small_memo_falls_back_to_the_large_one(players: int) -> None:
    """With a small chain memo of four slots (full at three entries) nearly every decision
    overflows it and is searched again in the large memo: the floats are still the Python
    encoder's."""
    from omega_cluster.games.mexican_train.fast.chain import M_OVERFLOW, new_memo
    from omega_cluster.games.mexican_train.fast.encode import make_encoder_ctx
    from omega_cluster.games.mexican_train.officers._commander_jit import CompiledCommander

    game = make_game("mexican_train", players=players, rounds=1)
    cc = CompiledCommander(game, [0.0] * 20, 3, 60)
    encoder = MexicanTrainEncoder(game)
    ectx = make_encoder_ctx(encoder, game)
    ectx = (*ectx[:12], new_memo(4), *ectx[13:])
    fell_back = 0
    for state in _positions(game, range(1), random.Random(5)):
        _check(encoder, game, state, ectx, cc)
        fell_back += int(ectx[12][0, M_OVERFLOW])
    assert fell_back > 10
