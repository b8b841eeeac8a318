"""Property tests (hypothesis) of Mexican Train invariants over random games and variants.

At every step of a game driven by hypothesis-chosen moves: tiles are conserved (hands + trains +
boneyard + engine = the full set, no tile twice), the observation's hand sizes and boneyard size
match the truth, train lengths add up to the board, markers sit on real seats only, every open
double really ends its train, the game stays within ``max_game_length``; nothing is accepted
after the end; and the fast playout agrees with the generic loop from any reached position.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from mexican_train_helpers import random_moves

from omega_cluster.games import IllegalActionError
from omega_cluster.games.mexican_train import MEXICAN_SLOT, MexicanTrainGame, MexicanTrainState

PARAMS = st.fixed_dictionaries(
    {
        "players": st.integers(2, 8),
        "double_set": st.sampled_from([9, 12]),
        "rounds": st.integers(1, 2),
        "strict_doubles": st.booleans(),
        "must_play": st.booleans(),
        "draw_until_playable": st.booleans(),
        "first_turn_chain": st.booleans(),
        "objective": st.sampled_from(["points", "go_out"]),
    }
)
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True)


def check_invariants(state: MexicanTrainState) -> None:
    game = state.game
    tiles = game.tiles
    if state.is_terminal():
        return
    seen = state.board | 1 << tiles.double(state.engine)
    for t in state.boneyard:
        assert not seen >> t & 1
        seen |= 1 << t
    for m in state.hands:
        assert not seen & m
        seen |= m
    assert seen == tiles.full_mask
    obs = state.observation(state.current_player)
    assert obs.hand_sizes == tuple(m.bit_count() for m in state.hands)
    assert obs.boneyard_size == len(state.boneyard)
    assert sum(state.lengths) == state.board.bit_count()
    assert state.marked >> game.num_players == 0  # markers only on the seats' own trains
    trains = state.all_train_tiles()
    for slot in state.open_doubles:
        last = trains[slot][-1]
        assert tiles.is_double(last) and tiles.high[last] == state.ends[slot]
    for slot in range(game.num_players, MEXICAN_SLOT):
        assert not trains[slot]
    assert len(state.history) <= (game.spec.max_game_length or 0)


@SETTINGS
@given(params=PARAMS, seed=st.integers(0, 2**20), choices=st.lists(st.integers(0, 2**16)))
def test_invariants_hold_at_every_step(
    params: dict[str, Any], seed: int, choices: list[int]
) -> None:
    game = MexicanTrainGame(**params)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    step = 0
    while not state.is_terminal():
        check_invariants(state)
        legal = state.legal_actions()
        assert legal and legal == sorted(set(legal))
        pick = choices[step] if step < len(choices) else rng.getrandbits(16)
        state.apply_action(legal[pick % len(legal)])
        step += 1
    assert state.legal_actions() == [] and abs(sum(state.returns()) - 1.0) < 1e-9
    assert len(state.round_results) == game.num_rounds
    try:
        state.apply_action(game.pass_action)
    except IllegalActionError:
        pass
    else:
        raise AssertionError("an action was accepted after the end")


@SETTINGS
@given(params=PARAMS, seed=st.integers(0, 2**20), prefix=st.integers(0, 200))
def test_fast_playout_equals_generic_loop(params: dict[str, Any], seed: int, prefix: int) -> None:
    game = MexicanTrainGame(**params)
    state = game.new_initial_state(seed)
    random_moves(state, random.Random(seed ^ 0x5EED), prefix)
    fast = state.clone()
    fast.random_playout(random.Random(seed))
    random_moves(state, random.Random(seed))  # the generic loop, to the end
    assert fast.history == state.history and fast.returns() == state.returns()
    assert fast.round_results == state.round_results


@SETTINGS
@given(params=PARAMS, seed=st.integers(0, 2**20), steps=st.integers(0, 120))
def test_sampled_worlds_keep_the_observation(params: dict[str, Any], seed: int, steps: int) -> None:
    game = MexicanTrainGame(**params)
    state = game.new_initial_state(seed)
    rng = random.Random(seed)
    if random_moves(state, rng, steps) < steps:
        return  # the game ended early
    for p in range(game.num_players):
        world = state.sample_world(p, rng)
        assert world.observation(p) == state.observation(p)
        assert world.information_set_key(p) == state.information_set_key(p)
        check_invariants(world)
