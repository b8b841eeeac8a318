"""``State.hidden_state(player)``: what the player cannot see, for training only.

Mexican Train and the poker games give location codes relative to the player (0 not hidden,
1 the undealt pool, ``1 + k`` the hand of the seat ``k`` places on) that cover exactly the items
the player cannot see; Goofspiel with ``imp_info`` and OpenSpiel's imperfect-information games give
a vector (the other seats' hands, the other players' tensors); games with nothing hidden give
None. Every encoder declares it (``info().hidden``) in the size its game fills.
"""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from mexican_train_helpers import random_decisions, rig, tile

from omega_cluster.games.api import CHANCE, State
from omega_cluster.games.encoding import EncoderInfo
from omega_cluster.games.registry import make_game
from omega_cluster.model import encoder_for


def _bits(mask: int) -> list[int]:
    return [t for t in range(mask.bit_length()) if mask >> t & 1]


@pytest.mark.parametrize("players", [2, 4])
def test_mexican_train_codes_cover_exactly_what_the_player_cannot_see(players: int) -> None:
    game = make_game("mexican_train", players=players, rounds=2, double_set=9)
    rng = random.Random(players)
    seen = 0
    for state, player, _ in random_decisions(game, [1, 2], rng):
        codes = state.hidden_state(player)
        assert codes.dtype == np.float32 and codes.shape == (55,)
        assert int((codes == 1).sum()) == len(state.boneyard)
        assert sorted(np.flatnonzero(codes == 1)) == sorted(state.boneyard)
        for k in range(1, players):
            seat = (player + k) % players
            assert np.flatnonzero(codes == 1 + k).tolist() == _bits(state.hands[seat])
        visible = state.hands[player] | state.board  # own hand, the trains
        engine = game.tiles.index(state.engine, state.engine)  # type: ignore[attr-defined]
        assert set(np.flatnonzero(codes == 0)) == {*_bits(visible), engine}
        if seen % 7 == 0:  # relative to the player: another seat's view is a relabelling
            other = (player + 1) % players
            theirs = state.hidden_state(other)
            for k in range(1, players):
                seat = (player + k) % players
                code = 0 if seat == other else 1 + (seat - other) % players
                assert (theirs[codes == 1 + k] == code).all()
        seen += 1
    assert seen > 50


def test_mexican_train_codes_of_a_rigged_table() -> None:
    state = rig([["1|0", "2|2"], ["3|1"], ["5|4", "6|0"]], boneyard=["7|7"])
    codes = state.hidden_state(1)
    assert codes[tile("7|7")] == 1 and codes[tile("3|1")] == 0
    assert codes[tile("5|4")] == codes[tile("6|0")] == 2  # seat 2: one place after seat 1
    assert codes[tile("1|0")] == codes[tile("2|2")] == 3  # seat 0: two places after
    assert int((codes > 0).sum()) == 5 and codes[tile("12|12")] == 0  # the engine is set aside


def _decisions(game_name: str, seeds: range, **params: Any) -> list[tuple[State, int]]:
    """Every (state, acting player) of random games (chance from its outcomes)."""
    game = make_game(game_name, **params)
    out: list[tuple[State, int]] = []
    for seed in seeds:
        rng = random.Random(seed)
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            acting = state.current_players
            if acting[0] == CHANCE:
                actions, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(actions, weights)[0])
                continue
            out.extend((state.clone(), p) for p in acting)
            if len(acting) == 1:
                state.apply_action(rng.choice(state.legal_actions(acting[0])))
            else:
                state.apply_joint_action([rng.choice(state.legal_actions(p)) for p in acting])
    return out


def test_kuhn_codes_are_own_undealt_and_relative_seats() -> None:
    for state, player in _decisions("kuhn_poker", range(6), players=3):
        codes = state.hidden_state(player)
        cards = state._cards  # type: ignore[attr-defined]
        assert codes.shape == (4,) and codes[cards[player]] == 0
        for k in range(1, 3):
            assert codes[cards[(player + k) % 3]] == 1 + k
        assert int((codes == 1).sum()) == 1  # the one undealt card


