"""Mexican Train rules, scoring, campaign, errors, replay, determinizations and the fast playout.

Rule tests rig a fresh state (hands and boneyard set by hand, the other tiles left out of play)
and walk through pagat's rules one action at a time.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from mexican_train_helpers import DRAW, PASS, TILES, play, play_out, random_state, rig, tile

from omega_cluster.games import (
    ConstraintError,
    IllegalActionError,
    InvalidParameterError,
    ReplayError,
    make_game,
)
from omega_cluster.games.api import RngLike
from omega_cluster.games.conformance import check_game
from omega_cluster.games.mexican_train import (
    DEFAULT_HAND_SIZES,
    MEXICAN_SLOT,
    DealConstraints,
    MexicanTrainGame,
    MexicanTrainObservation,
    RoundResult,
    fair_share,
    tile_set,
)


# -- tiles and actions -------------------------------------------------------------------------
def test_tile_tables_and_action_space() -> None:
    assert TILES.num_tiles == 91 and tile_set(9).num_tiles == 55
    assert TILES.tiles[:4] == ((0, 0), (1, 0), (1, 1), (2, 0)) and TILES.tiles[-1] == (12, 12)
    assert all(TILES.index(hi, lo) == i for i, (hi, lo) in enumerate(TILES.tiles))
    assert MexicanTrainGame().spec.num_actions == 821
    assert isinstance(make_game("mexican_train", players=3), MexicanTrainGame)  # the registry
    assert MexicanTrainGame(players=2).spec.num_actions == 821  # same at any size
    assert MexicanTrainGame(double_set=9).spec.num_actions == 55 * 9 + 2
    assert TILES.end_mask[6].bit_count() == 13 and TILES.doubles_mask.bit_count() == 13
    assert TILES.other_end(tile("12|3"), 12) == 3 and TILES.pips[tile("6|4")] == 10


def test_describe_encode_decode() -> None:
    game = MexicanTrainGame()
    assert game.describe_action(play("6|4", MEXICAN_SLOT)) == "6|4 on Mexican train"
    assert game.describe_action(play("12|3", 2)) == "12|3 on seat 2's train"
    assert game.describe_action(DRAW) == "draw" and game.describe_action(PASS) == "pass"
    assert game.decode_action(play("12|3", 2)) == (tile("12|3"), 2)
    assert game.decode_action(DRAW) is None and game.decode_action(PASS) is None
    assert game.encode_action(tile("6|4"), 8) == tile("6|4") * 9 + 8
    with pytest.raises(ValueError, match="train slot"):
        game.encode_action(0, 9)
    with pytest.raises(ValueError, match="outside"):
        game.decode_action(821)


# -- deal --------------------------------------------------------------------------------------
@pytest.mark.parametrize("double_set", [9, 12])
def test_deal_sizes_follow_the_table_and_the_engine_is_set_aside(double_set: int) -> None:
    for players in range(2, 9):
        game = MexicanTrainGame(players=players, double_set=double_set)
        state = game.new_initial_state(7)
        size = DEFAULT_HAND_SIZES[double_set][players - 2]
        assert state.hand_sizes == (size,) * players
        assert state.boneyard_size == game.tiles.num_tiles - 1 - players * size
        engine = game.tiles.double(double_set)
        held = 0
        for m in state.hands:
            assert not held & m
            held |= m
        assert not held >> engine & 1 and engine not in state.boneyard
        assert held | sum(1 << t for t in state.boneyard) | 1 << engine == game.tiles.full_mask
        assert state.engine == double_set and state.ends[:players] == [double_set] * players


def test_custom_hand_table() -> None:
    table = (20, 18, 16, 14, 12, 10, 8)
    state = MexicanTrainGame(players=3, hand_sizes=table).new_initial_state(0)
    assert state.hand_sizes == (18, 18, 18) and state.boneyard_size == 91 - 1 - 54
    game = MexicanTrainGame(players=3, hand_sizes=list(table))
    assert game.params["hand_sizes"] == table


# -- rules -------------------------------------------------------------------------------------
def test_double_gives_another_play_that_must_cover_it() -> None:
    s = rig([["12|6", "6|6", "6|2", "3|0"], ["12|5", "5|5", "1|0", "4|0"]], ["2|1"])
    for a in (play("12|6", 0), play("12|5", MEXICAN_SLOT)):
        s.apply_action(a)
    assert s.current_players == (0,)
    s.apply_action(play("6|6", 0))
    assert s.current_players == (0,) and s.open_doubles == (0,)
    assert s.legal_actions() == [play("6|2", 0)]  # strict: cover first, nothing elsewhere
    s.apply_action(play("6|2", 0))
    assert s.current_players == (1,) and s.open_doubles == ()


def test_strict_open_doubles_are_covered_in_laying_order() -> None:
    s = rig([["12|6", "6|6", "5|5", "3|0"], ["12|5", "6|4", "5|1", "4|0"]], ["9|8"])
    for a in (play("12|6", 0), play("12|5", MEXICAN_SLOT), play("6|6", 0)):
        s.apply_action(a)
    assert s.legal_actions() == [play("5|5", MEXICAN_SLOT)]  # the only option: another double
    s.apply_action(play("5|5", MEXICAN_SLOT))
    assert s.open_doubles == (0, MEXICAN_SLOT) and s.legal_actions() == [DRAW]
    s.apply_action(DRAW)  # 9|8 covers nothing
    assert s.legal_actions() == [PASS]
    s.apply_action(PASS)
    assert s.is_marked(0) and s.current_players == (1,)
    assert s.legal_actions() == [play("6|4", 0)]  # the first double first, not 5|1 on Mexican
    s.apply_action(play("6|4", 0))
    assert s.open_doubles == (MEXICAN_SLOT,) and s.legal_actions(0) == [PASS]  # empty boneyard
    s.apply_action(PASS)
    assert s.legal_actions() == [play("5|1", MEXICAN_SLOT)]
    s.apply_action(play("5|1", MEXICAN_SLOT))
    assert s.open_doubles == ()


def test_uncovered_double_draw_then_cover_with_the_drawn_tile() -> None:
    s = rig([["12|6", "6|6", "3|0"], ["12|5", "1|0"]], ["6|1"])
    for a in (play("12|6", 0), play("12|5", 1), play("6|6", 0)):
        s.apply_action(a)
    assert s.legal_actions() == [DRAW]
    s.apply_action(DRAW)
    assert s.legal_actions() == [play("6|1", 0)] and s.drawn
    s.apply_action(play("6|1", 0))
    assert s.open_doubles == () and s.current_players == (1,) and not s.is_marked(0)


def test_chain_ending_on_a_double_leaves_it_open_for_the_next_player() -> None:
    hands = [["12|6", "6|6", "1|0", "2|0"], ["12|5", "6|4", "5|1"]]
    s = rig(hands, ["1|1"], first_turn_chain=True)
    s.apply_action(play("12|6", 0))
    s.apply_action(play("6|6", 0))
    assert s.chain and s.legal_actions() == [PASS]  # nothing covers 6|6 in hand: end the turn
    s.apply_action(PASS)
    assert not s.is_marked(0) and s.open_doubles == (0,) and s.must_cover
    assert s.legal_actions() == [play("6|4", 0)]  # strict: cover it, even on an unmarked train


def test_double_as_last_tile_ends_the_round() -> None:
    s = rig([["12|6", "6|6"], ["12|5", "1|0"]])
    for a in (play("12|6", 0), play("12|5", 1), play("6|6", 0)):
        s.apply_action(a)
    assert s.is_terminal() and s.round_results[0].went_out == 0
    assert s.round_results[0].pips == (0, 1) and s.returns() == (1.0, 0.0)


def test_draw_then_play_the_drawn_tile_on_any_open_train() -> None:
    s = rig([["3|0"], ["12|5"]], ["1|1", "12|4"])
    assert s.legal_actions() == [DRAW]
    s.apply_action(DRAW)
    assert s.legal_actions() == [play("12|4", 0), play("12|4", MEXICAN_SLOT)]
    s.apply_action(play("12|4", MEXICAN_SLOT))
    assert s.current_players == (1,) and not s.is_marked(0)


def test_marker_placed_opens_the_train_and_is_removed_by_its_owner() -> None:
    s = rig([["3|0", "5|2"], ["12|5", "5|4", "9|9"]], ["1|1", "2|2"])
    s.apply_action(DRAW)
    assert s.legal_actions() == [PASS]
    s.apply_action(PASS)
    assert s.is_marked(0) and s.observation(1).trains[0].marked
    assert play("12|5", 0) in s.legal_actions(1)  # the marked train is open to everyone
    s.apply_action(play("12|5", 0))
    assert s.is_marked(0)  # only the owner removes the marker
    s.apply_action(play("5|2", 0))
    assert not s.is_marked(0)


def test_only_own_mexican_and_marked_trains_are_open() -> None:
    s = rig([["12|3", "3|3"], ["12|5", "5|4"], ["12|1", "1|0"], ["12|2"]])
    assert s.legal_actions() == [play("12|3", 0), play("12|3", MEXICAN_SLOT)]
    assert not s.is_legal(0, play("12|3", 1))  # someone else's unmarked train
    assert not s.is_legal(0, play("12|3", 5))  # slot 5 is no train at a 4-player table
    assert not s.is_legal(1, play("12|5", 1))  # not player 1's turn
    s.apply_action(play("12|3", MEXICAN_SLOT))
    assert s.train_end(MEXICAN_SLOT) == 3 and s.train_length(MEXICAN_SLOT) == 1
    assert play("12|5", MEXICAN_SLOT) not in s.legal_actions(1)  # one Mexican train, end 3


def test_blocked_round_is_detected_and_scored() -> None:
    for blank, pips in ((0, 1), (25, 26), (50, 51)):
        s = rig([["1|0", "0|0"], ["2|0"]], double_blank_value=blank)
        assert s.legal_actions() == [PASS]
        s.apply_action(PASS)
        result = s.round_results[0]
        assert s.is_terminal() and result.blocked and result.went_out is None
        assert result.pips == (pips, 2) and s.scores() == (float(pips), 2.0)
        assert s.returns() == ((1.0, 0.0) if pips < 2 else (0.0, 1.0))
        assert result.round_winners("go_out") == ()


def test_not_blocked_while_a_future_marker_can_open_a_play() -> None:
    s = rig([["5|1"], ["12|5", "2|0"]])
    s.apply_action(PASS)
    s.apply_action(play("12|5", 1))
    assert s.legal_actions() == [PASS]  # 5|1 fits player 1's train, which is not marked yet
    s.apply_action(PASS)
    assert not s.is_terminal() and s.legal_actions() == [PASS]
    s.apply_action(PASS)  # player 1's marker goes up
    assert s.legal_actions() == [play("5|1", 1)]
    s.apply_action(play("5|1", 1))
    assert s.round_results[0] == RoundResult(0, 12, (0, 2), 0, False)
    assert s.round_results[0].round_winners() == (0,)
    assert s.round_results[0].round_winners("go_out") == (0,)


def test_ties_share_the_win() -> None:
    s = rig([["2|0"], ["1|1"]])
    s.apply_action(PASS)
    assert s.returns() == (0.5, 0.5) and s.win_shares() == s.returns()
    g = rig([["2|0"], ["1|1"], ["3|0"]], objective="go_out")
    g.apply_action(PASS)  # blocked: nobody went out, all tie on 0 rounds
    assert g.is_terminal() and g.returns() == pytest.approx((1 / 3,) * 3)


# -- variants ----------------------------------------------------------------------------------
def test_must_play_false_lets_a_player_draw_then_pass() -> None:
    s = rig([["12|3"], ["1|0"]], ["1|1"], must_play=False)
    assert s.legal_actions() == [play("12|3", 0), play("12|3", MEXICAN_SLOT), DRAW]
    s.apply_action(DRAW)
    assert s.legal_actions() == [play("12|3", 0), play("12|3", MEXICAN_SLOT), PASS]
    s.apply_action(PASS)
    assert s.is_marked(0) and s.current_players == (1,)
    strict = rig([["12|3"], ["1|0"]], ["1|1"])
    assert DRAW not in strict.legal_actions()


def test_draw_until_playable() -> None:
    hands, bone = [["3|0"], ["1|0"]], ["12|1", "2|0", "4|0"]
    s = rig(hands, bone, draw_until_playable=True)
    for _ in range(3):
        assert s.legal_actions() == [DRAW]
        s.apply_action(DRAW)
    assert s.legal_actions() == [play("12|1", 0), play("12|1", MEXICAN_SLOT)]
    once = rig(hands, bone)
    once.apply_action(DRAW)
    assert once.legal_actions() == [PASS]


def test_first_turn_chain_on_own_train_ended_by_pass() -> None:
    hands = [["12|6", "6|3", "3|1", "9|9"], ["12|5", "5|0", "7|7"]]
    s = rig(hands, ["1|1"], first_turn_chain=True)
    s.apply_action(play("12|6", 0))
    assert s.current_players == (0,) and s.chain
    assert s.legal_actions() == [play("6|3", 0), PASS]  # own train only, PASS ends the turn
    s.apply_action(play("6|3", 0))
    s.apply_action(PASS)
    assert s.current_players == (1,) and not s.is_marked(0)
    s.apply_action(play("12|5", MEXICAN_SLOT))  # not on own train: no chain
    assert s.current_players == (0,)
    s.apply_action(play("3|1", 0))  # second turn: no chain any more
    assert s.current_players == (1,)
    plain = rig(hands, ["1|1"])
    plain.apply_action(play("12|6", 0))
    assert plain.current_players == (1,)


def test_lenient_doubles_need_not_be_covered_at_once() -> None:
    hands = [["12|6", "6|6", "9|1", "12|2"], ["12|5", "6|1", "3|0"]]
    s = rig(hands, ["1|1"], strict_doubles=False)
    for a in (play("12|6", 0), play("12|5", 1), play("6|6", 0)):
        s.apply_action(a)
    assert play("12|2", MEXICAN_SLOT) in s.legal_actions()
    s.apply_action(play("12|2", MEXICAN_SLOT))
    assert s.current_players == (1,) and s.open_doubles == (0,)
    assert play("6|1", 0) in s.legal_actions()  # the uncovered double's train is open to all
    s.apply_action(play("6|1", 0))
    assert s.open_doubles == () and not s.is_marked(0)
    strict = rig(hands, ["1|1"])
    for a in (play("12|6", 0), play("12|5", 1), play("6|6", 0)):
        strict.apply_action(a)
    assert strict.legal_actions() == [DRAW]


# -- campaign ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "engines"),
    [
        ({"double_set": 9, "players": 2}, list(range(9, -1, -1))),
        ({"players": 3, "rounds": 3}, [12, 11, 10]),
        ({"players": 2, "rounds": 4, "objective": "go_out"}, [12, 11, 10, 9]),
    ],
)
def test_campaign_engines_rotation_and_objectives(
    params: dict[str, Any], engines: list[int]
) -> None:
    game = MexicanTrainGame(**params)
    state, rng = game.new_initial_state(3), random.Random(3)
    starters = []
    while not state.is_terminal():
        if len(state.history) == state.round_starts[-1]:
            starters.append(state.current_player)
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
    n = game.num_players
    assert [r.engine for r in state.round_results] == engines
    assert starters == [r % n for r in range(len(engines))]
    totals = [sum(r.pips[p] for r in state.round_results) for p in range(n)]
    assert list(state.scores()) == totals
    outs = [sum(r.went_out == p for r in state.round_results) for p in range(n)]
    assert list(state.rounds_won()) == outs
    key = totals if game.objective == "points" else [-x for x in outs]
    winners = [p for p in range(n) if key[p] == min(key)]
    assert state.returns() == tuple(1 / len(winners) if p in winners else 0.0 for p in range(n))
    assert sum(state.returns()) == pytest.approx(1.0)
    labels = state.decision_rounds
    assert len(labels) == len(state.history) and labels == tuple(sorted(labels))
    assert [labels.index(r) for r in range(len(engines))] == list(state.round_starts)
    assert state.round_of_decision(len(state.history) - 1) == len(engines) - 1


def test_fair_share() -> None:
    runs = [(1.0, 0.0, 0.0, 0.0), (0.5, 0.5, 0.0, 0.0)]
    assert fair_share(runs) == (3.0, 1.0, 0.0, 0.0) and fair_share(runs, 1) == 1.0


def test_render_shows_trains_markers_hands_and_scores() -> None:
    s = rig([["3|0", "5|2"], ["12|5"]], ["2|2"])
    s.apply_action(DRAW)
    s.apply_action(PASS)
    s.apply_action(play("12|5", 0))
    text = s.render()
    assert "seat 0: 12|5 -> end 5 [marker]" in text
    assert "hand of seat 0 (3): 2|2 3|0 5|2" in text and "boneyard: 0 tiles" in text
    assert "round 1/1, engine 12|12" in text and "pips so far" in text
    assert str(s) == text


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"colour": 3}, ["colour", "players"]),
        ({"players": 1}, ["players=1", "[2, 8]"]),
        ({"players": 9}, ["players=9", "[2, 8]"]),
        ({"double_set": 6}, ["double_set=6", "9, 12"]),
        ({"hand_sizes": (15, 15, 15)}, ["3 entries", "7 positive ints"]),
        ({"hand_sizes": (15, 15, 15, 12, 0, 11, 11)}, ["6 players", "positive"]),
        ({"hand_sizes": (15, 15, 15, 12, 12, 11, 12)}, ["8 players", "cannot be dealt", "91"]),
        ({"double_set": 9, "hand_sizes": (15,) * 7}, ["4 players", "55"]),
        ({"rounds": 0}, ["rounds=0", "[1, 13]"]),
        ({"double_set": 9, "rounds": 11}, ["rounds=11", "[1, 10]"]),
        ({"objective": "most_pips"}, ["most_pips", "points", "go_out"]),
        ({"double_blank_value": 10}, ["double_blank_value=10", "25"]),
    ],
)
def test_bad_parameters_name_the_problem(params: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(InvalidParameterError) as err:
        MexicanTrainGame(**params)
    for word in words:
        assert word in str(err.value)


def test_illegal_action_error_names_move_player_and_legal_set() -> None:
    s = rig([["12|3", "3|3"], ["12|5"]])
    with pytest.raises(IllegalActionError) as err:
        s.apply_action(play("12|3", 1))
    message = str(err.value)
    assert "12|3 on seat 1's train" in message and "player 0" in message
    assert "12|3 on Mexican train" in message  # the legal set is listed
    assert err.value.legal == (play("12|3", 0), play("12|3", MEXICAN_SLOT))
    with pytest.raises(IllegalActionError):
        s.apply_action(DRAW)  # playable tiles: drawing is not allowed
    assert s.history == []


def test_no_action_after_the_end_and_malformed_replays() -> None:
    game = MexicanTrainGame(players=2, rounds=1)
    final = play_out(game.new_initial_state(1), random.Random(1))
    assert final.legal_actions(0) == [] and final.current_players == ()
    with pytest.raises(IllegalActionError, match="over"):
        final.apply_action(PASS)
    history = list(final.history)
    cases: list[tuple[list[Any], str]] = [
        (["draw"], "not an int"),
        ([(1, 2)], "expected one int"),
        ([*history, PASS], "already over"),
        ([play("12|12", 0)], "illegal action"),
    ]
    for bad, words in cases:
        with pytest.raises(ReplayError, match=words):
            game.replay(1, bad)


# -- replay, clone, information ----------------------------------------------------------------
def test_replay_is_exact_and_clones_are_independent() -> None:
    game = MexicanTrainGame(players=3, rounds=2)
    state = random_state(game, 5, 150)
    again = game.replay(5, state.history)
    assert again.render() == state.render() and again.round_results == state.round_results
    assert [again.information_set_key(p) for p in range(3)] == [
        state.information_set_key(p) for p in range(3)
    ]
    before = (state.render(), list(state.history), state.observation(0))
    twin = state.clone()
    play_out(twin, random.Random(0))
    assert twin.is_terminal() and (state.render(), state.history, state.observation(0)) == before
    final = play_out(state, random.Random(9))
    assert game.replay(5, final.history).returns() == final.returns()


def test_observation_content() -> None:
    game = MexicanTrainGame(players=4)
    state = random_state(game, 2, 60)
    obs = state.observation(1)
    assert isinstance(obs, MexicanTrainObservation)
    assert obs.hand == state.hand(1) and obs.hand_sizes == state.hand_sizes
    assert obs.boneyard_size == state.boneyard_size and obs.log == tuple(state.history)
    assert [t.slot for t in obs.trains] == [0, 1, 2, 3, MEXICAN_SLOT]
    for view in obs.trains:
        assert len(view.tiles) == state.train_length(view.slot)
        assert view.open_end == state.train_end(view.slot)
    laid = sum(1 << t for view in obs.trains for t in view.tiles)
    assert laid == state.board
    assert obs != state.observation(2) and hash(obs) == hash(state.observation(1))
    keys = {state.information_set_key(p) for p in range(4)}
    assert len(keys) == 4


def test_sample_world_keeps_the_information_set_and_redeals_the_rest() -> None:
    game = MexicanTrainGame(players=4)
    state = random_state(game, 4, 45)
    assert not state.is_terminal()
    rngs: list[RngLike] = [np.random.default_rng(2), random.Random(3), random.Random(4), 5]
    for p, rng in enumerate(rngs):
        hands_seen = set()
        for i in range(12):
            world = state.sample_world(p, rng if not isinstance(rng, int) else rng + i)
            assert world.observation(p) == state.observation(p)
            assert world.information_set_key(p) == state.information_set_key(p)
            assert world.legal_actions(p) == state.legal_actions(p)
            assert world.hand_sizes == state.hand_sizes
            assert world.boneyard_size == state.boneyard_size
            bone = sum(1 << t for t in world.boneyard)
            total = world.board | bone | 1 << TILES.double(world.engine)
            for m in world.hands:
                assert not total & m
                total |= m
            assert total == TILES.full_mask
            assert world.chance_seed != state.chance_seed
            hands_seen.add(tuple(world.hands[q] for q in range(4) if q != p))
        assert len(hands_seen) > 10  # opponents' hands vary
    assert state.clone().information_set_key(0) == state.information_set_key(0)
    same = state.sample_world(1, 77), state.sample_world(1, 77)  # an int seed is deterministic
    assert same[0].render() == same[1].render()


def test_sample_world_honours_deal_constraints() -> None:
    game = MexicanTrainGame(players=3)
    state = random_state(game, 8, 20)
    no_twelves = TILES.end_mask[12] & ~state.hand(0) & ~state.board
    constraints = DealConstraints((0, no_twelves, 0))
    rng = random.Random(0)
    for _ in range(20):
        world = state.sample_world(0, rng, constraints)
        assert not world.hand(1) & no_twelves
        assert world.information_set_key(0) == state.information_set_key(0)
    everything = TILES.full_mask & ~state.hand(0)
    with pytest.raises(ConstraintError, match="no deal"):
        state.sample_world(0, rng, DealConstraints((0, everything, everything)))
    with pytest.raises(ConstraintError, match="tiles they hold"):
        state.sample_world(0, rng, DealConstraints((state.hand(0), 0, 0)))
    with pytest.raises(ConstraintError, match="3 masks"):
        state.sample_world(0, rng, DealConstraints((0, 0)))
    with pytest.raises(ConstraintError, match="one tuple per seat"):
        state.sample_world(0, rng, DealConstraints((0, 0, 0), ((), ())))


def test_sample_world_honours_limits_by_dealing_old_and_drawn_tiles_apart() -> None:
    """Seat 1 holds at most one 12 and at most two tiles of {11, 12}: in every world; and the
    latest-drawn tile is dealt from everything unseen, so worlds do give seat 1 a 12 (the
    limit is not treated as a ban) but not more often than one tile's share of the unseen."""
    game = MexicanTrainGame(players=3)
    state = random_state(game, 8, 20)
    unseen = TILES.full_mask & ~state.hand(0) & ~state.board
    twelves = TILES.end_mask[12] & unseen
    elevens = (TILES.end_mask[11] | TILES.end_mask[12]) & unseen
    limits = ((), ((elevens, 2), (twelves, 1)), ())
    constraints = DealConstraints((0, 0, 0), limits)
    rng = random.Random(0)
    with_twelve = 0
    for _ in range(400):
        world = state.sample_world(0, rng, constraints)
        assert world.hand(1).bit_count() == state.hand(1).bit_count()
        assert (world.hand(1) & twelves).bit_count() <= 1
        assert (world.hand(1) & elevens).bit_count() <= 2
        assert world.information_set_key(0) == state.information_set_key(0)
        with_twelve += bool(world.hand(1) & twelves)
    share = twelves.bit_count() / unseen.bit_count()  # one free tile's chance of a 12
    assert 0.5 * share * 400 < with_twelve < 2.5 * share * 400


