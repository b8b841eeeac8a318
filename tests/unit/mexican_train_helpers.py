"""Helpers shared by the Mexican Train tests (rules, properties, officers), imported as a plain
module (``tests/unit`` is on ``sys.path`` under pytest's default import mode).

Tiles are named ``"hi|lo"``; :func:`rig` sets the hands and boneyard of a fresh round-0 state
(engine 12|12) by hand; :func:`random_moves` drives a state with the fast playout's random draw.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState, tile_set

TILES = tile_set(12)
DRAW, PASS = TILES.draw_action, TILES.pass_action


def tile(name: str) -> int:
    hi, lo = (int(x) for x in name.split("|"))
    return TILES.index(hi, lo)


def play(name: str, slot: int) -> int:
    return TILES.encode_action(tile(name), slot)


def rig(
    hands: Sequence[Sequence[str]], boneyard: Sequence[str] = (), **params: Any
) -> MexicanTrainState:
    """Round 0 (engine 12|12) with the given hands; ``boneyard[-1]`` is drawn first."""
    params.setdefault("players", len(hands))
    params.setdefault("rounds", 1)
    state = MexicanTrainGame(**params).new_initial_state(0)
    state.hands = [sum(1 << tile(t) for t in h) for h in hands]
    state.boneyard = [tile(t) for t in boneyard]
    return state


def random_moves(state: MexicanTrainState, rng: random.Random, steps: int | None = None) -> int:
    """Play up to ``steps`` random moves (to the end when None), each drawn as the fast playout
    does (``legal[int(rng.random() * len(legal))]``); returns how many were played."""
    played = 0
    while not state.is_terminal() and (steps is None or played < steps):
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.random() * len(legal))])
        played += 1
    return played


def random_state(game: MexicanTrainGame, seed: int, steps: int) -> MexicanTrainState:
    """The state after up to ``steps`` random moves from the deal of ``seed``."""
    state = game.new_initial_state(seed)
    random_moves(state, random.Random(seed), steps)
    return state


def play_out(state: MexicanTrainState, rng: random.Random) -> MexicanTrainState:
    """``state`` played to the end with random moves."""
    random_moves(state, rng)
    return state


def random_decisions(
    game: MexicanTrainGame, seeds: Sequence[int], rng: random.Random
) -> Iterator[tuple[MexicanTrainState, int, list[int]]]:
    """Every decision of the games dealt from ``seeds``: yields ``(state, player, legal)``, then
    plays ``rng.choice(legal)`` (the caller may inspect the state but must not move it)."""
    for seed in seeds:
        state = game.new_initial_state(seed)
        while not state.is_terminal():
            player = state.current_player
            legal = state.legal_actions(player)
            yield state, player, legal
            state.apply_action(rng.choice(legal))
