"""The project's ISMCTS on OpenSpiel's trick-taking games, through the adapter, against OpenSpiel's
own C++ ``ISMCTSBot`` on the same positions; and how often ``sample_world`` leaves a position
without a world.

Speed. ``ismcts:random:200`` (the search player users build: the Python loop over the adapter,
one random rollout per leaf) on ``openspiel:hearts`` with ``pass_cards=false`` and on
``openspiel:oh_hell`` (its defaults: three players, a random number of tricks), at mid-game
positions (hearts: one to six tricks played; oh_hell: the bids made and at least one card
played), against ``pyspiel.ISMCTSBot`` with one random rollout per leaf, the same simulations and
UCT constant, on the very same pyspiel states: CPU milliseconds per move. Each side's figure is
the best of three passes over the positions, the two sides alternating (a loaded machine slows
both). Bar: at least a third of C++'s speed.

Coverage. At 1,000 positions spread over every phase after the deal, of hearts without and with
passing and of oh_hell, ``sample_world`` draws a world for the player to move, and the world is
replayed against everything that player saw (the adapter's own check,
:func:`omega_cluster.games.openspiel.knowledge.replay_check`). A position counts against the bar
(0) when no world came back or the world fails the check.

    python -m bench.bench_openspiel_search            # records docs/results/bench_openspiel_search.json
    python -m bench.bench_openspiel_search --quick    # fewer positions, records nothing
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench.results import Figure, record
from omega_cluster.games import make_game
from omega_cluster.games.openspiel import OpenSpielState
from omega_cluster.games.openspiel.knowledge import replay_check
from omega_cluster.players.registry import make_player
from omega_cluster.search._defaults import C_UCT

SIMULATIONS = 200
COMMAND = "python -m bench.bench_openspiel_search"
SPEED = (  # (label, pyspiel name, parameters)
    ("Hearts", "hearts", {"pass_cards": False}),
    ("Oh Hell", "oh_hell", {}),
)
COVERAGE = (
    ("hearts, pass_cards=false", "hearts", {"pass_cards": False}),
    ("hearts", "hearts", {}),
    ("oh_hell", "oh_hell", {}),
)


def positions(
    game: Any, count: int, seed: int, decisions: Callable[[OpenSpielState, random.Random], int]
) -> list[OpenSpielState]:
    """``count`` decision positions, each ``decisions(state, rng)`` random decisions after the
    deal of a random game (chance outcomes drawn by their probability)."""
    rng = random.Random(seed)
    out: list[OpenSpielState] = []
    while len(out) < count:
        state, made, target = game.new_initial_state(), 0, -1
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                pick, at = rng.random(), 0
                while at < len(outcomes) - 1 and pick >= outcomes[at][1]:
                    pick -= outcomes[at][1]
                    at += 1
                state.apply_action(outcomes[at][0])
                continue
            if target < 0:
                target = decisions(state, rng)
            if made >= target:
                out.append(state)
                break
            state.apply_action(rng.choice(state.legal_actions()))
            made += 1
    return out


def _midgame(state: OpenSpielState, rng: random.Random) -> int:
    """Hearts: 4-23 cards played; oh_hell: the bids, then at least one card and a trick short of
    the end."""
    if state.game.params["name"] == "hearts":
        return rng.randrange(4, 24)
    n, tricks = state.game.num_players, state.history[0]
    return n + rng.randrange(1, max(2, n * tricks - n + 1))


def _anywhere(state: OpenSpielState, rng: random.Random) -> int:
    """Any decision after the deal (hearts' passes, oh_hell's bids included)."""
    n = state.game.num_players
    if state.game.params["name"] == "hearts":
        return rng.randrange(12 * int(state.history[0] != 0) + 52)
    return rng.randrange(n + n * state.history[0])


def _best_of_three(sides: Sequence[Callable[[], None]]) -> list[float]:
    best = [float("inf")] * len(sides)
    for _ in range(3):
        for i, side in enumerate(sides):
            start = time.process_time()
            side()
            best[i] = min(best[i], time.process_time() - start)
    return best


def speed(label: str, name: str, params: dict[str, Any], count: int) -> Figure:
    import pyspiel

    game = make_game(f"openspiel:{name}", **params)
    states = positions(game, count, seed=5, decisions=_midgame)
    player = make_player(f"ismcts:random:{SIMULATIONS}", game)
    player.act(states[0], states[0].current_players[0], random.Random(0))  # compile, warm

    def ours() -> None:
        for i, s in enumerate(states):
            player.act(s, s.current_players[0], random.Random(i))

    def cpp() -> None:
        for i, s in enumerate(states):
            bot = pyspiel.ISMCTSBot(i, pyspiel.RandomRolloutEvaluator(1, i), C_UCT, SIMULATIONS,
                                    -1, pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT,
                                    False, False)  # fmt: skip
            bot.step(s.pyspiel_state)

    t_ours, t_cpp = (1e3 * t / count for t in _best_of_three([ours, cpp]))
    ratio = t_cpp / t_ours
    print(f"  {label}: ours {t_ours:.2f} ms a move, OpenSpiel C++ ISMCTSBot {t_cpp:.2f} ms "
          f"-> {ratio:.2f}x C++ speed ({count} positions)", flush=True)  # fmt: skip
    where = ", ".join(f"{k}={v}" for k, v in params.items())
    return Figure(
        name=f"ISMCTS ms per move, {SIMULATIONS} simulations, 1 random rollout per leaf, "
        f"{label} mid-game (openspiel:{name}{', ' + where if where else ''}; "
        f"{count} positions), CPU time",
        figure=f"ours {t_ours:.2f} ms",
        reference=f"OpenSpiel C++ ISMCTSBot {t_cpp:.2f} ms",
        ratio=f"{ratio:.2f}× C++ speed (bar ≥ 0.33×)",
        command=COMMAND,
    )


def coverage(name: str, params: dict[str, Any], count: int) -> tuple[int, int]:
    """(positions without a world, positions whose world fails the check) of ``count``."""
    game = make_game(f"openspiel:{name}", **params)
    missing = failing = 0
    for i, truth in enumerate(positions(game, count, seed=7, decisions=_anywhere)):
        player = truth.current_players[0]
        try:
            world = truth.sample_world(player, random.Random(i))
        except Exception as err:  # no world: what the bar counts
            missing += 1
            print(f"    no world at {truth.history}: {err}", flush=True)
            continue
        known = truth._knowledge(player)
        reach = replay_check(game.pyspiel_game, world.history, known, game._info_kind)
        if reach.index <= known.length:
            failing += 1
            print(f"    a world fails the check at {truth.history}", flush=True)
    return missing, failing


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    quick = "--quick" in args
    count, checked = (4, 100) if quick else (20, 1000)
    figures = [speed(label, name, params, count) for label, name, params in SPEED]
    rows, bad = [], 0
    for label, name, params in COVERAGE:
        missing, failing = coverage(name, params, checked)
        bad += missing + failing
        print(f"  {label}: {missing} of {checked} positions without a world, {failing} with a "
              "world that fails the check", flush=True)  # fmt: skip
        rows.append(f"{label} {missing + failing}")
    figures.append(
        Figure(
            name=f"positions without a consistent world (sample_world for the player to move, "
            f"every world replay-checked), {checked:,} positions per game",
            figure=" / ".join(rows),
            reference="",
            ratio=f"bar 0: {'met' if bad == 0 else 'not met'}",
            command=COMMAND,
        )
    )
    record("bench_openspiel_search", figures, quick=quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
