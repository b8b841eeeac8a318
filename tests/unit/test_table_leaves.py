"""The leaves hand, tables and tables+hand: their names in every search spec, their refusals and
the blend's arithmetic."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from game_helpers import assert_spec_refused
from mexican_train_helpers import random_state

from bench.bench_ntuple import CONTRASTS, contrast_specs
from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.evaluation import HandValue
from omega_cluster.games.mexican_train.ntuple import MexicanTrainPatterns
from omega_cluster.games.registry import make_game
from omega_cluster.players.lookahead import LookaheadPlayer
from omega_cluster.players.registry import PlayerSpecError, make_player
from omega_cluster.players.search import SearchPlayer, build_leaf_evaluator
from omega_cluster.players.table_leaves import TablesHandEvaluator, blend_values
from omega_cluster.search.evaluators import HeuristicEvaluator, Leaf
from omega_cluster.search.ntuple import TableEvaluator, TupleTables


def _tables(tmp_path: Path, game: Game, *, name: str = "mt", seed: int = 0) -> Path:
    """Tables of small random weights for ``game``, saved under ``tmp_path / name``."""
    tables = TupleTables(MexicanTrainPatterns(game), meta={"game": game.spec.name})
    rng = np.random.default_rng(seed)
    tables.weights[:] = rng.uniform(0.0, 0.05, tables.weights.shape).astype(np.float32)
    tables.save(tmp_path / name)
    return tmp_path / name


def _leaf(state: State) -> Leaf:
    p = state.current_players[0]
    return Leaf(state, p, tuple(state.legal_actions(p)), random.Random(0))


def _decisions(game: MexicanTrainGame, count: int) -> list[State]:
    states = [random_state(game, seed, 6 + 3 * seed) for seed in range(4 * count)]
    return [s for s in states if not s.is_terminal()][:count]


def test_the_hand_leaf_is_the_games_hand_value() -> None:
    game = MexicanTrainGame(players=4, rounds=1)
    leaf = build_leaf_evaluator(game, "hand")
    assert isinstance(leaf, HeuristicEvaluator) and leaf.name == "hand"
    value = HandValue(game)
    states = _decisions(game, 5)
    for state, ev in zip(states, leaf.evaluate([_leaf(s) for s in states]), strict=True):
        assert ev.values == pytest.approx(value(state)) and ev.prior is None


def test_the_tables_leaf_reads_the_saved_tables(tmp_path: Path) -> None:
    game = MexicanTrainGame(players=2, rounds=1)
    directory = _tables(tmp_path, game)
    leaf = build_leaf_evaluator(game, "tables", tables=str(directory))
    assert isinstance(leaf, TableEvaluator)
    reference = TableEvaluator(TupleTables.load(directory, MexicanTrainPatterns(game)), 2)
    state = _decisions(game, 1)[0]
    assert leaf.evaluate([_leaf(state)])[0].values == pytest.approx(reference.seat_values(state))


def test_blend_arithmetic() -> None:
    # centred points (1, -1) over scale 2 at weight 0.5: ±0.25, then clipped and normalised
    assert blend_values((0.6, 0.4), (3.0, 1.0), 0.5, 2.0) == pytest.approx((0.85, 0.15))
    assert blend_values((0.9, 0.1), (5.0, 1.0), 1.0, 1.0) == pytest.approx((1.0, 0.0))
    assert blend_values((0.0, 0.0, 0.0), (0.0, 0.0, 3.0), 0.0, 1.0) == pytest.approx((1 / 3,) * 3)
    assert blend_values((0.5, 0.3, 0.2), (9.0, 9.0, 9.0), 0.25, 2.0) == pytest.approx(
        (0.5, 0.3, 0.2)
    )


def test_the_blend_adds_quarter_strength_hand_terms_to_the_tables(tmp_path: Path) -> None:
    game = MexicanTrainGame(players=4, rounds=1)
    directory = _tables(tmp_path, game, seed=3)
    blend = build_leaf_evaluator(game, "tables+hand", tables=str(directory))
    assert isinstance(blend, TablesHandEvaluator) and blend.weight == 0.25
    tables = build_leaf_evaluator(game, "tables", tables=str(directory))
    value = HandValue(game)
    states = _decisions(game, 4)
    leaves = [_leaf(s) for s in states]
    for state, got, plain in zip(
        states, blend.evaluate(leaves), tables.evaluate(leaves), strict=True
    ):
        points = np.array(value.points(state))
        want = np.clip(
            np.array(plain.values) + 0.25 * (points - points.mean()) / value.weights.scale, 0, 1
        )
        assert got.values == pytest.approx(tuple(want / want.sum()))
    zero = build_leaf_evaluator(game, "tables+hand", tables=str(directory), hand=0.0)
    assert [e.values for e in zero.evaluate(leaves)] == pytest.approx(
        [e.values for e in tables.evaluate(leaves)]
    )


def test_the_leaves_play_in_lookahead_and_ismcts_specs(tmp_path: Path) -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    directory = _tables(tmp_path, game)
    specs = [
        "lookahead:hand:1:worlds=2",
        f"lookahead:tables:1:worlds=2:tables={directory}",
        f"lookahead:tables+hand:2:worlds=2:tables={directory}:hand=0.5",
        f"ismcts:tables+hand:30:tables={directory}",
        "search:hand:30",
    ]
    players = [make_player(spec, game) for spec in specs]
    assert all(isinstance(p, LookaheadPlayer) for p in players[:3])
    blend = players[2].evaluator  # type: ignore[attr-defined]
    assert isinstance(blend, TablesHandEvaluator) and blend.weight == 0.5
    for searcher in players[3:]:
        assert isinstance(searcher, SearchPlayer)
        assert searcher.search.fast is None and "compiled" in searcher.search.fast_reason  # type: ignore[attr-defined]
    state = _decisions(game, 1)[0]
    p = state.current_players[0]
    for player in players:
        assert player.act(state, p, random.Random(1)) in state.legal_actions(p)


@pytest.mark.parametrize(
    ("spec", "game_name", "message"),
    [
        ("lookahead:hand:1", "kuhn_poker", r"kuhn_poker does not give .*games with one: .*mexican"),
        ("ismcts:hand:10", "leduc_poker", r"leduc_poker does not give .*hand_value hook"),
        ("lookahead:tables:1", "mexican_train", r"leaf 'tables' needs the tables' directory"),
        ("ismcts:tables+hand:10", "mexican_train", r"needs the tables' directory: add tables="),
        ("lookahead:tables:1:tables=/no/such/dir", "mexican_train", r"tables=/no/such/dir: "),
        ("lookahead:hand:1:hand=0.5", "mexican_train", r"hand=<weight> applies to leaf"),
        ("lookahead:hand:1:tables=/x", "mexican_train", r"tables=<dir> applies to leaves"),
        ("ismcts:commander_rollout:10:hand=0.5", "mexican_train", r"apply to the leaves hand"),
    ],
)
def test_bad_leaves_are_refused_in_one_line(spec: str, game_name: str, message: str) -> None:
    assert_spec_refused(spec, game_name, message)


def test_tables_of_another_game_or_table_size_are_refused(tmp_path: Path) -> None:
    game = MexicanTrainGame(players=2, rounds=1)
    foreign = TupleTables(MexicanTrainPatterns(game), meta={"game": "goofspiel"})
    foreign.save(tmp_path / "foreign")
    with pytest.raises(PlayerSpecError, match=r"trained for game 'goofspiel'") as err:
        build_leaf_evaluator(game, "tables", tables=str(tmp_path / "foreign"))
    assert "\n" not in str(err.value)
    four = TupleTables(MexicanTrainPatterns(game), meta={"game": "mexican_train", "players": 4})
    four.save(tmp_path / "four")
    with pytest.raises(PlayerSpecError, match=r"trained for 4 players, this game has 2"):
        build_leaf_evaluator(game, "tables", tables=str(tmp_path / "four"))
    three = TupleTables(MexicanTrainPatterns(game), outputs=3, meta={"game": "mexican_train"})
    three.save(tmp_path / "three")
    with pytest.raises(PlayerSpecError, match=r"3 outputs cannot value a 2-player game"):
        build_leaf_evaluator(game, "tables", tables=str(tmp_path / "three"))


def test_the_benchs_contrasts_name_players_that_build(tmp_path: Path) -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    directory = str(_tables(tmp_path, game))
    for name in CONTRASTS:
        a, b = contrast_specs(name, 2, 3, directory)
        assert a != b and all(isinstance(make_player(s, game), LookaheadPlayer) for s in (a, b))
    assert contrast_specs("deeper-hand", 2, 3, directory)[1] == "lookahead:hand:3:worlds=3"
    assert contrast_specs("hand-depth", 1, 8, None) == (
        "lookahead:hand:1:worlds=8",
        "lookahead:hand:2:worlds=8",
    )
    with pytest.raises(UserError, match=r"contrast 'blend' needs --tables <dir>"):
        contrast_specs("blend", 1, 8, None)
