"""Goofspiel: simultaneous bidding, ties, the automatic last turn, the three returns types, bad
input, replay, clones, imp_info determinizations, and the matching baseline."""

from __future__ import annotations

import random

import pytest
from game_helpers import mean_return_vs_random, sampled_worlds

from omega_cluster.games import CHANCE, IllegalActionError, InvalidParameterError, make_game
from omega_cluster.games.conformance import check_game
from omega_cluster.games.goofspiel import GoofspielMatchPlayer, GoofspielState


def _state(**params: object) -> GoofspielState:
    state = make_game("goofspiel", **params).new_initial_state()
    assert isinstance(state, GoofspielState)
    return state


def test_turn_structure_and_automatic_last_turn() -> None:
    state = _state(num_cards=3)
    assert state.current_players == (CHANCE,)
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    state.apply_action(2)  # point card 3 is turned
    assert state.current_players == (0, 1) and state.is_simultaneous_node()
    assert state.legal_actions(0) == [0, 1, 2] and state.legal_actions() == []
    state.apply_joint_action((2, 0))  # P0 bids 3 and wins 3 points
    state.apply_action(0)  # point card 1
    state.apply_joint_action((0, 1))  # P1 wins 1; the last turn (card 2) plays itself: 2 vs 3
    assert state.is_terminal()
    assert state.history == [2, (2, 0), 0, (0, 1)]
    assert state.scores() == (3.0, 3.0) and state.returns() == (0.0, 0.0)  # all tied: a draw


def test_tied_top_bid_discards_the_card_and_returns_types() -> None:
    moves = [(3, 3), (0, 1), (1, 0)]  # descending: card 4 tied (discarded), 3 to P1, 2 to P0
    results = {}
    for kind in ("win_loss", "point_difference", "total_points"):
        state = _state(num_cards=4, points_order="descending", returns_type=kind)
        for joint in moves:
            state.apply_joint_action(joint)
        assert state.is_terminal()  # the last turn (card 1: 2 vs 2... a tie) was automatic
        results[kind] = state.returns()
    assert results["total_points"] == (2.0, 3.0)
    assert results["point_difference"] == (-0.5, 0.5)
    assert results["win_loss"] == (-1.0, 1.0)


def test_three_players_win_loss_shares() -> None:
    state = _state(num_cards=3, players=3, points_order="ascending")
    state.apply_joint_action((2, 2, 0))  # card 1: P0 and P1 tie at the top, discarded
    state.apply_joint_action((1, 0, 2))  # card 2 to P2
    # automatic last turn (card 3): bids 1, 2, 2 -> P1 and P2 tie, discarded
    assert state.scores() == (0.0, 0.0, 2.0)
    assert state.returns() == (-0.5, -0.5, 1.0)  # the losers share -1
    assert state.win_shares() == (0.0, 0.0, 1.0)


def test_bad_parameters_name_the_allowed_values() -> None:
    with pytest.raises(InvalidParameterError, match="'random', 'descending', 'ascending'"):
        make_game("goofspiel", points_order="shuffled")
    with pytest.raises(InvalidParameterError, match="win_loss"):
        make_game("goofspiel", returns_type="score")
    with pytest.raises(InvalidParameterError, match=r"num_turns=5.*1\.\.6 except 5"):
        make_game("goofspiel", num_cards=6, num_turns=5)
    with pytest.raises(InvalidParameterError, match="players=11"):
        make_game("goofspiel", players=11)
    with pytest.raises(InvalidParameterError, match="unknown parameter.*deck"):
        make_game("goofspiel", deck=3)


def test_illegal_bids_are_refused_with_a_clear_error() -> None:
    state = _state(num_cards=4, points_order="descending")
    state.apply_joint_action((0, 1))
    with pytest.raises(IllegalActionError) as err:
        state.apply_joint_action((2, 1))  # P1 already spent card 2
    message = str(err.value)
    assert "illegal action 1" in message and "player 1" in message
    assert "[0=bid 1, 2=bid 3, 3=bid 4]" in message
    with pytest.raises(IllegalActionError, match="simultaneously"):
        state.apply_action(2)
    with pytest.raises(IllegalActionError, match="expected 2 actions"):
        state.apply_joint_action((2,))
    assert len(state.history) == 1  # nothing was applied


