"""The compiled search path against the network's own speed, the Python path and OpenSpiel's C++
on the same games (OpenSpiel's own card games through the adapter: ``bench/bench_openspiel_search.py``).

Every figure is a ratio against a reference measured in the same run, one torch thread (a
self-play actor has one core), CPU time of this process where it says so:

* **leaves** — ISMCTS-PUCT with the network leaf on Mexican Train 2p and 4p (single rounds), K
  searches at once through :func:`omega_cluster.search.fast.driver.run_batched` (one forward pass
  per batch of leaves gathered across the K searches), network leaves/s against the raw forward
  pass of the same model on batches of the same size (inputs encoded beforehand): the 165k-
  parameter MLP (``hidden_size=92``) and the default run's model (``conf/model/default.yaml``).
  The bar is 0.5×: the search around the network costs at most what the network does.
* **selfplay** — self-play with a run's model and search settings (:data:`SELFPLAY_RUNS`: the
  default run, ``conf/run/default.yaml``, and Connect Four from nothing through the OpenSpiel
  adapter, ``run=zero game=connect_four``; named in the row; K = ``cluster.concurrent_games``),
  the same seeded games on the Python loop and on the compiled path (each path warmed first;
  the compiled path plays them four times, its time summed), decisions/s (bars 3× and 2×: a
  network leaf's forward pass is a cost the compiled tree cannot cut), and, with a network
  leaf, the limit the forward pass sets (decisions per second of forward time alone).
* **openspiel** — whole games of Kuhn and Leduc poker (two players), 1,000 simulations a move,
  UCT c = 1.4, one random rollout per leaf: the search player users build
  (``ismcts:random:1000``, the compiled path) at both seats against OpenSpiel's C++
  ``ISMCTSBot`` at both seats of the same game, the two in alternating rounds of seeded deals,
  CPU time per searched move; the ratio is C++'s time over ours (bar 1×). A small game's
  simulations are cheap, so this is where a fixed cost per move around the compiled tree would
  show (the driver sets the tree up once per search object).
* **deductions** — the 4-player search player with the public deductions
  (``ismcts:commander_rollout:1000:deduce=true:c_uct=2.5``) on seeded mid-round positions:
  simulations/s of the compiled search (its worlds dealt under the deductions by the game's
  kernels) against its Python loop, alternating rounds (bar 3×).
* **user game** — ``examples/blind_war`` (a game the project did not write; its plugin gives the
  compiled kernels of ``docs/kernels.md``), 1,000 random-rollout simulations a move on seeded
  positions: simulations/s of the compiled search against its Python loop (``fast=False``),
  alternating rounds (bar 10×).

``--profile`` prints where the compiled self-play spends its time (cProfile). Run:
``python -m bench.bench_fast [--quick] [--profile]``; the last two alone (no network, about a
minute): ``python -c "from bench.bench_fast import bench_openspiel, bench_user_game;
bench_openspiel(False); bench_user_game(False)"``.
"""

from __future__ import annotations

import cProfile
import pstats
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.results import Figure, record
from omega_cluster import wiring
from omega_cluster.config.load import load_settings
from omega_cluster.games.api import CHANCE, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.player import RandomPlayer
from omega_cluster.games.registry import make_game
from omega_cluster.model import NetworkEvaluator
from omega_cluster.players.registry import make_player
from omega_cluster.search.evaluators import RolloutEvaluator
from omega_cluster.search.fast.driver import run_batched
from omega_cluster.search.fast.game import FastLeaf, fast_path
from omega_cluster.search.ismcts import ISMCTS, ISMCTSConfig
from omega_cluster.train import SelfPlay

MLP_165K = "model.hidden_size=92"  # the default run's layout at ~165k parameters


def _cpu() -> float:
    return time.process_time()


def _positions(game: Any, count: int, seed: int, skip: int = 6) -> list[State]:
    """Mid-round decision positions: ``skip`` random decisions into each of ``count`` rounds."""
    rng = random.Random(seed)
    out: list[State] = []
    g = 0
    while len(out) < count:
        s = game.new_initial_state(seed + g)
        g += 1
        decisions = 0
        while not s.is_terminal():
            acting = s.current_players
            if acting[0] == CHANCE:
                s.apply_action(sample_chance(s.chance_outcomes(), rng.random()))
                continue
            legal = s.legal_actions(acting[0])
            if decisions >= skip and len(legal) > 1:
                out.append(s)
                break
            s.apply_action(legal[int(rng.random() * len(legal))])
            decisions += 1
    return out


