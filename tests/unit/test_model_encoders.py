"""Encoders: shapes, layouts, versions, only-what-the-player-knows (sample_world invariance),
seat-relativity and the Mexican Train log's actors."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from model_helpers import GAMES, game_id, small_net

from omega_cluster.games.mexican_train.encoder import _TERM_SCALES, MexicanTrainEncoder
from omega_cluster.games.mexican_train.views import recent_actions, replay_actors
from omega_cluster.games.registry import make_game
from omega_cluster.model import EncoderError, encoder_for, encoder_from_info, random_positions
from omega_cluster.model.encoders import check_encoder_matches


@pytest.mark.parametrize("case", GAMES, ids=game_id)
def test_shapes_layout_and_sample_world_invariance(case: tuple[str, dict[str, object]]) -> None:
    name, params = case
    game = make_game(name, **params)
    encoder = encoder_for(game)
    info = encoder.info()
    assert info.version >= 1 and info.name == encoder.name and info.game_name == game.spec.name
    assert info.observation_size == encoder.observation_size
    # the layout segments tile each vector exactly, in order
    for layout, size in (
        (info.observation_layout, encoder.observation_size),
        (info.action_layout, encoder.action_feature_size),
    ):
        assert [s.start for s in layout] == [0, *np.cumsum([s.size for s in layout])[:-1]]
        assert sum(s.size for s in layout) == size
    rng = random.Random(7)
    positions = random_positions(game, 60, seed=3)
    assert len(positions) == 60
    distinct = set()
    for state, player in positions:
        legal = state.legal_actions(player)
        obs = encoder.encode_observation(state, player)
        feats = encoder.encode_actions(state, player, legal)
        assert obs.shape == (encoder.observation_size,) and obs.dtype == np.float32
        assert feats.shape == (len(legal), encoder.action_feature_size)
        assert feats.dtype == np.float32 and np.isfinite(obs).all() and np.isfinite(feats).all()
        assert len({row.tobytes() for row in feats}) == len(legal)  # actions are distinguishable
        distinct.add(obs.tobytes())
        if game.spec.hidden_information:
            for _ in range(2):  # a world of the same information set encodes identically
                world = state.sample_world(player, rng)
                assert np.array_equal(encoder.encode_observation(world, player), obs)
                assert np.array_equal(encoder.encode_actions(world, player, legal), feats)
    assert len(distinct) > 10


def test_mexican_train_is_seat_relative() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    encoder = MexicanTrainEncoder(game)
    seg = {s.name: s for s in encoder.info().observation_layout}
    v, m = encoder.num_values, encoder.max_players
    width = 6 + v
    for state, player in random_positions(game, 40, seed=11)[::5]:
        obs = encoder.encode_observation(state, player)
        trains = obs[seg["trains"].start : seg["trains"].start + seg["trains"].size]
        trains = trains.reshape(m + 1, width)
        seats = obs[seg["seats"].start : seg["seats"].start + seg["seats"].size].reshape(m, 6)
        for rel in range(3):
            seat = (player + rel) % 3
            assert np.argmax(trains[rel, 6:]) == state.ends[seat]
            assert seats[rel, 1] == pytest.approx(state.hands[seat].bit_count() / game.hand_size)
        assert np.argmax(trains[m, 6:]) == state.ends[8]  # Mexican train last
        assert trains[3:m].sum() == 0 and seats[3:].sum() == 0  # padding seats
        hand = obs[seg["hand"].start : seg["hand"].start + seg["hand"].size]
        assert sum(1 << int(t) for t in np.flatnonzero(hand)) == state.hands[player]
        # an action on the player's own train targets relative train 0, Mexican targets m
        target = {s.name: s for s in encoder.info().action_layout}["target"].start
        legal = state.legal_actions(player)
        for action, row in zip(legal, encoder.encode_actions(state, player, legal), strict=True):
            if action < game.tiles.draw_action:
                slot = action % 9
                rel = m if slot == 8 else (slot - player) % 3
                assert row[target + rel] == 1.0 and row[target : target + m + 1].sum() == 1.0


def test_mexican_train_objective_is_an_input() -> None:
    """Two tables that differ only in the objective they are scored on (the same deals and moves:
    the objective changes only who wins) encode differently in exactly the objective one-hot of
    the globals, so one network can play both."""
    tables = {
        o: make_game("mexican_train", players=3, rounds=2, objective=o)
        for o in ("points", "go_out")
    }
    encoders = {o: MexicanTrainEncoder(g) for o, g in tables.items()}
    seg = {s.name: s for s in encoders["points"].info().observation_layout}["globals"]
    assert "objective one-hot (points, go_out)" in seg.doc
    assert encoders["points"].version == 3
    one_hot = seg.start + seg.size - 2  # the last two entries of the globals
    rng = random.Random(3)
    states = {o: g.new_initial_state(seed=4) for o, g in tables.items()}
    checked = 0
    while not states["points"].is_terminal():
        for player in range(3):
            obs = {o: encoders[o].encode_observation(states[o], player) for o in tables}
            differ = np.flatnonzero(obs["points"] != obs["go_out"])
            assert differ.tolist() == [one_hot, one_hot + 1]
            assert obs["points"][one_hot : one_hot + 2].tolist() == [1.0, 0.0]
            assert obs["go_out"][one_hot : one_hot + 2].tolist() == [0.0, 1.0]
            checked += 1
        legal = states["points"].legal_actions()
        action = legal[int(rng.random() * len(legal))]
        for state in states.values():
            state.apply_action(action)
    assert states["go_out"].is_terminal() and checked > 100


@pytest.mark.parametrize("chain", [False, True])
def test_mexican_train_log_actors(chain: bool) -> None:
    game = make_game("mexican_train", players=4, rounds=2, first_turn_chain=chain)
    rng = random.Random(5)
    state = game.new_initial_state(9)
    actors: list[tuple[int, int]] = []
    checked = 0
    while not state.is_terminal():
        start = state.round_starts[-1]
        if len(state.history) > start:
            expected = list(reversed(actors[start:]))
            assert recent_actions(state, 10_000) == expected
            assert replay_actors(state, start, 10_000) == expected
            assert recent_actions(state, 5) == expected[:5]
            checked += 1
        legal = state.legal_actions()
        action = legal[int(rng.random() * len(legal))]
        actors.append((state.current, action))
        state.apply_action(action)
    assert checked > 100


def test_mexican_train_aux_targets_and_options() -> None:
    from omega_cluster.games.mexican_train import RoundResult

    game = make_game("mexican_train", players=3, rounds=1)
    encoder = MexicanTrainEncoder(game, max_players=4, log_length=2)
    assert encoder.info().options == {
        "double_set": 12,
        "max_players": 4,
        "log_length": 2,
        "heuristic_features": True,
    }
    result = RoundResult(0, 12, (10, 0, 25), went_out=1, blocked=False)
    aux = encoder.aux_targets(result, player=2)
    assert aux["round_pips"].tolist() == pytest.approx([0.25, 0.10, 0.0, 0.0])
    assert int(aux["goes_out"]) == 2  # seat 1 is relative seat 2 for player 2
    blocked = RoundResult(0, 12, (1, 2, 3), went_out=None, blocked=True)
    assert int(encoder.aux_targets(blocked, 0)["goes_out"]) == 4
    with pytest.raises(EncoderError, match="max_players=2 must be in"):
        MexicanTrainEncoder(game, max_players=2)


def test_mexican_train_heuristic_features_are_the_commander_terms_of_each_move() -> None:
    from omega_cluster.games.mexican_train.officers.terms import move_features
    from omega_cluster.games.mexican_train.officers.weights import TERMS

    game = make_game("mexican_train", players=3, rounds=1)
    full, plain = MexicanTrainEncoder(game), MexicanTrainEncoder(game, heuristic_features=False)
    assert full.action_feature_size == plain.action_feature_size + len(TERMS)
    segment = full.info().action_layout[-1]
    assert segment.name == "commander_terms" and segment.size == len(TERMS)
    goes_out = TERMS.index("goes_out")
    for state, player in random_positions(game, 30, seed=5):
        legal = state.legal_actions(player)
        feats = full.encode_actions(state, player, legal)
        np.testing.assert_array_equal(
            feats[:, : segment.start], plain.encode_actions(state, player, legal)
        )
        terms = np.asarray(move_features(state, player, legal, danger_hand_size=3), np.float32)
        assert np.allclose(feats[:, segment.start :] / _TERM_SCALES, terms, rtol=1e-5, atol=1e-5)
        assert (feats[:, segment.start + goes_out] == terms[:, goes_out]).all()
    rebuilt = encoder_from_info(game, plain.info())  # the option travels with the checkpoint
    assert rebuilt.action_feature_size == plain.action_feature_size


def test_leduc_chips_replayed_from_public_betting() -> None:
    game = make_game("leduc_poker", players=3)
    encoder = encoder_for(game)
    seg = {s.name: s for s in encoder.info().observation_layout}
    for state, player in random_positions(game, 80, seed=2):
        obs = encoder.encode_observation(state, player)
        chips = obs[seg["chips"].start : seg["chips"].start + 3] * 13
        folded = obs[seg["folded"].start : seg["folded"].start + 3]
        for rel in range(3):
            seat = (player + rel) % 3
            assert chips[rel] == pytest.approx(state._ante[seat])
            assert folded[rel] == state._folded >> seat & 1


def test_goofspiel_imp_info_hides_other_hands() -> None:
    game = make_game("goofspiel", num_cards=4, imp_info=True)
    encoder = encoder_for(game)
    seg = {s.name: s for s in encoder.info().observation_layout}["hands"]
    for state, player in random_positions(game, 20, seed=1):
        obs = encoder.encode_observation(state, player)
        assert obs[seg.start + 4 : seg.start + 8].sum() == 0  # the opponent's hand
        assert obs[seg.start : seg.start + 4].sum() == len(state.legal_actions(player))


def test_registry_errors_and_rebuild() -> None:
    # (a game without an encoder of its own gets the generic one: tests/unit/test_user_game.py)
    game = make_game("mexican_train", players=2, rounds=1)
    encoder = encoder_for(game, max_players=4)
    rebuilt = encoder_from_info(make_game("mexican_train", players=3), encoder.info())
    assert rebuilt.observation_size == encoder.observation_size and rebuilt.max_players == 4
    stale = encoder.info().__class__(**{**encoder.info().__dict__, "version": 99})
    with pytest.raises(EncoderError, match="version mismatch.*version=99"):
        check_encoder_matches(encoder, stale)
    with pytest.raises(EncoderError, match="made for game 'mexican_train', not 'kuhn_poker'"):
        encoder_from_info(make_game("kuhn_poker"), encoder.info())
    with pytest.raises(EncoderError, match="bad options"):
        encoder_for(make_game("kuhn_poker"), max_players=3)


def test_a_checkpoint_of_the_encoder_before_the_objective_is_refused(tmp_path: Path) -> None:
    """A Mexican Train checkpoint of encoder version 2 (no objective input) no longer loads:
    the usual one-line version mismatch, whether checked against the encoder or rebuilt."""
    from omega_cluster.model.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
    from omega_cluster.train.learner import Learner

    game = make_game("mexican_train", players=2, rounds=1)
    encoder = MexicanTrainEncoder(game)
    save_checkpoint(tmp_path / "old", small_net(game, encoder), game=game, encoder=encoder)
    meta = tmp_path / "old" / "metadata.json"
    data = json.loads(meta.read_text())
    data["encoder"]["version"] = 2
    meta.write_text(json.dumps(data))
    with pytest.raises(
        CheckpointError, match="encoder mexican_train version is 2, the expected encoder has 3"
    ):
        load_checkpoint(tmp_path / "old", expected_encoder=encoder)
    with pytest.raises(
        CheckpointError, match="version mismatch.*version=2, the installed encoder has version=3"
    ):
        Learner.load(tmp_path / "old")
