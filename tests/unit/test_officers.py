"""The Mexican Train officers: legality, the Lieutenant's greed, the Commander's terms, strength.

Rigged positions set the hands and boneyard of a fresh round-0 state (engine 12|12) by hand
(``mexican_train_helpers.rig``, as the rule tests do), and then move only through
``apply_action``.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from mexican_train_helpers import DRAW, PASS, TILES, play, random_decisions, rig

from omega_cluster.eval.arena import MatchResult, play_match
from omega_cluster.eval.stats import ConfidenceInterval, mean_ci
from omega_cluster.games import make_game
from omega_cluster.games.mexican_train import MEXICAN_SLOT
from omega_cluster.games.mexican_train.officers import (
    TERMS,
    Commander,
    CommanderWeights,
    Lieutenant,
    format_explanation,
)
from omega_cluster.games.player import RandomPlayer
from omega_cluster.players.registry import make_player

VARIANTS: list[dict[str, Any]] = [
    {"players": 2},
    {"players": 4},
    {"players": 8},
    {"players": 3, "double_set": 9},
    {"players": 6, "double_set": 9, "rounds": 2},
    {"players": 4, "must_play": False},
    {"players": 3, "draw_until_playable": True},
    {"players": 4, "first_turn_chain": True},
    {"players": 5, "strict_doubles": False},
    {"players": 2, "double_blank_value": 50, "objective": "go_out"},
]


# -- legality ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params", VARIANTS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items())
)
def test_officers_always_choose_legal_moves(params: dict[str, Any]) -> None:
    """Three games per variant; at every decision both officers are asked, and a random mix of
    officer and random moves drives the game into varied positions."""
    game = make_game("mexican_train", **{"rounds": 1, **params})
    officers = [Lieutenant(game), Commander(game)]
    rng = random.Random(7)
    for seed in range(3):
        state = game.new_initial_state(seed)
        decisions = 0
        while not state.is_terminal():
            p = state.current_player
            legal = state.legal_actions(p)
            choices = [o.act(state, p, rng) for o in officers]
            assert all(a in legal for a in choices), (choices, legal, state.render())
            state.apply_action(choices[decisions % 2] if rng.random() < 0.7 else rng.choice(legal))
            decisions += 1
        assert decisions > 0


# -- Lieutenant --------------------------------------------------------------------------------
def test_lieutenant_lays_a_double_first() -> None:
    s = rig([["12|6", "6|6", "12|11", "1|0"], ["12|5", "5|0", "3|3"]])
    s.apply_action(play("12|6", 0))
    s.apply_action(play("12|5", 1))
    # 12|11 (23 pips) fits the Mexican train, but the double 6|6 earns another play this turn
    assert play("12|11", MEXICAN_SLOT) in s.legal_actions()
    assert Lieutenant(s.game).act(s, 0, random.Random(0)) == play("6|6", 0)


def test_lieutenant_plays_the_heaviest_tile_own_train_on_ties() -> None:
    s = rig([["12|1", "12|9", "12|4"], ["11|0", "2|0"]])
    # 12|9 fits the own and the Mexican train: the heaviest tile, own train breaks the tie
    assert Lieutenant(s.game).act(s, 0, random.Random(0)) == play("12|9", 0)


def test_lieutenant_is_greedy_in_random_positions() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    lieutenant = Lieutenant(game)
    rng = random.Random(3)
    checked = 0
    for state, p, legal in random_decisions(game, range(20), rng):
        plays = [a for a in legal if a < DRAW]
        a = lieutenant.act(state, p, rng)
        if plays:
            doubles = [x for x in plays if TILES.is_double(x // 9)]
            pool = doubles or plays  # a double first: it earns another play this turn
            heaviest = max(TILES.pips[x // 9] for x in pool)
            assert a in pool and TILES.pips[a // 9] == heaviest
            checked += 1
        else:
            assert a == legal[0]
    assert checked > 200


# -- Commander ---------------------------------------------------------------------------------
def test_commander_covers_an_open_double_when_it_can() -> None:
    """Lenient doubles: after laying 6|6 the extra play may go anywhere; the Commander covers
    its double (6|2) instead of dumping the heavier 12|11 on the Mexican train."""
    s = rig(
        [["12|6", "6|6", "6|2", "12|11", "3|0"], ["12|5", "5|1", "1|0", "4|0"]],
        ["9|8", "7|1"],
        strict_doubles=False,
    )
    s.apply_action(play("12|6", 0))
    s.apply_action(play("12|5", 1))
    s.apply_action(play("6|6", 0))
    legal = s.legal_actions()
    assert play("12|11", MEXICAN_SLOT) in legal and s.open_doubles == (0,)
    assert Commander(s.game).act(s, 0, random.Random(0)) == play("6|2", 0)
    # strict rule: covering is the only play; the Commander covers rather than drawing
    strict = rig([["12|6", "6|6", "6|2", "3|0"], ["12|5", "5|1"]], ["9|8"])
    for a in (play("12|6", 0), play("12|5", 1), play("6|6", 0)):
        strict.apply_action(a)
    assert Commander(strict.game).act(strict, 0, random.Random(0)) == play("6|2", 0)


def test_commander_lays_a_double_it_can_cover_before_a_heavier_tile() -> None:
    s = rig([["12|6", "6|6", "6|2", "10|9", "3|0"], ["12|5", "5|1", "1|0"]], ["9|8"])
    s.apply_action(play("12|6", 0))
    s.apply_action(play("12|5", 1))
    assert play("10|9", MEXICAN_SLOT) not in s.legal_actions()  # Mexican end is 12
    assert Commander(s.game).act(s, 0, random.Random(0)) == play("6|6", 0)


@pytest.mark.parametrize("variant", ["must_play", "chain", "double"])
def test_commander_goes_out_when_it_can(variant: str) -> None:
    commander_rng = random.Random(0)
    if variant == "must_play":  # DRAW is legal too, and the boneyard holds a heavy tile
        s = rig([["12|3"], ["1|0", "2|0"]], ["11|11", "12|10"], must_play=False)
        expected = {play("12|3", 0), play("12|3", MEXICAN_SLOT)}
    elif variant == "chain":  # first-turn chain: PASS would end the turn with 3|1 in hand
        s = rig([["12|6", "6|3", "3|1"], ["12|5", "5|0"]], ["1|1"], first_turn_chain=True)
        s.apply_action(play("12|6", 0))
        s.apply_action(play("6|3", 0))
        expected = {play("3|1", 0)}
    else:  # the last tile is a double, which need not be covered
        s = rig([["12|7", "7|7"], ["12|5", "5|0", "4|0"]], ["1|1"])
        s.apply_action(play("12|7", 0))
        s.apply_action(play("12|5", 1))
        expected = {play("7|7", 0)}
    commander = Commander(s.game)
    assert commander.act(s, s.current_player, commander_rng) in expected
    top = commander.explain(s, s.current_player)[0]
    assert top.terms["goes_out"] == CommanderWeights().goes_out


def test_explain_lists_every_term_of_every_move_and_its_top_is_act() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    commander = Commander(game)
    rng = random.Random(11)
    compared = 0
    for state, p, legal in random_decisions(game, range(8), rng):
        moves = commander.explain(state, p)
        assert sorted(m.action for m in moves) == sorted(legal)
        for m in moves:
            assert tuple(m.terms) == TERMS and tuple(m.features) == TERMS
            assert m.total == pytest.approx(sum(m.terms.values()))
            assert m.description == game.describe_action(m.action)
        totals = [m.total for m in moves]
        assert totals == sorted(totals, reverse=True)
        assert commander.act(state, p, rng) == moves[0].action
        compared += len(legal) > 1
    assert compared > 100


def test_format_explanation_is_readable() -> None:
    s = rig([["12|6", "6|6", "6|2", "10|9", "3|0"], ["12|5", "5|1", "1|0"]], ["9|8"])
    moves = Commander(s.game).explain(s, 0)
    text = format_explanation(moves, top=2)
    assert text.splitlines()[0].startswith(" 1. 12|6 on seat 0's train")
    assert "hand_flexibility" in text and "Mexican train" in text
    assert len([line for line in text.splitlines() if line[:3].strip().endswith(".")]) == 2
    with pytest.raises(ValueError, match="top"):
        format_explanation(moves, top=0)


# -- weights and construction ------------------------------------------------------------------
def test_weights_validation_names_the_problem() -> None:
    w = CommanderWeights.from_dict({"dump_pips": 2.0, "danger_hand_size": 2})
    assert (
        w.dump_pips == 2.0 and w.danger_hand_size == 2 and w.goes_out == CommanderWeights.goes_out
    )
    assert CommanderWeights.from_dict(w.as_dict()) == w
    assert w.replace(draw=-1).draw == -1 and len(w.vector()) == len(TERMS)
    with pytest.raises(ValueError, match=r"'dump_pipz'.*allowed: .*dump_pips"):
        CommanderWeights.from_dict({"dump_pipz": 1.0})
    with pytest.raises(ValueError, match="bogus"):
        w.replace(bogus=1.0)
    with pytest.raises(TypeError, match="own_train must be a number"):
        CommanderWeights(own_train="high")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        CommanderWeights(draw=float("nan"))
    with pytest.raises(ValueError, match="danger_hand_size"):
        CommanderWeights(danger_hand_size=0)
    game = make_game("mexican_train", players=2, rounds=1)
    with pytest.raises(ValueError, match="'colour'"):
        Commander(game, weights={"colour": 1.0})
    with pytest.raises(ValueError, match="chain_budget"):
        Commander(game, chain_budget=0)
    assert Commander(game, weights={"draw": -2.0}).weights.draw == -2.0
    with pytest.raises(TypeError, match="only mexican_train"):
        Lieutenant(make_game("kuhn_poker"))


def test_registry_builds_the_officers() -> None:
    game = make_game("mexican_train", players=3, rounds=1)
    assert isinstance(make_player("lieutenant", game), Lieutenant)
    assert isinstance(make_player("commander", game), Commander)
    heuristic = make_player("heuristic:chain_budget=50", game)
    assert isinstance(heuristic, Commander) and heuristic.chain_budget == 50


def test_weights_change_the_choice() -> None:
    """A positive pass weight large enough makes the Commander end its first-turn chain."""
    s = rig([["12|6", "6|3", "3|1", "9|9"], ["12|5", "5|0"]], ["1|1"], first_turn_chain=True)
    s.apply_action(play("12|6", 0))
    assert Commander(s.game).act(s, 0, random.Random(0)) == play("6|3", 0)
    lazy = Commander(s.game, weights=CommanderWeights(pass_turn=100.0))
    assert lazy.act(s, 0, random.Random(0)) == PASS


# -- strength ----------------------------------------------------------------------------------
def pooled_fair_share(match: MatchResult, players: set[int]) -> ConfidenceInterval:
    """Fair share of several seats played by the same kind of player, pooled per game (the mean
    over those seats of N × win share), with a t-interval over games."""
    n = len(match.players)
    per_game = [
        sum(n * rec.win_shares[seat] for seat, who in enumerate(rec.seating) if who in players)
        / len(players)
        for rec in match.records
    ]
    return mean_ci(per_game)


@pytest.mark.parametrize("seed", [2024, 7])
def test_strength_ordering_commander_lieutenant_ensign(seed: int) -> None:
    """The issue's bar: over 400 seat-rotated 4-player double-12 single rounds (100 deals x 4
    rotations, points objective, fixed seeds) at the table commander, lieutenant, ensign, ensign,
    fair share (N x mean win share, 1.0 = par) is ordered Commander > Lieutenant > Ensign, each
    step outside the other's 95% interval: each estimate lies outside its neighbour's interval (the
    two Ensign seats are pooled into one Ensign figure). Commander vs Lieutenant is also required
    not to overlap at all. Measured: seed 2024 commander 2.22 [2.03, 2.41], lieutenant 0.76
    [0.61, 0.91], ensign 0.51 [0.43, 0.59]; seed 7: 2.22 / 0.78 [0.63, 0.94] / 0.50 [0.41, 0.58].
    Two seeds, so the ordering is not one lucky draw.
    """
    game = make_game("mexican_train", players=4, rounds=1)
    match = play_match(
        game,
        [Commander(game), Lieutenant(game), RandomPlayer(game), RandomPlayer(game)],
        games=400,
        seed=seed,
        labels=["commander", "lieutenant", "ensign", "ensign"],
    )
    assert match.balanced and len(match.records) == 400
    commander, lieutenant = match.players[0].fair_share_ci, match.players[1].fair_share_ci
    ensign = pooled_fair_share(match, {2, 3})
    assert commander.low > lieutenant.high, (commander, lieutenant)
    assert lieutenant.low > ensign.estimate and ensign.high < lieutenant.estimate, (
        lieutenant,
        ensign,
    )


def test_lieutenant_beats_three_ensigns() -> None:
    """Lieutenant x 1 vs Ensign x 3, 2000 single rounds: greedy play alone is worth a clear edge
    (measured fair share ~1.5 against ~0.83 for each Ensign)."""
    game = make_game("mexican_train", players=4, rounds=1)
    match = play_match(
        game,
        [Lieutenant(game), RandomPlayer(game), RandomPlayer(game), RandomPlayer(game)],
        games=2000,
        seed=2025,
    )
    lieutenant = match.players[0].fair_share_ci
    ensign = pooled_fair_share(match, {1, 2, 3})
    assert lieutenant.low > 1.2 and ensign.high < 0.95, (lieutenant, ensign)
