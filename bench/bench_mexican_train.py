"""Mexican Train engine speed: random single rounds, determinizations, and the random-number cost.

Printed (one core, double-12, ``rounds=1`` games so one game is one round):

* random single rounds/s at 2, 4 and 8 players, by the **generic loop** (``legal_actions`` then
  ``apply_action_unchecked(legal[int(rng.random() * len(legal))])``, what a search's rollout does
  through the contract) and by the **fast path** ``state.random_playout(rng)`` (identical actions,
  tested), each with decisions/round and decisions/s, and fast / generic. Bar: >= 4,000 rounds/s
  at 4 players. The deal (``new_initial_state``) is counted in both.
* ``clone`` and ``sample_world`` calls/s at 4 players mid-round (half-way through a random round)
  and, the worst case, at the round start (a world = clone + re-deal of every unseen tile); bar:
  >= 50,000 ``sample_world`` calls/s mid-round.
* one random choice per step by ``random.Random.random()`` against ``numpy.random.Generator``
  (``integers`` and ``random``): ns per call, and the ratio — why inner loops take a
  ``random.Random``.
* Commander single rounds/s at 4 players (the heuristic officer, :func:`bench_commander`), once
  ``omega_cluster.games.mexican_train.officers`` exists; skipped before.

Where the time goes (cProfile, 4 players, one round ~105 decisions incl. ~35 draws / passes):

* generic loop: ``legal_plays`` ~35 % (bit-mask walk of ``hand & end_mask[end]`` over the open
  train slots, then a sort), ``_apply_action`` + ``play`` + ``end_turn`` ~40 % (three method
  calls and attribute writes per step), ``legal_actions`` wrapper ~7 %, the deal ~5 %, the driving
  loop the rest;
* fast path: ~90 % in the single ``_play_round`` loop (no calls but ``list.append``,
  ``int.bit_length``, ``rng.random``, ``list.sort``), the deal (90-tile Fisher–Yates + 4 mask
  builds, ~15 µs) ~8 %, ``end_round`` ~3 %. The remaining cost is bytecode dispatch: ~1.3 µs per
  decision.
* ``sample_world`` (mid-round, ~40 unseen tiles, ~10 µs): ~33 % the inlined Fisher–Yates (one
  ``rng.random()`` per unseen tile), ~33 % decoding the opponents' hand masks into the pool, ~25 %
  rebuilding their masks, ~8 % ``clone``. The cost grows with the unseen tiles: a round start
  (75 unseen) is the slowest point.

Timings are noisy when other processes share the cores; ``--quick`` for a short check.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

import numpy as np

from omega_cluster.games import make_game
from omega_cluster.games.mexican_train import MexicanTrainGame, MexicanTrainState

ROUNDS_BAR = 4000.0  # random 4-player single rounds/s (fast path)
WORLDS_BAR = 50000.0  # clone + sample_world calls/s at 4 players mid-round


def _timed(run: Callable[[], int], seconds: float) -> tuple[float, int, int]:
    """Call ``run`` (returns a step count) until ``seconds`` pass: (elapsed, calls, steps)."""
    start, calls, steps = time.perf_counter(), 0, 0
    while True:
        steps += run()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed, calls, steps


def _generic_round(game: MexicanTrainGame, seed: int, rng: random.Random) -> int:
    state = game.new_initial_state(seed)
    rand = rng.random
    while not state.over:
        legal = state.legal_actions()
        state.apply_action_unchecked(legal[int(rand() * len(legal))])
    return len(state.history)


def _fast_round(game: MexicanTrainGame, seed: int, rng: random.Random) -> int:
    state = game.new_initial_state(seed)
    state.random_playout(rng)
    return len(state.history)


def _round_runner(
    fn: Callable[[MexicanTrainGame, int, random.Random], int], game: MexicanTrainGame, seed: int
) -> Callable[[], int]:
    rng, seeds = random.Random(seed), iter(range(10**9))
    return lambda: fn(game, next(seeds), rng)


def bench_rounds(seconds: float) -> None:
    print("random single rounds (double-12, rounds=1, deal included)")
    for players in (2, 4, 8):
        game = make_game("mexican_train", players=players, rounds=1)
        assert isinstance(game, MexicanTrainGame)
        figures = []
        for name, fn in (("generic", _generic_round), ("fast", _fast_round)):
            elapsed, rounds, steps = _timed(_round_runner(fn, game, players), seconds)
            figures.append(rounds / elapsed)
            print(
                f"  {players}p {name:7s}: {rounds / elapsed:8.0f} rounds/s  "
                f"{steps / rounds:5.1f} decisions/round  {steps / elapsed:9.0f} decisions/s"
            )
        bar = f"; bar {ROUNDS_BAR:.0f}: {figures[1] / ROUNDS_BAR:.2f}x" if players == 4 else ""
        print(f"  {players}p fast / generic = {figures[1] / figures[0]:.2f}x{bar}")


def _round_states(count: int, fraction: float) -> list[MexicanTrainState]:
    """4-player double-12 states ``fraction`` of the way through round 0 (by its own length)."""
    game = MexicanTrainGame(players=4)
    states = []
    for seed in range(count):
        full = game.new_initial_state(seed)
        full.random_playout(random.Random(seed), until_round_end=True)
        cut = int(full.round_starts[1] * fraction)
        states.append(game.replay(seed, full.history[:cut]))
    return states


def bench_worlds(seconds: float) -> None:
    for fraction, label in ((0.5, "mid-round"), (0.0, "round start")):
        _bench_worlds(seconds, _round_states(20, fraction), label)


def _bench_worlds(seconds: float, states: list[MexicanTrainState], label: str) -> None:
    unseen = sum(s.unseen_mask(1).bit_count() for s in states) / len(states)
    rng = random.Random(0)
    it = iter(range(10**12))

    def clone() -> int:
        states[next(it) % 20].clone()
        return 1

    def world() -> int:
        i = next(it)
        states[i % 20].sample_world(i % 4, rng)
        return 1

    def clone_then_world() -> int:
        i = next(it)
        states[i % 20].clone().sample_world(i % 4, rng)
        return 1

    print(f"determinizations (4p double-12 {label}, {unseen:.0f} unseen tiles on average)")
    rates = {}
    for name, fn in (("clone", clone), ("sample_world", world), ("clone+sample", clone_then_world)):
        elapsed, calls, _ = _timed(fn, seconds)
        rates[name] = calls / elapsed
        print(f"  {name:13s}: {calls / elapsed:9.0f} calls/s")
    print(
        f"  sample_world / clone = {rates['sample_world'] / rates['clone']:.3f}x; "
        f"bar {WORLDS_BAR:.0f}: {rates['sample_world'] / WORLDS_BAR:.2f}x"
    )


def bench_rng(calls: int) -> None:
    legal = list(range(7))
    rng, gen = random.Random(0), np.random.default_rng(0)
    rand, integers, grand = rng.random, gen.integers, gen.random
    timings = {}
    start = time.perf_counter()
    for _ in range(calls):
        legal[int(rand() * len(legal))]
    timings["random.Random.random"] = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(calls):
        legal[int(integers(len(legal)))]
    timings["Generator.integers"] = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(calls):
        legal[int(grand() * len(legal))]
    timings["Generator.random"] = time.perf_counter() - start
    print("one random choice per step (pick from 7 legal actions)")
    base = timings["random.Random.random"]
    for name, t in timings.items():
        print(f"  {name:21s}: {t / calls * 1e9:6.0f} ns/step  ({t / base:.1f}x random.Random)")


def bench_commander(seconds: float) -> None:
    """Commander single rounds/s at 4 players (filled in by the officers; skipped until then)."""
    try:
        from omega_cluster.games.mexican_train.officers import Commander
    except ImportError:
        print(
            "Commander single rounds/s at 4p: skipped (omega_cluster.games.mexican_train.officers missing)"
        )
        return
    game = make_game("mexican_train", players=4, rounds=1)
    players = [Commander(game) for _ in range(4)]
    rng, seeds = random.Random(0), iter(range(10**9))

    def one_round() -> int:
        state = game.new_initial_state(next(seeds))
        while not state.is_terminal():
            p = state.current_players[0]
            state.apply_action_unchecked(players[p].act(state, p, rng))
        return len(state.history)

    elapsed, rounds, steps = _timed(one_round, seconds)
    print(
        f"Commander single rounds/s at 4p: {rounds / elapsed:.0f} rounds/s, "
        f"{steps / elapsed:.0f} decisions/s"
    )


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    seconds = 0.5 if quick else 3.0
    bench_rng(20_000 if quick else 300_000)
    bench_rounds(seconds)
    bench_worlds(seconds)
    bench_commander(seconds)


if __name__ == "__main__":
    main()
