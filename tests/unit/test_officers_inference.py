"""Deductions from the public record of Mexican Train (``deal_constraints``): sound (the real hands never hold a tile said to be absent), the
same for states one player cannot tell apart, honoured by ISMCTS's determinizations, and off for
rule variants where a draw or a pass proves nothing."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from omega_cluster.games import make_game
from omega_cluster.games.mexican_train import DealConstraints
from omega_cluster.games.mexican_train.belief import CommanderBelief
from omega_cluster.games.mexican_train.inference import _limits, deal_constraints
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.search import Leaf, LeafEvaluation, RolloutEvaluator
from omega_cluster.search.ismcts import ISMCTS


@pytest.mark.parametrize(
    "params",
    [
        {"players": 2},
        {"players": 4},
        {"players": 3, "strict_doubles": False},
        {"players": 3, "double_set": 9, "rounds": 2},
    ],
)
def test_deductions_are_sound_and_private(params: dict[str, Any]) -> None:
    """Along games mixing Commander and random moves, every seat's real hand avoids the tiles
    deduced absent, from every viewpoint, and a world ``sample_world`` draws for a player (same
    information set) gives that player the same deductions."""
    game = make_game("mexican_train", rounds=params.pop("rounds", 1), **params)
    commander = Commander(game)
    n = game.num_players
    proved = bounded = 0
    for seed in range(4):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            for viewer in range(n):
                facts = deal_constraints(state, viewer)
                assert isinstance(facts, DealConstraints) and len(facts.forbidden) == n
                assert facts.forbidden[viewer] == 0
                for q in range(n):
                    assert not facts.forbidden[q] & state.hands[q]
                    proved += (facts.forbidden[q] & ~state.board).bit_count()
                for q, limits in enumerate(facts.limits):
                    assert q != viewer or not limits
                    for mask, at_most in limits:
                        assert (state.hands[q] & mask).bit_count() <= at_most
                        bounded += 1
                world = state.sample_world(viewer, random.Random(seed))
                assert deal_constraints(world, viewer) == facts
            p = state.current_players[0]
            legal = state.legal_actions()
            move = commander.act(state, p, rng) if rng.random() < 0.7 else rng.choice(legal)
            state.apply_action(move)
    assert proved > 100  # draws and passes do reveal something
    assert bounded > 20  # and what was proved before a kept draw is kept as a limit


def test_no_deductions_where_draws_and_passes_prove_nothing() -> None:
    for params in ({"must_play": False}, {"draw_until_playable": True}, {"first_turn_chain": True}):
        game = make_game("mexican_train", players=2, rounds=1, **params)
        assert deal_constraints(game.new_initial_state(0), 0) is None
    assert deal_constraints(make_game("leduc_poker").new_initial_state(), 0) is None


def test_a_draw_proves_the_hand_held_no_playable_tile() -> None:
    """Seat 1 draws on the first turn it cannot play: from then on no unseen tile matching the
    ends open to it then may sit in its hand (unless the drawn tile is played at once)."""
    game = make_game("mexican_train", players=2, rounds=1)
    commander = Commander(game)
    for seed in range(40):
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            p = state.current_players[0]
            if p == 1 and state.legal_actions() == [game.draw_action]:
                ends = {state.ends[s] for s in state.open_slots(1)}
                playable = 0
                for t in range(game.tiles.num_tiles):
                    if game.tiles.high[t] in ends or game.tiles.low[t] in ends:
                        playable |= 1 << t
                state.apply_action(game.draw_action)
                if state.legal_actions() == [game.pass_action]:
                    state.apply_action(game.pass_action)
                    facts = deal_constraints(state, 0)
                    assert facts is not None
                    unseen = ~state.board & ~state.hands[0]
                    if not state.open_doubles:
                        assert facts.forbidden[1] & unseen == playable & unseen
                    return
                continue
            state.apply_action(commander.act(state, p, random.Random(0)))
    raise AssertionError("no draw-then-pass by seat 1 in 40 deals")


def test_what_a_seat_proved_before_a_kept_draw_is_kept_as_a_limit() -> None:
    """Seat 1 passes after a draw (the drawn tile stays in its hand), later draws and passes
    again: what the first pass proved no longer holds for the whole hand, but at most one of its
    tiles (the one drawn since) can match it; the deductions before this change forgot it."""
    game = make_game("mexican_train", players=2, rounds=1)
    commander = Commander(game)
    for seed in range(60):
        state = game.new_initial_state(seed)
        first: int | None = None  # unseen tiles the first draw-then-pass proved absent
        while not state.is_terminal():
            p = state.current_players[0]
            if p == 1 and state.legal_actions() == [game.draw_action]:
                state.apply_action(game.draw_action)
                if state.legal_actions() != [game.pass_action]:
                    continue  # the drawn tile plays: nothing kept
                facts = deal_constraints(state, 0)
                state.apply_action(game.pass_action)
                after = deal_constraints(state, 0)
                assert facts is not None and after is not None
                if first is None:
                    first = after.forbidden[1] & ~state.board & ~state.hands[0]
                    continue
                assert first, "a pass proves some unseen tile absent"
                limits = dict((m, k) for m, k in after.limits[1])
                assert any(m & first == first and k == 1 for m, k in limits.items())
                old = deal_constraints(state, 0, before_draws=False)
                assert old is not None and old.forbidden == after.forbidden and not old.limits
                return
            state.apply_action(commander.act(state, p, random.Random(0)))
    raise AssertionError("no seat 1 with two draw-then-pass turns in 60 deals")


def test_limits_count_kept_draws_less_the_tiles_laid_that_only_they_can_have_brought() -> None:
    """``_limits`` on hand-made levels: masks nested widest first, two kept draws."""
    wide, narrow, ban = 0b1111_0000, 0b0011_0000, 0b1
    assert _limits([wide, narrow], [0, 0], ban) == (ban, ((wide, 2), (narrow, 1)))
    # one tile of ``wide`` laid since the deal came with a draw: one draw's tile left for it
    assert _limits([wide, narrow], [1, 0], ban) == (ban, ((wide, 1),))  # bounds ``narrow`` too
    # both draws' tiles laid: nothing of ``wide`` can be in the hand any more
    assert _limits([wide, narrow], [2, 0], ban) == (ban | wide, ())
    assert _limits([narrow, narrow], [0, 0], ban) == (ban, ((narrow, 1),))  # same mask: tighter
    assert _limits([], [], ban) == (ban, ())


class _RecordingRollout:
    """A Commander rollout that keeps the leaves it was asked about."""

    def __init__(self, game: Any) -> None:
        self.inner = RolloutEvaluator(Commander(game))
        self.leaves: list[Leaf] = []

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        self.leaves.extend(leaves)
        return self.inner.evaluate(leaves)


def test_ismcts_determinizations_honour_the_deductions() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    commander = Commander(game)
    rng = random.Random(3)
    for seed in range(30):  # a position where the opponent has drawn and passed
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            p = state.current_players[0]
            facts = deal_constraints(state, p)
            if (
                p == 0
                and facts is not None
                and facts.forbidden[1]
                and len(state.legal_actions()) > 1
            ):
                break
            state.apply_action(commander.act(state, p, rng))
        if not state.is_terminal():
            break
    assert facts is not None and facts.forbidden[1]
    recorder = _RecordingRollout(game)
    search = ISMCTS(game, recorder, simulations=40, world_constraints=deal_constraints)
    search.search(state, 0, random.Random(0))
    root_length = len(state.history)
    opponent_untouched = [
        leaf.state
        for leaf in recorder.leaves
        if len(leaf.state.history) == root_length + 1 and leaf.state.history[-1] < game.draw_action
    ]  # seat 0 laid one tile since the root: seat 1's hand is the one the world drew
    assert opponent_untouched
    for world in opponent_untouched:
        assert not world.hands[1] & facts.forbidden[1]


# -- CommanderBelief ------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 4])
def test_commander_belief_rebuilds_past_decisions_exactly(players: int) -> None:
    """In Commander-vs-Commander rounds the true hands pass every check: each rebuilt decision
    has the hand sizes of the time, and a Commander holding the true hand then makes the move
    that was made."""
    game = make_game("mexican_train", players=players, rounds=1)
    commander = Commander(game)
    belief = CommanderBelief(game, max_checks=6)
    checked = 0
    for seed in range(3):
        state = game.new_initial_state(seed)
        rng = random.Random(seed)
        while not state.is_terminal():
            p = state.current_players[0]
            for check in belief._recent_checks(state, p):
                assert check.seat != p
                size = check.view.hands[check.seat].bit_count()  # the placeholder: size then
                check.view.hands[check.seat] = state.hands[check.seat] | check.add_back
                assert check.view.hands[check.seat].bit_count() == size
                assert commander.act(check.view, check.seat, rng) == check.action
                checked += 1
            state.apply_action(commander.act(state, p, rng))
    assert checked > 100


def test_commander_belief_draws_consistent_private_worlds() -> None:
    """Worlds keep the player's view, honour the hard deductions, mostly pass the checks, and
    are the same for two states the player cannot tell apart."""
    game = make_game("mexican_train", players=2, rounds=1)
    commander = Commander(game)
    state = game.new_initial_state(4)
    rng = random.Random(4)
    for _ in range(24):
        state.apply_action(commander.act(state, state.current_players[0], rng))
    player = state.current_players[0]
    facts = deal_constraints(state, player)
    assert facts is not None
    twin = state.sample_world(player, random.Random(9))  # same information set, other hands
    belief = CommanderBelief(game)
    worlds = [belief(state, player, random.Random(s)) for s in range(20)]
    for world in worlds:
        assert world.information_set_key(player) == state.information_set_key(player)
        assert not world.hands[1 - player] & facts.forbidden[1 - player]
    assert belief.accepted >= 15  # most worlds pass every check within the tries
    again = CommanderBelief(game)
    assert [again(twin, player, random.Random(s)).hands for s in range(20)] == [
        w.hands for w in worlds
    ]
    with pytest.raises(TypeError, match="models Mexican Train"):
        CommanderBelief(make_game("leduc_poker"))  # type: ignore[arg-type]
