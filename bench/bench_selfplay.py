"""Self-play speed with search on Mexican Train 2p and 4p: K concurrent games batched vs one at a time.

One process, ISMCTS (PUCT) with the policy/value network as leaf evaluator (the network leaf: the
network's prior and value, no rollout; default ``ModelConfig`` for the Mexican Train encoder,
untrained weights — speed does not depend on them), single-round games:

* ``unbatched`` (the baseline) — ``concurrent_games=1``: one game at a time, every leaf of its
  search a forward pass of its own;
* ``batched`` — ``concurrent_games=K``: K games in flight, their searches advanced together by
  ``run_searches``, so each forward pass serves up to K leaves.

Both play the same games (same seeds and budgets; one torch thread, as a self-play actor has one
core), on the compiled search when numba is installed, as self-play runs (``bench_fast`` compares
it with the Python loop). Printed per table size: decisions/s
(every player decision, forced ones included), searches/s, simulations/s, the mean leaves per
forward pass, and batched / unbatched. CPU figures are noisy on a shared machine; ``--quick`` runs
a short check. Run: ``python -m bench.bench_selfplay``.
"""

from __future__ import annotations

import sys

import torch

from bench.results import Figure, record
from omega_cluster.games.registry import make_game
from omega_cluster.model import ModelConfig, NetworkEvaluator, PolicyValueNet, encoder_for
from omega_cluster.search.ismcts import ISMCTSConfig
from omega_cluster.train import SelfPlayConfig, SelfPlayStats, play_games


def _run(players: int, games: int, concurrent: int, simulations: int) -> SelfPlayStats:
    game = make_game("mexican_train", players=players, rounds=1)
    encoder = encoder_for(game)
    torch.manual_seed(0)
    model = PolicyValueNet(
        ModelConfig.for_encoder(encoder, game),
        encoder.observation_size,
        encoder.action_feature_size,
    )
    evaluator = NetworkEvaluator(model, encoder, threads=1)  # one actor = one core
    config = SelfPlayConfig(
        games=games,
        concurrent_games=concurrent,
        search=ISMCTSConfig(simulations=simulations, selection="puct"),
        seed=1,
    )
    _, stats = play_games(game, encoder, config, evaluator=evaluator)
    return stats


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    games, concurrent, simulations = (4, 4, 16) if quick else (16, 16, 32)
    print(
        f"{games} single-round games per run, ISMCTS PUCT {simulations} simulations/move, "
        f"network leaf, K={concurrent}, one torch thread (one actor = one core)"
    )
    header = f"{'':<22}{'decisions/s':>12}{'searches/s':>11}{'sims/s':>9}{'leaves/call':>12}"
    rates: dict[int, tuple[float, float]] = {}  # players -> (batched, unbatched) decisions/s
    for players in (2, 4):
        print(f"\nMexican Train {players}p\n{header}")
        base = _run(players, games, 1, simulations)
        batched = _run(players, games, concurrent, simulations)
        for label, s in (("unbatched (K=1)", base), (f"batched (K={concurrent})", batched)):
            searches = s.searches / s.seconds
            print(
                f"{label:<22}{s.decisions_per_s:>12,.0f}{searches:>11,.1f}"
                f"{s.simulations_per_s:>9,.0f}{s.mean_batch:>12.1f}"
            )
        print(f"batched / unbatched = {batched.decisions_per_s / base.decisions_per_s:.2f}x")
        rates[players] = (batched.decisions_per_s, base.decisions_per_s)
    figure = Figure(
        name=(
            f"self-play decisions/s, ISMCTS-PUCT {simulations} simulations, network leaf, "
            f"K={concurrent} games"
        ),
        figure=" / ".join(f"{p}p {b:,.0f}" for p, (b, _) in rates.items()),
        reference="unbatched " + " / ".join(f"{u:,.0f}" for _, u in rates.values()),
        ratio=" / ".join(f"{b / u:.2f}×" for b, u in rates.values()),
        command="python -m bench.bench_selfplay",
        headline="self-play decisions/s, network leaf, 2p / 4p",
    )
    record("bench_selfplay", [figure], quick=quick)


if __name__ == "__main__":
    main()