def _model(players: int, overrides: list[str]) -> tuple[Any, Any, Any]:
    settings = load_settings(["run=default", f"game.params.players={players}", *overrides])
    game = wiring.build_game(settings)
    encoder = wiring.build_encoder(settings, game)
    torch.manual_seed(0)
    return game, encoder, wiring.build_model(settings, game, encoder)


def _raw_forward_rate(
    evaluator: NetworkEvaluator, batch: int, obs: Any, feats: Any, mask: Any
) -> float:
    """Leaves/s of the bare forward pass on ``batch`` encoded rows (best of 5)."""
    o, f, m = obs[:batch], feats[:batch], mask[:batch]
    evaluator.forward_padded(o, f, m)
    best = float("inf")
    for _ in range(5):
        start = _cpu()
        for _ in range(10):
            evaluator.forward_padded(o, f, m)
        best = min(best, (_cpu() - start) / 10)
    return batch / best


class _Capturing:
    """The network's forward for :func:`run_batched` (columns trimmed to the widest row, the
    values cut to the table), keeping the first batch's inputs for the raw-forward reference."""

    def __init__(self, evaluator: NetworkEvaluator, players: int) -> None:
        self.evaluator, self.players = evaluator, players
        self.first: tuple[Any, Any, Any] | None = None

    def __call__(self, obs: Any, feats: Any, mask: Any) -> tuple[Any, Any]:
        width = max(1, int(mask.sum(axis=1).max()))
        o, f, m = obs, feats[:, :width], mask[:, :width]
        if self.first is None:
            self.first = (o.copy(), f.copy(), m.copy())
        p, v = self.evaluator.forward_padded(o, f, m)
        full = np.zeros(mask.shape)
        full[:, :width] = p
        return full, v[:, : self.players]


def _leaf_rate(
    players: int, overrides: list[str], k: int, sims: int
) -> tuple[float, float, int, float]:
    """(leaves/s of K batched searches, raw forward leaves/s at their mean batch, the batch, the
    model's parameters in thousands)."""
    game, encoder, model = _model(players, overrides)
    evaluator = NetworkEvaluator(model, encoder, threads=1)
    config = ISMCTSConfig(simulations=sims, selection="puct")
    leaf = FastLeaf("network")
    fast, why = fast_path(game, config, leaf, encoder=encoder)
    if fast is None:
        raise SystemExit(f"bench_fast: no fast path: {why}")
    roots = np.stack([fast.pack(s) for s in _positions(game, k, seed=11)])
    who = roots[:, 0].copy()  # S_CUR: the acting seat
    budgets = np.full(k, sims, np.int64)
    seeds = np.arange(1, k + 1, dtype=np.uint64)
    warm = _Capturing(evaluator, players)
    run_batched(fast, roots[:4], who[:4], budgets[:4], seeds[:4], config, leaf, warm)  # compile
    forward = _Capturing(evaluator, players)
    rate = 0.0
    for _ in range(3):  # best of 3, as the raw forward is a best of 5
        start = _cpu()
        res = run_batched(fast, roots, who, budgets, seeds, config, leaf, forward)
        rate = max(rate, res.rows / (_cpu() - start))
    batch = max(1, round(res.rows / max(1, res.forward_calls)))
    assert forward.first is not None
    obs, feats, mask = forward.first
    raw = _raw_forward_rate(evaluator, min(batch, len(obs)), obs, feats, mask)
    return rate, raw, batch, model.num_parameters() / 1e3


