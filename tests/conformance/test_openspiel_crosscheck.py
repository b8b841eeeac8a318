"""Our native Goofspiel, Kuhn and Leduc engines against OpenSpiel's C++ ones, move for move.

For each game and parameter set, random playouts drive *both* engines with the same action
sequence (chance outcomes included, so action ids must mean the same thing) and, at every node,
require identical who-acts / terminal flags, per-player legal actions, chance outcomes with their
probabilities, and returns at the end. Across every visited state (chance and terminal included) and
every player, our ``information_set_key`` must induce exactly the partition of pyspiel's
``information_state_string``: equal keys <=> equal strings (checked as a bijection between the two).
"""

from __future__ import annotations

import random
from typing import Any

import pyspiel
import pytest

from omega_cluster.games import CHANCE, make_game

PLAYOUTS = 1000

CASES: list[tuple[str, dict[str, Any]]] = [
    ("kuhn_poker", {}),
    ("kuhn_poker", {"players": 3}),
    ("kuhn_poker", {"players": 6}),
    ("leduc_poker", {}),
    ("leduc_poker", {"players": 3}),
    ("leduc_poker", {"players": 4, "starting_player": 2}),
    ("leduc_poker", {"action_mapping": True}),
    ("leduc_poker", {"suit_isomorphism": True, "players": 3}),
    ("goofspiel", {"num_cards": 5}),
    ("goofspiel", {"num_cards": 6, "imp_info": True}),
    ("goofspiel", {"num_cards": 5, "players": 3, "imp_info": True, "points_order": "descending"}),
    (
        "goofspiel",
        {"num_cards": 5, "points_order": "ascending", "returns_type": "point_difference"},
    ),
    ("goofspiel", {"num_cards": 4, "players": 3, "returns_type": "total_points"}),
    ("goofspiel", {"num_cards": 7, "num_turns": 4, "imp_info": True}),
    ("goofspiel", {}),  # 13 cards, random order, win/loss
]


def _id(case: tuple[str, dict[str, Any]]) -> str:
    return case[0] + "".join(f"-{k}={v}" for k, v in case[1].items())


def _step(ours: Any, ref: Any, n: int, rng: random.Random) -> None:
    """Compare one non-terminal node, then apply the same random move to both engines."""
    where = f"history {ours.history}"
    if ref.is_chance_node():
        assert ours.current_players == (CHANCE,), where
        outcomes = sorted(ours.chance_outcomes())
        assert outcomes == sorted(ref.chance_outcomes()), where
        assert list(ours.legal_actions()) == ref.legal_actions(), where
        action = outcomes[rng.randrange(len(outcomes))][0]
        ours.apply_action(action)
        ref.apply_action(action)
        return
    if ref.is_simultaneous_node():
        assert ours.current_players == tuple(range(n)), where
    else:
        assert ours.current_players == (ref.current_player(),), where
    legal = [list(ours.legal_actions(p)) for p in range(n)]
    assert legal == [ref.legal_actions(p) for p in range(n)], where
    if ref.is_simultaneous_node():
        joint = [moves[rng.randrange(len(moves))] for moves in legal]
        ours.apply_joint_action(tuple(joint))
        ref.apply_actions(joint)
    else:
        moves = legal[ref.current_player()]
        action = moves[rng.randrange(len(moves))]
        ours.apply_action(action)
        ref.apply_action(action)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_engine_matches_openspiel(case: tuple[str, dict[str, Any]]) -> None:
    name, params = case
    game, ref_game = make_game(name, **params), pyspiel.load_game(name, params)
    n = game.num_players
    assert game.spec.num_actions == ref_game.num_distinct_actions()
    rng = random.Random(2024)
    key_to_string: list[dict[object, str]] = [{} for _ in range(n)]
    string_to_key: list[dict[str, object]] = [{} for _ in range(n)]
    terminals = 0
    for _ in range(PLAYOUTS):
        ours, ref = game.new_initial_state(), ref_game.new_initial_state()
        while True:
            for p in range(n):
                key, text = ours.information_set_key(p), ref.information_state_string(p)
                assert key_to_string[p].setdefault(key, text) == text, (
                    f"player {p}: one key for two OpenSpiel information states, {ours.history}"
                )
                assert string_to_key[p].setdefault(text, key) == key, (
                    f"player {p}: two keys for one OpenSpiel information state, {ours.history}"
                )
            assert ours.is_terminal() == ref.is_terminal(), f"history {ours.history}"
            if ref.is_terminal():
                assert ours.returns() == tuple(ref.returns()), f"history {ours.history}"
                terminals += 1
                break
            _step(ours, ref, n, rng)
    assert terminals == PLAYOUTS
    # the partition is non-trivial: many information sets were told apart
    assert min(len(keys) for keys in key_to_string) > 3
