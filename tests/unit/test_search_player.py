"""SearchPlayer: the search behind the Player protocol, its registry specs and the arena CLI.

Checks that search players make legal moves on every kind of game (chance, hidden information,
simultaneous moves, many forced moves), that the algorithm follows the game's dynamics, that spec
strings (``ismcts:commander_rollout:400``, ``smmcts:random:1000``, ``search:<leaf>:<sims>`` with
``key=value`` extras) build the right player and that bad ones fail with a clear error, that the
CLI runs a search seat, and that a small search clearly beats a uniform random player on Kuhn and
Leduc poker.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from omega_cluster.cli import main
from omega_cluster.eval.arena import play_match
from omega_cluster.games import make_game
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.players import PlayerSpecError, make_player
from omega_cluster.players.search import ISMCTSPlayer, SearchPlayer, SMMCTSPlayer
from omega_cluster.search import HeuristicEvaluator, RolloutEvaluator, paired_root, tree_root


def first_decision(game: Game, seed: int) -> State:
    rng = random.Random(seed)
    state = game.new_initial_state(seed)
    while state.current_players == (CHANCE,):
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
    return state


# -- legal play on every kind of game -----------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params", "spec", "games", "algorithm"),
    [
        ("kuhn_poker", {}, "ismcts:random:30", 4, "ismcts"),
        ("kuhn_poker", {"players": 3}, "search:heuristic_rollout:20", 3, "ismcts"),
        ("leduc_poker", {}, "search:random:30", 4, "ismcts"),
        ("goofspiel", {"num_cards": 4}, "search:random:40", 4, "smmcts"),
        ("goofspiel", {"num_cards": 4, "imp_info": True}, "smmcts:random:40", 2, "smmcts"),
        ("goofspiel", {"num_cards": 4}, "smmcts:random:40:selection=exp3", 2, "smmcts"),
        ("mexican_train", {"players": 2, "rounds": 1}, "ismcts:random:12", 2, "ismcts"),
    ],
)
def test_search_players_play_legal_games(
    name: str, params: dict[str, Any], spec: str, games: int, algorithm: str
) -> None:
    """The arena applies every move through the checked ``apply_action``: an illegal one raises."""
    game = make_game(name, **params)
    searcher = make_player(spec, game)
    assert isinstance(searcher, SearchPlayer) and searcher.algorithm == algorithm
    others = ["random"] * (game.num_players - 1)
    result = play_match(game, [searcher, *others], games=games, seed=3, rotate_seats=False)
    assert len(result.records) == games
    assert searcher.searches > 0
    last = searcher.last_result
    if last is not None:  # the last move searched: its result describes a legal choice
        assert last.action in last.legal and sum(last.policy) == pytest.approx(1.0)
        assert len(last.visits) == len(last.legal)


def test_commander_rollout_plays_a_mexican_train_round() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    searcher = make_player("ismcts:commander_rollout:3", game)
    assert isinstance(searcher, SearchPlayer)
    result = play_match(game, [searcher, "commander"], games=1, seed=5)
    assert result.records[0].returns in ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5))
    assert searcher.searches > 0
    assert searcher.forced > 0  # forced draws and passes are played without a search


def test_forced_moves_skip_the_search_and_searched_moves_keep_their_result() -> None:
    game = make_game("mexican_train", players=2, rounds=1)
    player = SearchPlayer(game, simulations=6)
    state = game.new_initial_state(1)
    rng = random.Random(0)
    seen_forced = seen_search = False
    while state.current_players and not (seen_forced and seen_search):
        p = state.current_players[0]
        legal = state.legal_actions(p)
        action = player.act(state, p, rng)
        assert action in legal
        if len(legal) == 1:
            seen_forced = True
            assert player.last_result is None
        else:
            seen_search = True
            result = player.last_result
            assert result is not None and result.player == p
            assert result.action == action and result.legal == tuple(legal)
            assert result.diagnostics.simulations == 6
        state.apply_action(action)
    assert seen_forced and seen_search


def test_simultaneous_nodes_search_each_acting_player() -> None:
    game = make_game("goofspiel", num_cards=4)
    state = first_decision(game, seed=2)
    assert len(state.current_players) == 2
    player = SearchPlayer(game, simulations=50)
    for p in state.current_players:
        action = player.act(state, p, random.Random(p))
        assert player.last_result is not None and player.last_result.player == p
        assert action in state.legal_actions(p)


def test_algorithm_follows_the_game_and_can_be_forced() -> None:
    kuhn, goofspiel = make_game("kuhn_poker"), make_game("goofspiel", num_cards=4)
    assert SearchPlayer(kuhn).algorithm == "ismcts"
    assert SearchPlayer(goofspiel).algorithm == "smmcts"
    assert SearchPlayer(kuhn, algorithm="smmcts").algorithm == "smmcts"  # sequential: fine
    with pytest.raises(PlayerSpecError, match="ismcts searches turn-based games; goofspiel"):
        SearchPlayer(goofspiel, algorithm="ismcts")
    with pytest.raises(PlayerSpecError, match="unknown algorithm 'mcts'; allowed: auto, ismcts"):
        SearchPlayer(kuhn, algorithm="mcts")


def test_any_evaluator_serves_as_the_leaf() -> None:
    game = make_game("leduc_poker")
    heuristic = HeuristicEvaluator(lambda state: (0.0, 0.0))
    player = SearchPlayer(game, leaf=heuristic, simulations=20)
    assert player.evaluator is heuristic and player.name == "ismcts:HeuristicEvaluator:20"
    state = first_decision(game, seed=0)
    assert player.act(state, 0, random.Random(0)) in state.legal_actions(0)
    averaged = SearchPlayer(game, leaf="random_rollout", rollouts=3)
    assert isinstance(averaged.evaluator, RolloutEvaluator) and averaged.evaluator.rollouts == 3
    with pytest.raises(PlayerSpecError, match="rollouts applies to the named rollout leaves"):
        SearchPlayer(game, leaf=heuristic, rollouts=2)
    with pytest.raises(PlayerSpecError, match="rollouts must be an int >= 1"):
        SearchPlayer(game, rollouts=0)


# -- spec strings -------------------------------------------------------------------------------
def test_specs_map_positional_arguments_and_extras() -> None:
    kuhn = make_game("kuhn_poker")
    player = make_player("ismcts:random:200:c_uct=2.0", kuhn)
    assert isinstance(player, ISMCTSPlayer)
    assert player.name == "ismcts:random:200"
    assert player.options == {"c_uct": 2.0, "simulations": 200, "temperature": 0.0}
    assert player.search.config.c_uct == 2.0 and player.search.config.simulations == 200  # type: ignore[attr-defined]
    goofspiel = make_game("goofspiel", num_cards=5)
    smm = make_player("smmcts:random:1000", goofspiel)
    assert isinstance(smm, SMMCTSPlayer) and smm.search.config.simulations == 1000  # type: ignore[attr-defined]
    auto = make_player("search:random:30", goofspiel)
    assert auto.algorithm == "smmcts" and auto.name == "smmcts:random:30"  # type: ignore[attr-defined]
    keyword = make_player("search:leaf=heuristic_rollout:simulations=25", kuhn)
    assert keyword.name == "ismcts:heuristic_rollout:25"
    mexican = make_game("mexican_train", players=2, rounds=1)
    assert (
        make_player("ismcts:commander_rollout:400", mexican).name == "ismcts:commander_rollout:400"
    )
    assert make_player("ismcts", kuhn).name == "ismcts:random:400"  # the defaults


def test_mexican_train_options_reach_the_search() -> None:
    """``deduce`` and ``root`` from a spec string: the search samples with the public deductions
    the game's plugin gives and spends its budget by the named root schedule; a round plays to
    the end."""
    from omega_cluster.games.mexican_train.inference import deal_constraints

    game = make_game("mexican_train", players=2, rounds=1)
    player = make_player("ismcts:commander_rollout:12:deduce=true", game)
    config = player.search.config  # type: ignore[attr-defined]
    assert config.world_constraints is deal_constraints
    assert config.root_schedule is tree_root
    assert type(player.evaluator.policy) is Commander  # type: ignore[attr-defined]
    match = play_match(game, [player, "commander"], games=2, seed=3)
    assert len(match.records) == 2
    paired = make_player("ismcts:commander_rollout:40:deduce=true:root=paired", game)
    assert paired.search.config.root_schedule is paired_root  # type: ignore[attr-defined]
    assert len(play_match(game, [paired, "commander"], games=2, seed=6).records) == 2
    assert SearchPlayer(game, root=paired_root).search.config.root_schedule is paired_root  # type: ignore[attr-defined]


def test_rollout_leaves_play_the_plugins_players() -> None:
    """``<name>_rollout`` plays the game's plugin player ``name`` at every seat."""
    mexican = make_game("mexican_train", players=2, rounds=1)
    for leaf in ("commander_rollout", "lieutenant_rollout", "heuristic_rollout"):
        player = make_player(f"ismcts:{leaf}:4", mexican)
        policy = player.evaluator.policy  # type: ignore[attr-defined]
        assert policy.name == leaf.removesuffix("_rollout").replace("heuristic", "commander")
    kuhn = make_game("kuhn_poker")
    rule = make_player("ismcts:heuristic_rollout:4", kuhn).evaluator.policy  # type: ignore[attr-defined]
    assert type(rule).__name__ == "KuhnRulePlayer"


