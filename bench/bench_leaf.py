"""The network leaf against the rollout leaf: the same checkpoint searched two ways, at equal
wall-clock per move, on a registered cohort.

``python -m bench.bench_leaf --run <run dir> --cohort mt2p-leaf-200 [--version k]
[--reference-sims 64]``: arm A is ISMCTS with PUCT on the network's prior and the
perfect-information critic's value on each sampled world (``search.leaf=critic``: no rollout),
arm B the same search with a rollout of the game's rule-based player at the leaf
(``network+heuristic_rollout``, the default run's leaf; Commander for Mexican Train) — the same
weights in both (``champion:<run>:<sims>:leaf=<leaf>``). Arm B searches ``--reference-sims``
simulations a move; arm A gets the simulations that take the same time: each arm's searched
moves are timed on ``--calibration-games`` games against the cohort's opponents on deals of
seed ``--calibration-seed`` (never a cohort seed), A's count is scaled by the ratio and timed
once more, and scaled again. Then the cohort is played (every deal with each arm in the same
seat, the rest fixed) and the paired contrast A - B of the win share (and the fair share,
``N`` × win share) is printed with its 95% interval. ``--save`` records it in
``docs/results/bench_leaf.json``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from pathlib import Path

from bench.results import Figure, record
from omega_cluster.eval.cohorts import Cohort, load_cohort, run_cohort
from omega_cluster.games.registry import make_game
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player

CRITIC, ROLLOUT = "critic", "network+heuristic_rollout"


def spec(run: Path, sims: int, leaf: str, version: int | None) -> str:
    v = "" if version is None else f":version={version}"
    return f"champion:{run}:{sims}{v}:leaf={leaf}"


def seconds_per_move(player_spec: str, cohort: Cohort, games: int, seed: int) -> float:
    """Mean wall time of the player's searched moves (more than one legal move) over ``games``
    games against the cohort's opponents, the player in seat 0."""
    game = make_game(cohort.game, **dict(cohort.params))
    player = make_player(player_spec, game)
    others = [make_player(o, game) for o in cohort.others]
    rng, spent, moves = random.Random(seed), 0.0, 0
    for g in range(games):
        state = game.new_initial_state(seed + g)
        while not state.is_terminal():
            p = state.current_players[0]
            legal = state.legal_actions(p)
            if p == 0 and len(legal) > 1:
                t0 = time.perf_counter()
                action = player.act(state, p, rng)
                spent, moves = spent + time.perf_counter() - t0, moves + 1
            else:
                action = (player if p == 0 else others[p - 1]).act(state, p, rng)
            state.apply_action(action)
    return spent / max(moves, 1)


def calibrate(run: Path, version: int | None, cohort: Cohort, ref_sims: int, games: int,
              seed: int) -> tuple[int, float, float]:  # fmt: skip
    """A's simulations for B's wall time per move, and both times (s)."""
    t_ref = seconds_per_move(spec(run, ref_sims, ROLLOUT, version), cohort, games, seed)
    sims = ref_sims
    for _ in range(2):
        t = seconds_per_move(spec(run, sims, CRITIC, version), cohort, games, seed)
        sims = max(8, round(sims * t_ref / t))
    t_a = seconds_per_move(spec(run, sims, CRITIC, version), cohort, games, seed)
    return sims, t_a, t_ref


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--cohort", required=True)
    parser.add_argument("--version", type=int, default=None)
    parser.add_argument("--reference-sims", type=int, default=64)
    parser.add_argument("--calibration-games", type=int, default=6)
    parser.add_argument("--calibration-seed", type=int, default=23301)
    parser.add_argument("--seeds", type=int, default=None, help="the cohort's first N seeds only")
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    pin_threads(1)
    cohort = load_cohort(args.cohort)
    sims, t_a, t_b = calibrate(args.run, args.version, cohort, args.reference_sims,
                               args.calibration_games, args.calibration_seed)  # fmt: skip
    print(f"equal time per move: critic leaf {sims} simulations ({1e3 * t_a:.1f} ms/move), "
          f"rollout leaf {args.reference_sims} ({1e3 * t_b:.1f} ms/move)")  # fmt: skip
    a = spec(args.run, sims, CRITIC, args.version)
    b = spec(args.run, args.reference_sims, ROLLOUT, args.version)
    result = run_cohort(cohort, a, b, seeds=args.seeds, progress=True)
    n = int(dict(cohort.params)["players"])
    win = result.contrasts["win_share"]
    t = win.t_interval
    fair = f"fair share {n * win.mean:+.3f} [{n * t.low:+.3f}, {n * t.high:+.3f}]"
    print(f"A - B win share {win}; {fair}; {len(result.results)} games, "
          f"{result.elapsed_s:.0f} s")  # fmt: skip
    verdict = "met" if t.high >= 0 else "not met"
    command = (f"python -m bench.bench_leaf --run {args.run} --cohort {args.cohort}"
               + ("" if args.version is None else f" --version {args.version}")
               + f" --reference-sims {args.reference_sims}")  # fmt: skip
    figure = Figure(
        name=f"critic leaf vs rollout leaf, equal time per move, {cohort.name} "
        f"(Mexican Train {n}p vs Commander)",
        figure=f"win share {win.mean:+.3f} [{t.low:+.3f}, {t.high:+.3f}]; {fair}",
        reference=f"rollout leaf {args.reference_sims} sims ({1e3 * t_b:.0f} ms/move); "
        f"critic leaf {sims} sims ({1e3 * t_a:.0f} ms/move)",
        ratio=f"interval not below 0: {verdict}",
        command=command,
        table="strength",
    )
    record("bench_leaf", [figure], quick=not args.save or args.seeds is not None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