# -- fast playout ------------------------------------------------------------------------------
FAST_CASES: list[dict[str, Any]] = [
    {"players": 4, "rounds": 2},
    {"players": 2, "double_set": 9},
    {"players": 8, "rounds": 1},
    {"players": 3, "rounds": 2, "strict_doubles": False, "objective": "go_out"},
    {"players": 2, "rounds": 2, "must_play": False, "draw_until_playable": True},
    {"players": 5, "rounds": 2, "first_turn_chain": True, "double_blank_value": 50},
]


@pytest.mark.parametrize("params", FAST_CASES)
def test_fast_playout_matches_the_generic_loop(params: dict[str, Any]) -> None:
    game = MexicanTrainGame(**params)
    for seed in range(4):
        slow = random_state(game, seed, 7 * seed)  # also from positions mid-round
        fast = slow.clone()
        rng_slow, rng_fast = random.Random(seed), random.Random(seed)
        play_out(slow, rng_slow)
        fast.random_playout(rng_fast)
        assert fast.history == slow.history and fast.returns() == slow.returns()
        assert fast.round_results == slow.round_results and fast.render() == slow.render()
        assert fast.information_set_key(0) == slow.information_set_key(0)
        assert rng_fast.random() == rng_slow.random()  # same random numbers consumed


def test_fast_playout_until_round_end() -> None:
    game = MexicanTrainGame(players=4, rounds=3)
    state = game.new_initial_state(0)
    state.random_playout(random.Random(0), until_round_end=True)
    assert len(state.round_results) == 1 and state.round_index == 1 and not state.is_terminal()
    assert len(state.history) == state.round_starts[1]
    state.random_playout(random.Random(1))
    assert state.is_terminal() and len(state.round_results) == 3


def test_conformance_suite() -> None:
    game = MexicanTrainGame(players=3, rounds=2, first_turn_chain=True)
    report = check_game(game, playouts=3, seed=5, sample_every=6)
    assert report.sampled_worlds > 0 and report.worlds_differing > 0
