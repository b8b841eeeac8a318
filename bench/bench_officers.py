"""Speed of the Mexican Train officers: single 4-player double-12 rounds per second.

Each officer plays all four seats of ``make_game("mexican_train", players=4, rounds=1)`` rounds
through the checked ``apply_action`` (the arena's loop, without its bookkeeping). Printed per
officer: rounds/s, decisions/s (every call of ``act``), the share of decisions with a real choice
(more than one legal action; the others return at once) and microseconds per such choice, and
the rounds/s ratio against Ensign (uniform random, the reference measured in the same run).
The Commander matters most: it is the rollout policy of ISMCTS's rollout leaf, so
its compiled playouts (``Commander.playout_returns``, numba: the same moves, whole rounds inside
one compiled call) are timed on the same deals too, as a ratio to the Python Commander.

Timings are noisy when other processes share the cores; ``--quick`` runs a short check.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass

from omega_cluster.games import make_game
from omega_cluster.games.api import Game
from omega_cluster.games.mexican_train.officers import Commander, Lieutenant
from omega_cluster.games.player import Player, RandomPlayer


@dataclass(frozen=True)
class Speed:
    """One officer's figures over one timed batch of rounds."""

    rounds: int
    seconds: float
    decisions: int  # calls of act
    choices: int  # decisions with more than one legal action
    choice_seconds: float  # time spent in act on those

    @property
    def rounds_per_s(self) -> float:
        return self.rounds / self.seconds

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds


def _measure(game: Game, player: Player, seconds: float, seed: int) -> Speed:
    """Play rounds for about ``seconds``; the same deals for every officer."""
    rng = random.Random(seed)
    clock = time.perf_counter
    rounds = decisions = choices = 0
    choice_seconds = 0.0
    start = clock()
    while clock() - start < seconds:
        state = game.new_initial_state(seed + rounds)
        while not state.is_terminal():
            p = state.current_players[0]
            many = len(state.legal_actions(p)) > 1
            t = clock()
            action = player.act(state, p, rng)
            if many:
                choice_seconds += clock() - t
                choices += 1
            state.apply_action(action)
            decisions += 1
        rounds += 1
    return Speed(rounds, clock() - start, decisions, choices, choice_seconds)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    seconds = 1.0 if quick else 6.0
    game = make_game("mexican_train", players=4, rounds=1)
    officers: list[tuple[str, Player]] = [
        ("ensign", RandomPlayer(game)),
        ("lieutenant", Lieutenant(game)),
        ("commander", Commander(game)),
    ]
    print(f"mexican_train 4p double-12 single rounds, all seats one officer, ~{seconds:g} s each")
    print(f"{'officer':<12}{'rounds/s':>10}{'decisions/s':>13}{'choices':>9}"
          f"{'us/choice':>11}{'vs ensign':>11}")  # fmt: skip
    reference = python = 0.0
    for name, player in officers:
        s = _measure(game, player, seconds, seed=1000)
        reference = reference or s.rounds_per_s
        python = s.rounds_per_s
        per_choice = 1e6 * s.choice_seconds / max(1, s.choices)
        print(
            f"{name:<12}{s.rounds_per_s:>10.0f}{s.decisions_per_s:>13.0f}"
            f"{s.choices / s.decisions:>9.0%}{per_choice:>11.1f}{s.rounds_per_s / reference:>10.2f}x"
        )
    compiled = Commander(game)
    if not compiled.compiled:
        print("commander, compiled playouts: numba not installed")
        return
    rate = _compiled_rounds(game, compiled, seconds, seed=1000)
    print(
        f"commander, compiled playouts: {rate:.0f} rounds/s, {rate / python:.1f}x the Python "
        f"Commander, {rate / reference:.2f}x ensign"
    )


def _compiled_rounds(game: Game, commander: Commander, seconds: float, seed: int) -> float:
    """Whole Commander rounds through ``playout_returns`` (the same deals as ``_measure``)."""
    rng = random.Random(seed)
    commander.playout_returns(game.new_initial_state(seed), rng)  # load the compiled code
    clock = time.perf_counter
    rounds = 0
    start = clock()
    while clock() - start < seconds:
        returns = commander.playout_returns(game.new_initial_state(seed + rounds), rng)
        assert returns is not None
        rounds += 1
    return rounds / (clock() - start)


if __name__ == "__main__":
    main()