def bench_leaves(quick: bool) -> Figure:
    k, sims = (64, 16) if quick else (256, 64)
    rows: list[str] = []
    ratios: list[str] = []
    refs: list[str] = []
    for players in (2, 4):
        for label, overrides in (("165k MLP", [MLP_165K]), ("default model", [])):
            rate, raw, batch, n = _leaf_rate(players, overrides, k, sims)
            print(f"  {players}p {label} ({n:.0f}k): {rate:,.0f} leaves/s, mean batch {batch}, "
                  f"raw forward {raw:,.0f}/s -> {rate / raw:.2f}x", flush=True)  # fmt: skip
            rows.append(f"{players}p {label} {rate:,.0f}")
            refs.append(f"{raw:,.0f}")
            ratios.append(f"{rate / raw:.2f}×")
    return Figure(
        name=f"ISMCTS-PUCT network leaves/s, Mexican Train, K={k} searches, {sims} simulations",
        figure=" / ".join(rows),
        reference="raw forward, same model and batch " + " / ".join(refs),
        ratio=" / ".join(ratios) + " (bar 0.5×)",
        command="python -m bench.bench_fast",
        headline="network leaves/s vs raw forward (compiled search)",
    )


def _selfplay(fast: bool, games: int, settings: Any) -> tuple[SelfPlay, float]:
    game = wiring.build_game(settings)
    encoder = wiring.build_encoder(settings, game)
    torch.manual_seed(0)
    model = wiring.build_model(settings, game, encoder)
    torch.set_num_threads(1)
    evaluator = wiring.leaf_spec(settings).build(game, model, encoder)
    config = wiring.selfplay_config(settings, games=games, seed=3, champion_version=0,
                                    actor="bench")  # fmt: skip
    runner = SelfPlay(game, encoder, config, evaluator=evaluator, fast=fast)
    start = _cpu()
    for _ in runner.play():
        pass
    return runner, _cpu() - start


SELFPLAY_RUNS = (  # (the run as named in the row, its overrides, the bar)
    ("default run", ["run=default"], 3.0),
    ("Connect Four from nothing", ["run=zero", "game=connect_four"], 2.0),
)


def bench_selfplay(quick: bool, profile: bool, run: str, overrides: list[str],
                   bar: float) -> Figure:  # fmt: skip
    settings = load_settings(overrides)
    games, repeats = (4, 2) if quick else (8, 4)
    # first-call costs out of the timing: the Python loop's (its compiled rollout policy) and
    # the compiled path's (numba compiles or loads its cache)
    _selfplay(False, 1, settings)
    _selfplay(True, 2, settings)
    python, t_python = _selfplay(False, games, settings)
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    t_fast = 0.0  # the same seeded games as the Python loop's, played `repeats` times
    for _ in range(repeats):
        compiled, seconds = _selfplay(True, games, settings)
        t_fast += seconds
    if prof:
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    before = python.stats.decisions / t_python
    after = repeats * compiled.stats.decisions / t_fast
    fast = compiled.fast
    assert fast is not None, compiled.fast_reason
    limit = (
        compiled.stats.decisions / fast.forward_seconds if fast.forward_seconds else float("inf")
    )
    print(
        f"  {run} self-play: Python loop {before:,.0f} decisions/s, compiled {after:,.0f} "
        f"-> {after / before:.2f}x; forward pass alone would allow {limit:,.0f} decisions/s "
        f"({seconds and fast.forward_seconds / seconds:.0%} of the time in forward; mean batch "
        f"{fast.rows / max(1, fast.forward_calls):.1f})"
    )
    search = settings.search  # the preset's, named in the row (it changes with the preset)
    network = f"; forward-pass limit {limit:,.0f}" if fast.forward_calls else ""
    sims = (f"{search.simulations}/{search.fast_simulations}"
            if search.full_search_probability < 1 else f"{search.simulations}")  # fmt: skip
    return Figure(
        name=f"self-play decisions/s, {run} ({search.selection}, leaf {search.leaf}, {sims} sims)",
        figure=f"compiled {after:,.0f}",
        reference=f"Python loop {before:,.0f}{network}",
        ratio=f"{after / before:.2f}× (bar {bar:g}×)",
        command="python -m bench.bench_fast",
        headline=f"self-play decisions/s, {run}",
    )


WHOLE_GAME_SIMULATIONS = 1000