def test_replay_and_clone_independence() -> None:
    game = make_game("goofspiel", num_cards=6, imp_info=True)
    state = game.new_initial_state()
    rng = random.Random(0)
    for _ in range(5):
        if state.is_chance_node():
            state.apply_action(state.legal_actions()[rng.randrange(len(state.legal_actions()))])
        else:
            state.apply_joint_action(tuple(rng.choice(state.legal_actions(p)) for p in (0, 1)))
    twin = state.clone()
    twin.apply_joint_action((twin.legal_actions(0)[0], twin.legal_actions(1)[0]))
    assert len(state.history) == 5 and state.legal_actions(0) != twin.legal_actions(0)
    again = game.replay(3, state.history)
    assert again.render() == state.render()
    assert again.information_set_key(1) == state.information_set_key(1)


def test_imp_info_sample_world_redraws_bids_consistently() -> None:
    state = _state(num_cards=6, imp_info=True, points_order="descending")
    for joint in [(5, 2), (0, 4), (3, 3), (1, 0)]:  # P0 wins, P1 wins, tie, P0 wins
        state.apply_joint_action(joint)
    histories = set()
    for world in sampled_worlds(state, 0, random.Random(9), 50):
        bids = [entry[1] for entry in world.history]  # P1's redrawn bids
        assert bids[0] < 5 and bids[1] > 0 and bids[2] == 3 and bids[3] < 1
        assert len(set(bids)) == 4
        histories.add(tuple(bids))
    assert len(histories) > 3  # P1's first and second bids really vary
    perfect = _state(num_cards=4)
    assert perfect.sample_world(0, 1).render() == perfect.render()


@pytest.mark.parametrize("num_cards", [14, 15, 20])
def test_legal_moves_and_outcomes_past_the_lookup_tables(num_cards: int) -> None:
    """Hands of up to 14 cards come from lookup tables, wider ones are computed: both agree with
    the cards still held (a full random game, every node checked)."""
    state = _state(num_cards=num_cards)
    rng = random.Random(num_cards)
    held = [set(range(num_cards)), set(range(num_cards))]
    deck = set(range(num_cards))
    while not state.is_terminal():
        if state.is_chance_node():
            assert state.chance_outcomes() == [(c, 1 / len(deck)) for c in sorted(deck)]
            assert state.legal_actions() == sorted(deck)
            card = rng.choice(state.legal_actions())
            deck.discard(card)
            state.apply_action(card)
        else:
            assert [state.legal_actions(p) for p in (0, 1)] == [sorted(h) for h in held]
            joint = tuple(rng.choice(state.legal_actions(p)) for p in (0, 1))
            for hand, bid in zip(held, joint, strict=True):
                hand.discard(bid)
            state.apply_joint_action(joint)
    assert len(state.history) == 2 * (num_cards - 1)  # the last turn played itself


@pytest.mark.parametrize(
    "params",
    [{"num_cards": 13, "imp_info": True}, {"num_cards": 7, "players": 4, "imp_info": True}],
)
def test_goofspiel_conformance_suite(params: dict[str, object]) -> None:
    report = check_game(make_game("goofspiel", **params), playouts=8, seed=2)
    assert report.sampled_worlds > 0 and report.worlds_differing > 0


def test_match_player_is_legal_and_beats_random() -> None:
    # Measures the matching strategy's mean win/loss return (+1 win, -1 loss) against a random
    # bidder over 600 games of 6 cards, seats alternating: observed about +0.79; the bar is +0.5.
    game = make_game("goofspiel", num_cards=6)
    assert mean_return_vs_random(game, GoofspielMatchPlayer(game), games=600, seed=4) > 0.5


def test_match_player_falls_back_when_the_prize_card_is_spent() -> None:
    game = make_game("goofspiel", num_cards=4, points_order="ascending")
    state = game.new_initial_state()
    state.apply_joint_action((1, 0))  # P0 spent card 2; the next prize is card 2
    assert GoofspielMatchPlayer(game).act(state, 0, random.Random(0)) == 2  # cheapest above
