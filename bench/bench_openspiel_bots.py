"""The project's search against OpenSpiel's own C++ bots at equal simulations, on ``openspiel:``
games the project has no rules of its own for.

Each line: ``ismcts:random:<n>`` (the project's ISMCTS, one random rollout per leaf, UCT c = 1.4,
the Python loop over the OpenSpiel adapter) against ``openspiel_mcts:<n>`` on perfect-information
games (tic-tac-toe, connect four) or ``openspiel_ismcts:<n>`` on imperfect-information ones
(universal_poker: two-player limit poker with OpenSpiel's default parameters), both with one
random rollout per leaf and ``n`` simulations per move. Games come in seat-swapped pairs on one
deal (the arena's seat rotation); a pair's score is the project's mean win share over its two
games (a draw or a split pot 1/2), the figure the mean over pairs with its 95% t interval (pairs,
not games, are the sample: the games of a deal share its luck).

    python -m bench.bench_openspiel_bots            # records docs/results/openspiel_bots.json
    python -m bench.bench_openspiel_bots --quick    # fewer games, records nothing
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.results import Figure, record
from omega_cluster.eval.arena import play_match
from omega_cluster.eval.stats import mean_ci
from omega_cluster.games import make_game

CASES = (  # (game, OpenSpiel bot, simulations)
    ("openspiel:tic_tac_toe", "openspiel_mcts", 100),
    ("openspiel:connect_four", "openspiel_mcts", 100),
    ("openspiel:universal_poker", "openspiel_ismcts", 100),
)
COMMAND = "python -m bench.bench_openspiel_bots"


def contrast(game_name: str, bot: str, simulations: int, pairs: int, seed: int) -> dict:
    """The project's ISMCTS against ``bot`` in ``pairs`` seat-swapped pairs of games."""
    game = make_game(game_name)
    ours, theirs = f"ismcts:random:{simulations}", f"{bot}:{simulations}"
    started = time.perf_counter()
    match = play_match(game, [ours, theirs], games=2 * pairs, seed=seed, rotate_seats=True)
    by_deal: dict[int, list[float]] = {}
    for r in match.records:
        seat = r.seating.index(0) if r.seating is not None else 0
        by_deal.setdefault(r.deal, []).append(r.win_shares[seat])
    scores = [sum(v) / len(v) for v in by_deal.values()]
    ci = mean_ci(scores)
    return {"ours": ours, "theirs": theirs, "score": ci.estimate, "low": ci.low,
            "high": ci.high, "pairs": len(scores), "seconds": time.perf_counter() - started}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 pairs a game, record nothing")
    parser.add_argument("--pairs", type=int, default=50, help="seat-swapped pairs per game")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    pairs = 10 if args.quick else args.pairs
    figures = []
    for game, bot, sims in CASES:
        row = contrast(game, bot, sims, pairs, args.seed)
        text = f"{row['score']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
        print(f"{game:26s} {row['ours']} vs {row['theirs']}: {text} over {row['pairs']} pairs "
              f"({row['seconds']:.0f} s)", flush=True)  # fmt: skip
        figures.append(Figure(
            name=f"{row['ours']} vs {row['theirs']}, {game} (win share, {row['pairs']} "
                 "seat-swapped pairs)",
            figure=text, reference=row["theirs"], ratio="0.5 = equal strength",
            command=f"{COMMAND} --pairs {pairs}", table="strength",
        ))  # fmt: skip
    record("openspiel_bots", figures, quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