def _alternating(runs: dict[str, Callable[[int], int]], rounds: int) -> dict[str, float]:
    """CPU seconds per unit of each run (``run(round) -> units done``), the runs alternating
    round by round so that a change of load on a shared machine reaches them all."""
    seconds = dict.fromkeys(runs, 0.0)
    units = dict.fromkeys(runs, 0)
    for r in range(rounds):
        for name, run in runs.items():
            start = _cpu()
            units[name] += run(r)
            seconds[name] += _cpu() - start
    return {name: seconds[name] / max(1, units[name]) for name in runs}


def _our_games(name: str, games: int) -> Callable[[int], int]:
    """Whole games of ``name`` with the search player at both seats; moves searched."""
    game = make_game(name)
    player = make_player(f"ismcts:random:{WHOLE_GAME_SIMULATIONS}:c_uct=1.4", game)
    assert player.search.fast is not None, player.search.fast_reason  # type: ignore[attr-defined]

    def run(r: int) -> int:
        rng, moves = random.Random(r), 0
        for _ in range(games):
            s = game.new_initial_state()
            while not s.is_terminal():
                p = s.current_players[0]
                if p == CHANCE:
                    s.apply_action(sample_chance(s.chance_outcomes(), rng.random()))
                else:
                    s.apply_action(player.act(s, p, rng))
                    moves += 1
        return moves

    run(0)  # compile (or load numba's cache) before timing
    return run


def _cpp_games(name: str, games: int) -> Callable[[int], int]:
    """Whole games of ``name`` with OpenSpiel's C++ ``ISMCTSBot`` at both seats; moves."""
    import pyspiel

    game = pyspiel.load_game(name)

    def run(r: int) -> int:
        rng, moves = random.Random(r), 0
        bots = [pyspiel.ISMCTSBot(2 * r + p, pyspiel.RandomRolloutEvaluator(1, 2 * r + p), 1.4,
                                  WHOLE_GAME_SIMULATIONS, -1,
                                  pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT, False,
                                  False) for p in range(2)]  # fmt: skip
        for _ in range(games):
            s = game.new_initial_state()
            while not s.is_terminal():
                if s.is_chance_node():
                    s.apply_action(sample_chance(s.chance_outcomes(), rng.random()))
                else:
                    s.apply_action(bots[s.current_player()].step(s))
                    moves += 1
        return moves

    return run


def bench_openspiel(quick: bool) -> list[Figure]:
    sims, figures = WHOLE_GAME_SIMULATIONS, []
    for name, games in (("kuhn_poker", 300), ("leduc_poker", 100)):
        games = games // 4 if quick else games
        per_move = _alternating(
            {"ours": _our_games(name, games), "c++": _cpp_games(name, games)}, 2 if quick else 6
        )
        ours, cpp = per_move["ours"], per_move["c++"]
        print(f"  {name} whole games, {sims} random-rollout simulations a move: ours "
              f"{1e3 * ours:.3f} ms a move (ismcts:random, compiled path), OpenSpiel C++ "
              f"ISMCTSBot {1e3 * cpp:.3f} ms -> {cpp / ours:.2f}x")  # fmt: skip
        figures.append(Figure(
            name=f"ISMCTS whole games, {name}, {sims:,} random-rollout simulations a move, "
                 "CPU ms a move",
            figure=f"{1e3 * ours:.3f} ms (ismcts:random, compiled path)",
            reference=f"OpenSpiel C++ ISMCTSBot, the same game {1e3 * cpp:.3f} ms",
            ratio=f"{cpp / ours:.2f}× C++ (bar 1×)", command="python -m bench.bench_fast",
        ))  # fmt: skip
    return figures


def _blind_war() -> Any:
    """``examples/blind_war``, imported as a user imports it (``PYTHONPATH=examples``)."""
    examples = str(Path(__file__).resolve().parents[1] / "examples")
    if examples not in sys.path:
        sys.path.append(examples)
    import blind_war

    return blind_war


def _searches(search: ISMCTS, positions: list[State]) -> Callable[[int], int]:
    """One search from each position (round ``r``: seeds ``r + i``); simulations done."""

    def run(r: int) -> int:
        done = 0
        for i, s in enumerate(positions):
            done += search.search(
                s, s.current_players[0], random.Random(r + i)
            ).diagnostics.simulations
        return done

    return run