@pytest.mark.parametrize(
    ("spec", "game_name", "problem"),
    [
        ("ismcts:magic:10", "kuhn_poker", r"unknown leaf 'magic'; allowed: random, random_rollout"),
        ("ismcts:random:0", "kuhn_poker", r"simulations must be a positive int .*got 0"),
        ("ismcts:random:-5", "kuhn_poker", r"simulations must be a positive int .*got -5"),
        ("ismcts:random:2.5", "kuhn_poker", r"simulations must be a positive int .*got 2\.5"),
        ("smmcts:random:0", "goofspiel", r"simulations must be a positive int"),
        ("ismcts:random:10:foo=1", "kuhn_poker", r"unknown option\(s\) foo; accepted: simulations"),
        (
            "ismcts:random:10:c_uct=-1",
            "kuhn_poker",
            r"ismcts: .*c_uct must be a finite number >= 0",
        ),
        ("smmcts:random:10:selection=best", "goofspiel", r"smmcts: .*selection"),
        (
            "ismcts:commander_rollout:10",
            "kuhn_poker",
            r"'commander_rollout' needs the game's rule-based player 'commander', which kuhn_poker "
            r"does not have \(its rollout leaves: random, heuristic_rollout\)",
        ),
        ("ismcts:random:10:20", "kuhn_poker", r"too many arguments; ismcts takes leaf:simulations"),
        ("ismcts:random:10", "goofspiel", r"ismcts searches turn-based games"),
        (
            "search:heuristic_rollout:10",
            "openspiel",
            r"heuristic_rollout' needs the game's rule-based",
        ),
        ("ismcts:random:10:deduce=true", "kuhn_poker", r"deduce: 'kuhn_poker' gives no public"),
        (
            "smmcts:random:10:deduce=true",
            "goofspiel",
            r"deduce, belief and root are ISMCTS options",
        ),
        (
            "smmcts:random:10:root=paired",
            "goofspiel",
            r"deduce, belief and root are ISMCTS options",
        ),
        ("ismcts:random:10:root=racing", "kuhn_poker", r"root must be one of tree, paired"),
        ("ismcts:random:10:margin=0.5", "kuhn_poker", r"unknown option\(s\) margin"),
    ],
)
def test_bad_specs_name_the_problem(spec: str, game_name: str, problem: str) -> None:
    game = (
        make_game("openspiel", name="tiny_hanabi")
        if game_name == "openspiel"
        else make_game(game_name, **({"num_cards": 4} if game_name == "goofspiel" else {}))
    )
    with pytest.raises(PlayerSpecError, match=problem):
        make_player(spec, game)


