"""N-tuple tables as a search leaf: what a leaf costs, and what the tables are worth in a search.

**Leaf speed** (``python -m bench.bench_ntuple [--quick]``; one core; ``--quick`` records nothing): on the same
Mexican Train positions (2p and 4p, one round), the batches a depth-1 lookahead sends its
evaluator (every move of one sampled world, forced moves played through), each leaf valued by

* ``tables`` — :class:`~omega_cluster.search.ntuple.TableEvaluator` (the lookups do not depend on
  the weights, so fresh tables time the same as trained ones);
* ``hand`` — the hand-written value (the plugin's ``HandValue``);
* ``commander_rollout`` — the reference: one Commander playout per leaf to the end of the round
  (compiled playouts when numba is installed);
* ``network`` — :class:`~omega_cluster.model.inference.NetworkEvaluator` on a fresh default
  network, one batched call per world's batch, its cache off.

Each figure is leaves/s and its ratio against the rollout leaf measured in the same run.

**Contrasts** (``--contrast <name> --cohort <name> --depth d [--tables DIR] [--worlds W]
[--seeds N] [--save]``): one paired contrast of two lookahead players on a registered cohort
(:func:`omega_cluster.eval.cohorts.run_cohort`), A − B win share with its 95% interval (and the
fair share, N × win share):

* ``equal-depth`` — tables at depth d vs the hand-written leaf at depth d;
* ``deeper-hand`` — tables at depth d vs the hand-written leaf at depth d + 1;
* ``blend`` — the blend ``tables+hand`` at depth d (hand weight 0.25) vs tables at depth d;
* ``hand-depth`` — the hand-written leaf at depth d vs itself at depth d + 1 (needs no tables).

``--save`` (on the whole cohort) records the figure in ``docs/results/bench_ntuple.json``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence

from bench.results import Figure, record
from omega_cluster.errors import UserError, one_line
from omega_cluster.eval.cohorts import load_cohort, run_cohort
from omega_cluster.games.api import Game
from omega_cluster.games.registry import game_plugin, make_game
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.search import build_leaf_evaluator
from omega_cluster.search.evaluators import Evaluator, Leaf, LeafEvaluation
from omega_cluster.search.lookahead import Lookahead

CONTRASTS: dict[str, str] = {
    "equal-depth": "tables at depth d vs the hand-written leaf at depth d",
    "deeper-hand": "tables at depth d vs the hand-written leaf at depth d + 1",
    "blend": "tables+hand (hand 0.25) at depth d vs tables at depth d",
    "hand-depth": "the hand-written leaf at depth d vs itself at depth d + 1",
}
COMMAND = "python -m bench.bench_ntuple"


class _Recorder:
    """An evaluator that keeps every batch it is asked for (and values them all evenly)."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.batches: list[list[Leaf]] = []

    def evaluate(self, leaves: Sequence[Leaf]) -> list[LeafEvaluation]:
        self.batches.append(list(leaves))
        return [LeafEvaluation((1.0 / self.players,) * self.players) for _ in leaves]


def lookahead_batches(game: Game, positions: int, seed: int) -> list[list[Leaf]]:
    """The batches a depth-1, one-world lookahead evaluates at ``positions`` decisions (two or
    more legal moves) of games played by that lookahead."""
    recorder = _Recorder(game.num_players)
    search = Lookahead(game, recorder, depth=1, worlds=1)
    rng = random.Random(seed)
    g = 0
    while len(recorder.batches) < positions:
        state = game.new_initial_state(seed + g)
        while not state.is_terminal() and len(recorder.batches) < positions:
            p = state.current_players[0]
            legal = state.legal_actions(p)
            if len(legal) > 1:
                search.search(state, p, rng)  # records the batch
            state.apply_action(legal[int(rng.random() * len(legal))])  # varied positions
        g += 1
    return recorder.batches


def _rate(evaluate: Callable[[Sequence[Leaf]], object], batches: list[list[Leaf]],
          seconds: float) -> float:  # fmt: skip
    """Leaves per second of ``evaluate`` over the batches (cycled for about ``seconds``)."""
    evaluate(batches[0])  # warm-up (a compile, a first forward)
    leaves, start, i = 0, time.perf_counter(), 0
    while True:
        batch = batches[i % len(batches)]
        evaluate(batch)
        leaves, i = leaves + len(batch), i + 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and i >= len(batches):
            return leaves / elapsed


def speed_leaves(game: Game) -> dict[str, Evaluator]:
    """The four leaves of the speed comparison for ``game`` (fresh tables, fresh network)."""
    import torch

    from omega_cluster.model import ModelConfig, NetworkEvaluator, PolicyValueNet, encoder_for
    from omega_cluster.search.ntuple import TableEvaluator, TupleTables

    patterns = game_plugin(game).hook("ntuple_patterns")
    assert patterns is not None, f"{game.spec.name} declares no n-tuple patterns"
    encoder = encoder_for(game)
    torch.manual_seed(0)
    config = ModelConfig.for_encoder(encoder, game)
    model = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size).eval()
    return {
        "tables": TableEvaluator(TupleTables(patterns(game)), game.num_players),
        "hand": build_leaf_evaluator(game, "hand"),
        "commander_rollout": build_leaf_evaluator(game, "commander_rollout"),
        "network": NetworkEvaluator(model, encoder, device="cpu", cache_size=0),
    }


