"""The table session: people and bots at one table, moves by number or name, illegal moves that
change nothing, and views that show a seat only what it may see (two worlds that differ only in
another seat's hidden hand give the same view)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from train_helpers import champion_run

from omega_cluster.games.registry import make_game
from omega_cluster.play.advisor import advise, load_champion
from omega_cluster.play.session import IllegalMove, TableSession
from omega_cluster.players.registry import PlayerSpecError


def _mt(**params: object):
    return make_game("mexican_train", players=4, rounds=1, **params)


def _snapshot(s: TableSession) -> tuple:
    return (list(s.state.history), len(s.events), json.dumps(s.view(0)), s.waiting_for())


def test_bots_play_until_the_person_acts_and_a_whole_game_plays_out() -> None:
    s = TableSession(_mt(), ["commander", "you", "lieutenant", "you"], seed=3)
    assert s.humans == (1, 3) and s.result() is None
    moves = 0
    while True:
        made = s.advance()
        assert all(e.seat not in s.humans for e in made)  # advance never moves a person
        seat = s.waiting_for()
        if seat is None:
            break
        legal = s.legal(seat)
        assert legal and all(isinstance(a, int) and name for a, name in legal)
        event = s.play(seat, moves % len(legal))  # by number
        assert (event.seat, event.action) == (seat, legal[moves % len(legal)][0])
        moves += 1
    result = s.result()
    assert result is not None and abs(sum(result["win_shares"]) - 1.0) < 1e-9
    assert result["rounds"][0]["pips"] and moves > 5
    assert [e.action for e in s.events if not e.chance] == s.state.history


def test_a_move_by_name_ignores_case_and_spacing() -> None:
    s = TableSession(_mt(), ["you", "commander", "commander", "commander"], seed=5)
    s.advance()
    action, name = s.legal(0)[-1]
    assert s.play(0, "  " + name.upper().replace(" ", "  ") + " ").action == action


def test_illegal_moves_are_refused_and_change_nothing() -> None:
    s = TableSession(_mt(), ["you", "commander", "commander", "commander"], seed=5)
    s.advance()
    before = _snapshot(s)
    legal = s.legal(0)
    not_legal = next(a for a in range(s.game.spec.num_actions) if a not in {x for x, _ in legal})
    cases = [
        (99, "no move number 99"),
        ("-1", "no move number -1"),
        ("bogus", "no move is named 'bogus'"),
        (s.game.describe_action(not_legal), "illegal action"),  # a real move: the contract's words
        (1.5, "not a move number or name"),
    ]
    for move, words in cases:
        with pytest.raises(IllegalMove, match=words) as err:
            s.play(0, move)  # type: ignore[arg-type]
        assert "legal" in str(err.value) and "\n" not in str(err.value)
        assert _snapshot(s) == before
    with pytest.raises(IllegalMove, match="not a person's seat"):
        s.play(1, 0)
    assert _snapshot(s) == before


def test_the_view_of_a_seat_is_the_same_in_worlds_that_differ_in_other_hands() -> None:
    game = _mt()
    s = TableSession(game, ["you", "commander", "commander", "commander"], seed=7)
    s.advance()
    s.play(0, 0)
    s.advance()
    view = s.view(0)
    rng = random.Random(0)
    other = s.state.sample_world(0, rng)
    assert other.hands[1] != s.state.hands[1] and other.hands[0] == s.state.hands[0]
    world = TableSession(game, s.seats, seed=7)
    world.state = other
    assert world.view(0) == view
    names = {game.tiles.name(t) for t in game.tiles.mask_tiles(s.state.hands[1])}
    assert not names & set(view["hand"])
    assert view["hand_sizes"][1] == s.state.hand_sizes[1] and view["boneyard"] > 0
    assert {"trains", "open_doubles", "scores", "round", "text", "legal"} <= set(view)
    json.dumps(view)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "openspiel:kuhn_poker"])
def test_card_and_generic_views_hide_the_opponents_cards(name: str) -> None:
    game = make_game(name)
    s = TableSession(game, ["you", "random"], seed=1)
    s.advance()  # the deal
    view = s.view(0)
    world = TableSession(game, s.seats, seed=1)
    rng = random.Random(3)
    world.state = next(
        w
        for w in (s.state.sample_world(0, rng) for _ in range(50))
        if w.render() != s.state.render()
    )  # the opponent holds another card
    assert world.view(0) == view and "board" not in view  # render() shows every card
    if name.startswith("openspiel:"):  # no picture of its own: the observation's fields
        assert "observation" in view and "kind" not in view
    else:  # the game's picture: its own card face up, the other face down
        assert view["kind"] == "cards"
        own, other = view["rows"][0]["cards"], view["rows"][1]["cards"]
        assert own[0]["face"] and other == [{"face": None, "action": None}]


def test_a_game_without_hidden_information_shows_its_board() -> None:
    s = TableSession(make_game("openspiel:tic_tac_toe"), ["random", "you"], seed=0)
    s.advance()  # the bot's first mark
    view = s.view(1)
    assert view["board"] == s.state.render() and "x" in view["board"]
    assert view["text"].startswith(view["board"])


def test_goofspiel_bids_are_the_cards_of_the_own_hand() -> None:
    s = TableSession(make_game("goofspiel", num_cards=5), ["you", "random"], seed=2)
    s.advance()
    view = s.view(0)
    prize, mine, theirs = view["rows"]
    assert prize["label"] == "prize" and len(prize["cards"]) == 1
    assert [c["action"] for c in mine["cards"]] == [a for _, a, _ in view["legal"]]
    assert [c["face"] for c in theirs["cards"]] == ["1", "2", "3", "4", "5"]  # public hands
    assert all(c["action"] is None for c in theirs["cards"])


def test_a_simultaneous_node_waits_for_the_person_then_moves_everyone() -> None:
    s = TableSession(make_game("goofspiel"), ["you", "random"], seed=2)
    s.advance()
    assert s.waiting_for() == 0
    s.play(0, "bid 3")
    made = s.advance()
    assert [e.seat for e in made[:2]] == [0, 1] and made[0].name == "bid 3"
    assert s.waiting_for() == 0


def _kuhn_run(root: Path) -> Path:
    """A run directory with one champion, for kuhn_poker (no training)."""
    champion_run(root, ["run=smoke", "game=kuhn_poker", "cluster=inprocess"])
    return root


def test_bad_seats_are_one_line_errors_and_a_champion_advises(tmp_path: Path) -> None:
    game = _mt()
    with pytest.raises(PlayerSpecError, match="2 seats .* for a 4-player mexican_train"):
        TableSession(game, ["you", "commander"])
    with pytest.raises(PlayerSpecError, match="unknown player 'bogus'"):
        TableSession(game, ["you", "bogus", "commander", "commander"])
    run = _kuhn_run(tmp_path / "kuhn")
    with pytest.raises(PlayerSpecError, match="trained kuhn_poker .* this table is mexican_train"):
        TableSession(game, ["you", f"champion:{run}", "commander", "commander"])
    kuhn = make_game("kuhn_poker")
    s = TableSession(kuhn, ["you", f"champion:{run}"], seed=0)
    s.advance()
    advice = advise(kuhn, s.state, 0, champion=load_champion(kuhn, f"champion:{run}"))
    assert abs(sum(m.policy for m in advice.moves) - 1.0) < 1e-6
    assert advice.champion and advice.champion.startswith("champion:kuhn")
