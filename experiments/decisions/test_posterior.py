"""``experiments/decisions/posterior.py``: the chain over whole Mexican Train deals that the
decision screen's ``posterior:`` spec draws its worlds from (run with ``python -m pytest
experiments/decisions``; not part of ``make test``). Its state space is right (the real deal
replays with no Commander mismatch: energy 0) and what it returns are worlds of the player's
information set that replay the public round legally."""

from __future__ import annotations

import random

from experiments.decisions.posterior import CommanderPosterior
from omega_cluster.games import make_game
from omega_cluster.games.mexican_train.officers import Commander


def test_the_real_deal_has_energy_zero_and_the_worlds_keep_the_information_set() -> None:
    game = make_game("mexican_train", players=4, rounds=1)
    commander = Commander(game)
    state = game.new_initial_state(5)
    rng = random.Random(5)
    for _ in range(24):
        state.apply_action(commander.act(state, state.current_players[0], rng))
    player = state.current_players[0]
    chain = CommanderPosterior(state, player, commander)
    energy, replayed = chain.energy(chain.true_tiles)
    assert energy == 0.0 and replayed.hands == state.hands
    worlds = chain.sample(8, 3000, 3.0, random.Random(1))
    assert worlds and chain.final_energy < 20.0  # a legal deal was found
    key = state.information_set_key(player)
    for world in worlds:
        assert world.information_set_key(player) == key
        assert world.history == state.history
    assert len({tuple(w.hands) for w in worlds}) > 1  # the chain moves