def bench_speed(players: int, positions: int, seconds: float) -> list[Figure]:
    game = make_game("mexican_train", players=players, rounds=1)
    batches = lookahead_batches(game, positions, seed=11 + players)
    mean = sum(len(b) for b in batches) / len(batches)
    print(f"\nMexican Train {players}p: {len(batches)} positions, {mean:.1f} leaves per batch")
    rates = {name: _rate(leaf.evaluate, batches, seconds)
             for name, leaf in speed_leaves(game).items()}  # fmt: skip
    ref = rates["commander_rollout"]
    figures = []
    for name, rate in rates.items():
        print(f"  {name:<18} {rate:>12,.0f} leaves/s {rate / ref:>9.1f}x the rollout")
        if name != "commander_rollout":
            figures.append(Figure(
                name=f"{name} leaf, Mexican Train {players}p, depth-1 lookahead batches",
                figure=f"{rate:,.0f} leaves/s",
                reference=f"Commander rollout leaf {ref:,.0f} leaves/s",
                ratio=f"{rate / ref:.1f}×",
                command=COMMAND,
            ))  # fmt: skip
    return figures


def contrast_specs(name: str, depth: int, worlds: int, tables: str | None) -> tuple[str, str]:
    """The two player specs (A, B) of contrast ``name`` (:data:`CONTRASTS`)."""
    if name not in CONTRASTS:
        raise UserError(f"unknown contrast {name!r}; allowed: {', '.join(CONTRASTS)}")
    if name != "hand-depth" and not tables:
        raise UserError(f"contrast {name!r} needs --tables <dir> (trained tables for the cohort)")
    w = f":worlds={worlds}"
    hand = f"lookahead:hand:{depth}{w}"
    hand_deeper = f"lookahead:hand:{depth + 1}{w}"
    table = f"lookahead:tables:{depth}{w}:tables={tables}"
    blend = f"lookahead:tables+hand:{depth}{w}:tables={tables}"
    return {
        "equal-depth": (table, hand),
        "deeper-hand": (table, hand_deeper),
        "blend": (blend, table),
        "hand-depth": (hand, hand_deeper),
    }[name]


def bench_contrast(args: argparse.Namespace) -> Figure:
    cohort = load_cohort(args.cohort)
    a, b = contrast_specs(args.contrast, args.depth, args.worlds, args.tables)
    print(f"{args.contrast}: {CONTRASTS[args.contrast]} (d={args.depth}) on {cohort.name}")
    print(f"  A = {a}\n  B = {b}")
    result = run_cohort(cohort, a, b, seeds=args.seeds, progress=True)
    n = cohort.num_players
    win = result.contrasts["win_share"]
    t = win.t_interval
    fair = f"fair share {n * win.mean:+.3f} [{n * t.low:+.3f}, {n * t.high:+.3f}]"
    per_game = result.elapsed_s / max(result.games, 1)
    print(f"A - B win share {win}; {fair}; {result.games} games, {result.elapsed_s:.0f} s "
          f"({per_game:.2f} s per game)")  # fmt: skip
    command = (f"{COMMAND} --contrast {args.contrast} --cohort {args.cohort} "
               f"--depth {args.depth} --worlds {args.worlds}"
               + (f" --tables {args.tables}" if args.tables else ""))  # fmt: skip
    return Figure(
        name=f"{args.contrast} (d={args.depth}), {cohort.name} (Mexican Train {n}p)",
        figure=f"win share {win.mean:+.3f} [{t.low:+.3f}, {t.high:+.3f}]; {fair}",
        reference=f"A {a}; B {b}",
        ratio="interval above 0" if t.low > 0 else "interval not above 0",
        command=command,
        table="strength",
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short timings, nothing recorded")
    parser.add_argument("--save", action="store_true", help="record a contrast in docs/results/")
    parser.add_argument("--contrast", choices=sorted(CONTRASTS), default=None)
    parser.add_argument("--cohort", default=None, help="a registered cohort (with --contrast)")
    parser.add_argument("--tables", default=None, help="trained tables' directory")
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=None, help="the cohort's first N seeds only")
    args = parser.parse_args(argv)
    pin_threads(1)
    if args.contrast is None:
        positions, seconds = (40, 0.5) if args.quick else (200, 3.0)
        figures = [f for n in (2, 4) for f in bench_speed(n, positions, seconds)]
        record("bench_ntuple", figures, quick=args.quick)
        return 0
    if args.cohort is None:
        parser.error("--contrast needs --cohort <registered cohort>")
    try:
        figure = bench_contrast(args)
    except UserError as err:  # a cohort, a tables directory, a spec: one line, no traceback
        print(f"bench_ntuple: error: {one_line(err)}", file=sys.stderr)
        return 2
    record("bench_ntuple", [figure], quick=not args.save or args.seeds is not None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