def bench_user_game(quick: bool) -> Figure:
    game = _blind_war().BlindWarGame(players=3, deck=20, hand=5)
    sims = WHOLE_GAME_SIMULATIONS
    positions: list[State] = []
    for seed in range(4 if quick else 12):  # seeded deals, 0 to 6 cards played
        s, rng = game.new_initial_state(seed), random.Random(seed)
        for _ in range(seed % 7):
            s.apply_action(rng.choice(s.legal_actions()))
        positions.append(s)
    compiled = ISMCTS(game, RolloutEvaluator(RandomPlayer()), simulations=sims, c_uct=1.4)
    python = ISMCTS(game, RolloutEvaluator(RandomPlayer()), simulations=sims, c_uct=1.4,
                    fast=False)  # fmt: skip
    assert compiled.fast is not None, compiled.fast_reason
    compiled.search(positions[0], 0, random.Random(0))  # compile before timing

    per_sim = _alternating({"compiled": _searches(compiled, positions),
                            "python": _searches(python, positions)}, 1 if quick else 2)  # fmt: skip
    fast, slow = 1 / per_sim["compiled"], 1 / per_sim["python"]
    print(f"  blind_war (examples/, 3 players, 20 cards, 5 tricks), {sims} random-rollout "
          f"simulations a move: compiled {fast:,.0f} sims/s, its Python loop {slow:,.0f} -> "
          f"{fast / slow:.1f}x")  # fmt: skip
    return Figure(
        name=f"ISMCTS simulations/s, a user's game (examples/blind_war, 3p, 20 cards, 5 tricks; "
             f"its own kernels), {sims:,} random-rollout simulations a move",
        figure=f"compiled {fast:,.0f}", reference=f"its Python loop {slow:,.0f}",
        ratio=f"{fast / slow:.1f}× (bar 10×)", command="python -m bench.bench_fast",
    )  # fmt: skip


DEDUCE_SPEC = "ismcts:commander_rollout:1000:deduce=true:c_uct=2.5"


def bench_deductions(quick: bool) -> Figure:
    """The search player with the public deductions (:data:`DEDUCE_SPEC`, the 4-player searcher
    of ``docs/results.md``) on seeded mid-round 4p positions: simulations/s compiled (worlds
    dealt under the deductions by the kernels) against its Python loop, alternating rounds."""
    game = make_game("mexican_train", players=4, rounds=1)
    positions = _positions(game, 4 if quick else 12, seed=7, skip=16)
    compiled = make_player(DEDUCE_SPEC, game).search  # type: ignore[attr-defined]
    python = make_player(DEDUCE_SPEC, game).search  # type: ignore[attr-defined]
    python = ISMCTS(game, python.evaluator, python.config, fast=False)
    assert compiled.fast is not None, compiled.fast_reason
    compiled.search(positions[0], positions[0].current_players[0], random.Random(0))

    per_sim = _alternating({"compiled": _searches(compiled, positions),
                            "python": _searches(python, positions)}, 1 if quick else 2)  # fmt: skip
    fast, slow = 1 / per_sim["compiled"], 1 / per_sim["python"]
    print(f"  {DEDUCE_SPEC}, Mexican Train 4p: compiled {fast:,.0f} sims/s, the Python loop "
          f"{slow:,.0f} -> {fast / slow:.1f}x")  # fmt: skip
    return Figure(
        name=f"ISMCTS simulations/s with the public deductions ({DEDUCE_SPEC}), Mexican Train "
             "4p, mid-round positions",
        figure=f"compiled {fast:,.0f}", reference=f"the Python loop {slow:,.0f}",
        ratio=f"{fast / slow:.1f}× (bar 3×)", command="python -m bench.bench_fast",
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick, profile = "--quick" in args, "--profile" in args
    torch.set_num_threads(1)
    figures = [
        bench_leaves(quick),
        *(bench_selfplay(quick, profile, *run) for run in SELFPLAY_RUNS),
        *bench_openspiel(quick),
        bench_user_game(quick),
        bench_deductions(quick),
    ]
    record("bench_fast", figures, quick=quick)


if __name__ == "__main__":
    main()
