"""N-tuple tables: lookup, save/load round trip and the one-line refusals, the leaf."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from omega_cluster.games.registry import make_game
from omega_cluster.search.evaluators import Leaf
from omega_cluster.search.ntuple import TableEvaluator, TablesError, TupleTables
from tests.unit.ntuple_helpers import Flat, KuhnInfoSet


def _tables(outputs: int = 1) -> TupleTables:
    t = TupleTables(Flat(), outputs, meta={"game": "kuhn_poker", "games": 3})
    t.weights[:] = np.arange(t.weights.size, dtype=np.float32).reshape(t.weights.shape) / 100
    return t


def test_value_sums_rows_and_counts_repeats() -> None:
    t = _tables(2)
    v = t.value(np.array([0, 7, 7]))
    assert v.shape == (2,)
    np.testing.assert_allclose(v, t.weights[0] + 2 * t.weights[7], rtol=1e-6)
    assert t.fill() == pytest.approx(1.0)
    assert TupleTables(Flat()).fill() == 0.0


def test_save_load_round_trip(tmp_path) -> None:
    t = _tables(2)
    t.save(tmp_path / "t")
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [
        "layout.json",
        "tables.safetensors",
    ]
    back = TupleTables.load(tmp_path / "t", Flat(), game="kuhn_poker")
    np.testing.assert_array_equal(back.weights, t.weights)
    assert back.outputs == 2 and back.meta == {"game": "kuhn_poker", "games": 3}
    layout = json.loads((tmp_path / "t" / "layout.json").read_text())
    assert layout["patterns"] == Flat().describe() and layout["format_version"] == 1


def _refusal(tmp_path, patterns=None, game=None) -> str:
    with pytest.raises(TablesError) as err:
        TupleTables.load(tmp_path / "t", patterns or Flat(), game=game)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_load_refusals_are_one_line(tmp_path) -> None:
    assert "does not exist" in _refusal(tmp_path)
    (tmp_path / "t").mkdir()
    assert "layout.json is missing" in _refusal(tmp_path)
    _tables().save(tmp_path / "t")
    assert "for game 'kuhn_poker', not 'goofspiel'" in _refusal(tmp_path, game="goofspiel")
    assert "families" in _refusal(tmp_path, Flat(6, 5))
    other = Flat()
    other.version = 2
    assert "version 1, this code is version 2" in _refusal(tmp_path, other)
    assert "made by pattern set 'test-flat', not 'test-kuhn-infoset'" in _refusal(
        tmp_path, KuhnInfoSet()
    )
    (tmp_path / "t" / "tables.safetensors").write_bytes(b"not safetensors")
    assert "tables.safetensors is unreadable" in _refusal(tmp_path)
    (tmp_path / "t" / "tables.safetensors").unlink()
    assert "tables.safetensors is missing" in _refusal(tmp_path)
    (tmp_path / "t" / "layout.json").write_text("{broken")
    assert "layout.json is unreadable" in _refusal(tmp_path)


def _decision_state(seed: int = 0):
    game = make_game("kuhn_poker")
    state = game.new_initial_state(seed)
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    return game, state


def test_evaluator_clips_and_normalises() -> None:
    game, state = _decision_state()
    patterns = KuhnInfoSet()
    tables = TupleTables(patterns)
    ev = TableEvaluator(tables, game.num_players)
    np.testing.assert_allclose(ev.seat_values(state), [0.5, 0.5])  # blank: an even split
    a, b = (int(patterns.extract(state, p)[0]) for p in range(2))
    tables.weights[a], tables.weights[b] = 0.6, 0.2
    np.testing.assert_allclose(ev.seat_values(state), [0.75, 0.25])
    tables.weights[a], tables.weights[b] = 1.7, -0.4  # clipped to [0, 1] first
    np.testing.assert_allclose(ev.seat_values(state), [1.0, 0.0])
    leaf = Leaf(state, 0, tuple(state.legal_actions(0)), rng=random.Random(0))
    (evaluation,) = ev.evaluate([leaf])
    assert evaluation.values == (1.0, 0.0) and evaluation.prior is None


def test_evaluator_terminal_and_per_seat_outputs() -> None:
    _game, state = _decision_state()
    patterns = KuhnInfoSet()
    tables = TupleTables(patterns, outputs=2)
    ev = TableEvaluator(tables, 2)
    a, b = (int(patterns.extract(state, p)[0]) for p in range(2))
    tables.weights[a] = (0.8, 0.2)  # seat 0: itself 0.8, seat 1 0.2
    tables.weights[b] = (0.4, 0.6)  # seat 1: itself 0.4, seat 0 0.6
    np.testing.assert_allclose(ev.raw_values(state), [0.7, 0.3])
    while state.current_players:
        state.apply_action(state.legal_actions(state.current_players[0])[0])
    np.testing.assert_allclose(ev.seat_values(state), state.win_shares())
    with pytest.raises(ValueError, match="3 outputs cannot value a 2-player game"):
        TableEvaluator(TupleTables(patterns, outputs=3), 2)