# -- the command line ---------------------------------------------------------------------------
def test_cli_arena_with_a_search_seat(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(
        [
            "arena",
            "game=mexican_train",
            "players=2",
            "seats=ismcts:commander_rollout:3,commander",
            "games=2",
            "rounds=1",
            "quiet=true",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "ismcts:commander_rollout:3" in out and "commander" in out and "2 games" in out


def test_cli_reports_a_bad_search_spec_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["arena", "game=kuhn_poker", "seats=ismcts:random:0,random", "quiet=true"])
    _, err = capsys.readouterr()
    assert status == 2
    assert "simulations must be a positive int" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


# -- strength -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "spec", "games", "floor"),
    [
        ("kuhn_poker", "ismcts:random:100", 1000, 0.05),  # measured: +0.25 chips a game
        ("leduc_poker", "ismcts:random:100", 300, 0.3),  # measured: +1.2 chips a game
    ],
)
def test_search_beats_random_on_poker(name: str, spec: str, games: int, floor: float) -> None:
    """Mean chips won per game by the search against uniform random, seats rotated over shared
    deals: the whole 95% interval must lie above ``floor`` (well below the measured mean)."""
    game = make_game(name)
    result = play_match(game, [spec, "random"], games=games, seed=2026)
    searcher = result.player(spec)
    assert searcher.return_ci.low > floor, searcher
