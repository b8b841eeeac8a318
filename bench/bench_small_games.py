"""Random-playout speed of the native Leduc poker and Goofspiel-13 against OpenSpiel's C++ engines.

Both engines are driven by the *same* Python loop (:func:`_playouts`): at a chance node sample an
outcome by its probability, at a simultaneous node draw a random legal bid per player and apply the
joint action, otherwise apply a random legal action; until the end. Our engine goes through the
checked ``apply_action`` / ``apply_joint_action`` (the legality test included), pyspiel through its
pybind11 calls. Printed: playouts/s of each, and ours / pyspiel (the bar is >= 1.0x for both games).

Where the time goes (cProfile, our engine; shares of the total, the driving loop included):

* Leduc (5k playouts): the loop itself ~35 %, ``apply_action`` (inline legality test) ~20 % plus
  the rules it calls, ``_bet`` ~15 % and ``_deal`` ~10 %; ``legal_actions``, ``chance_outcomes``,
  ``is_terminal`` and ``_resolve`` a few % each. What made it fast: ``apply_action`` tests the
  common legal cases inline instead of the generic wrapper, chance outcomes are cached per deck bit
  mask, legal-move lists are precomputed per (facing a bet, raise allowed), showdown strength is a
  [board][card] table, heads-up showdowns are unrolled, and the state has 12 slots (pot, round and
  deal position are derived), so ``new_initial_state``/``clone`` cost ~0.2-0.3 us.
* Goofspiel-13 (3k playouts): the loop ~43 %, ``apply_joint_action`` ~22 % (the two-player
  turn is played inline, scoring and the next chance node included; only the last turn goes
  through ``_play_turn``), the chance ``apply_action`` ~7 % (``_deal`` inlined),
  ``chance_outcomes`` ~7 %, ``legal_actions`` ~6 %, the ``is_*`` queries ~5 % (slot reads). The
  biggest single win was memory, not bytecode: the old tables (one legal list and one outcome
  list per 14-bit mask, a fresh ``(card, p)`` tuple in every entry: ~11 MB) missed the CPU caches
  on every call; legal moves and outcomes are now two 128-entry tables (low and high 7 bits of
  the mask, concatenated: the concatenation is the fresh list the caller gets) with shared tuples,
  which alone took the ratio from ~1.05x to ~1.3x. Returns are computed on demand, the state has
  8 slots, and ``new_initial_state`` costs ~0.3 us.
* pyspiel pays a pybind11 round trip per call (~50 ns for ``is_terminal``, ~90-180 ns for
  ``legal_actions``, ~170-380 ns for ``chance_outcomes``), so a lean Python step is competitive.

Both engines run in one process, in alternating batches: pyspiel measures *faster* that way than
alone (~36k against ~27k Goofspiel playouts/s here: the loop's call sites, specialised by CPython
3.11 for our classes first, seem to suit the pybind11 calls better), so the ratio is on the strict
side. Timings are noisy when other processes share the cores (about +-5 % from run to run); run
with ``--quick`` for a short check.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from typing import Any

from omega_cluster.games import make_game


def _playouts(
    new_state: Callable[[], Any], joint: str, players: tuple[int, ...], count: int, seed: int
) -> int:
    """Play ``count`` random games; returns the number of steps (the same loop for both engines)."""
    rng = random.Random(seed)
    rand = rng.random
    steps = 0
    for _ in range(count):
        state = new_state()
        while not state.is_terminal():
            if state.is_chance_node():
                r = rand()
                outcomes = state.chance_outcomes()
                action = outcomes[-1][0]
                for a, p in outcomes:
                    r -= p
                    if r <= 0.0:
                        action = a
                        break
                state.apply_action(action)
            elif state.is_simultaneous_node():
                bids = []
                for p in players:
                    legal = state.legal_actions(p)
                    bids.append(legal[int(rand() * len(legal))])
                getattr(state, joint)(bids)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rand() * len(legal))])
            steps += 1
    return steps


def _rates(
    engines: list[tuple[Callable[[], Any], str]],
    players: tuple[int, ...],
    seconds: float,
    batch: int,
) -> list[float]:
    """Playouts per second of each engine: batches of ``batch`` playouts alternate between the
    engines (so a load change on a shared machine hits both) and the best batch counts."""
    best = [0.0] * len(engines)
    deadline = time.perf_counter() + seconds
    round_ = 0
    while time.perf_counter() < deadline or round_ < 3:
        for i, (new_state, joint) in enumerate(engines):
            start = time.perf_counter()
            _playouts(new_state, joint, players, batch, seed=round_)
            best[i] = max(best[i], batch / (time.perf_counter() - start))
        round_ += 1
    return best


def main(argv: list[str] | None = None) -> None:
    import pyspiel

    args = sys.argv[1:] if argv is None else argv
    seconds = 3.0 if "--quick" in args else 12.0
    print(f"random playouts/s, same Python loop, engines alternating ({seconds:.0f} s per game)")
    print(f"{'game':<24}{'ours':>12}{'pyspiel':>12}{'ratio':>9}")
    for name, label in (("leduc_poker", "leduc_poker"), ("goofspiel", "goofspiel (13 cards)")):
        ours, ref = make_game(name), pyspiel.load_game(name)
        players = tuple(range(ours.num_players))
        engines = [
            (ours.new_initial_state, "apply_joint_action"),
            (ref.new_initial_state, "apply_actions"),
        ]
        batch = 2000 if name == "leduc_poker" else 400
        ours_rate, ref_rate = _rates(engines, players, seconds, batch)
        print(f"{label:<24}{ours_rate:>12,.0f}{ref_rate:>12,.0f}{ours_rate / ref_rate:>8.2f}x")


if __name__ == "__main__":
    main()
