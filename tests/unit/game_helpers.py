"""Helpers shared by the small-game tests (poker, Goofspiel), imported as a plain module
(``tests/unit`` is on ``sys.path`` under pytest's default import mode).

:func:`sampled_worlds` draws determinizations and checks each keeps the sampler's view;
:func:`mean_return_vs_random` is a minimal arena for the rule-based baselines;
:func:`assert_spec_refused` checks a bad player spec is refused in one line.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator

import pytest

from omega_cluster.games.api import Game, State
from omega_cluster.games.player import Player, RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import PlayerSpecError, make_player


def sampled_worlds(state: State, player: int, rng: random.Random, count: int) -> Iterator[State]:
    """``count`` worlds drawn by ``state.sample_world(player, rng)``, each asserted to keep
    ``player``'s information set key and observation."""
    for _ in range(count):
        world = state.sample_world(player, rng)
        assert world.information_set_key(player) == state.information_set_key(player)
        assert world.observation(player) == state.observation(player)
        yield world


def mean_return_vs_random(game: Game, player: Player, *, games: int, seed: int) -> float:
    """Mean return of ``player`` against random players, its seat rotating; every move it makes
    is asserted legal. Chance outcomes are drawn uniformly by index (the games here have uniform
    chance); simultaneous nodes ask every seat, in seat order."""
    rng = random.Random(seed)
    n = game.num_players
    results = []
    for i in range(games):
        seat = i % n
        players: list[Player] = [RandomPlayer(game) for _ in range(n)]
        players[seat] = player
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                continue
            acting = state.current_players
            joint = tuple(players[p].act(state, p, rng) for p in acting)
            for p, action in zip(acting, joint, strict=True):
                assert action in state.legal_actions(p), (p, action)
            if len(joint) == 1:
                state.apply_action(joint[0])
            else:
                state.apply_joint_action(joint)
        results.append(state.returns()[seat])
    return statistics.fmean(results)


def assert_spec_refused(spec: str, game_name: str, message: str) -> None:
    """``spec`` on the game ``game_name`` is a :class:`PlayerSpecError` matching ``message``,
    in one line."""
    with pytest.raises(PlayerSpecError, match=message) as err:
        make_player(spec, make_game(game_name))
    assert "\n" not in str(err.value)