@pytest.mark.parametrize("iso", [False, True])
def test_leduc_codes_place_every_card_id_the_deck_holds(iso: bool) -> None:
    for state, player in _decisions("leduc_poker", range(8), players=3, suit_isomorphism=iso):
        codes = state.hidden_state(player)
        assert codes.shape == (8,)
        undealt = np.flatnonzero(codes == 1)
        deck = state._deck  # type: ignore[attr-defined]
        assert undealt.tolist() == [c for c in range(8) if deck >> c & 1]
        private = state._private  # type: ignore[attr-defined]
        for k in range(1, 3):
            (held,) = np.flatnonzero(codes == 1 + k)  # a rank under isomorphism, else an id
            assert private[(player + k) % 3] == (held // 2 if iso else held)
        board = state._board  # type: ignore[attr-defined]
        assert int((codes == 0).sum()) == 1 + (board >= 0)  # own card and the board


def test_goofspiel_hides_the_other_hands_only_with_imp_info() -> None:
    (state, player), *_ = _decisions("goofspiel", range(1), players=3, num_cards=4)
    assert state.hidden_state(player) is None
    for state, player in _decisions("goofspiel", range(2), players=3, num_cards=4, imp_info=True):
        vector = state.hidden_state(player)
        assert vector is not None and vector.shape == (8,)
        hands = state._hands  # type: ignore[attr-defined]
        for k in (1, 2):
            row = vector[(k - 1) * 4 : k * 4]
            assert np.flatnonzero(row).tolist() == _bits(hands[(player + k) % 3])


def test_openspiel_gives_the_other_players_tensors() -> None:
    for state, player in _decisions("openspiel", range(3), name="leduc_poker")[:12]:
        vector = state.hidden_state(player)
        other = state.observation_tensor(1 - player)  # type: ignore[attr-defined]
        assert vector is not None
        np.testing.assert_array_equal(vector, other)
    (state, player), *_ = _decisions("openspiel", range(1), name="tic_tac_toe")
    assert state.hidden_state(player) is None


@pytest.mark.parametrize(
    ("name", "params", "kind", "size", "classes"),
    [
        ("mexican_train", {"players": 3, "double_set": 9}, "locations", 55, 9),
        ("kuhn_poker", {"players": 3}, "locations", 4, 4),
        ("leduc_poker", {}, "locations", 6, 3),
        ("goofspiel", {"num_cards": 4, "imp_info": True}, "vector", 4, 0),
        ("openspiel", {"name": "leduc_poker"}, "vector", 30, 0),
    ],
)
def test_encoders_declare_the_hidden_state_their_game_fills(
    name: str, params: dict[str, Any], kind: str, size: int, classes: int
) -> None:
    game = make_game(name, **params)
    info = encoder_for(game).info()
    assert info.hidden is not None and (info.hidden.kind, info.hidden.size) == (kind, size)
    assert info.hidden.classes == classes and EncoderInfo.from_json(info.to_json()) == info
    state, player = _decisions(name, range(1), **params)[0]
    assert state.hidden_state(player).shape == (size,)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "params"), [("goofspiel", {"num_cards": 4}), ("openspiel", {"name": "tic_tac_toe"})]
)
def test_games_with_nothing_hidden_declare_no_hidden_state(
    name: str, params: dict[str, Any]
) -> None:
    assert encoder_for(make_game(name, **params)).info().hidden is None


def test_the_generic_encoder_declares_the_hidden_vector_its_game_gives(
    race_to_n: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = race_to_n.RaceGame(target=7)
    assert encoder_for(game).info().hidden is None  # the race hides nothing
    cls = type(game.new_initial_state())
    monkeypatch.setattr(cls, "hidden_state", lambda self, player: np.full(3, player, np.float32))
    hidden = encoder_for(game).info().hidden
    assert hidden is not None and (hidden.kind, hidden.size, hidden.classes) == ("vector", 3, 0)
