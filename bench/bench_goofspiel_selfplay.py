"""Goofspiel-13 self-play decisions/s: the compiled SM-MCTS (every acting player's search of a
round, across the games in flight, in one batched call) against the Python SMMCTS loop.

The default run's model and self-play settings with ``game=goofspiel`` and 13 cards, and the leaf
``network+random`` by default (the default run's ``network+heuristic_rollout`` plays Goofspiel's
matching player, which has no compiled playout; other settings: ``key=value`` arguments, e.g.
``search.leaf=network``). The same games (seed and count) on both paths, wall time of one process,
torch pinned to one thread; the compiled path is warmed on two games first (numba's cache).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import torch

from omega_cluster import wiring
from omega_cluster.config import load_settings
from omega_cluster.train import SelfPlay


def _selfplay(settings: Any, fast: bool, games: int) -> tuple[SelfPlay, float]:
    game = wiring.build_game(settings)
    encoder = wiring.build_encoder(settings, game)
    torch.manual_seed(0)
    model = wiring.build_model(settings, game, encoder)
    evaluator = wiring.leaf_spec(settings).build(game, model, encoder)
    config = wiring.selfplay_config(settings, games=games, seed=3, champion_version=0,
                                    actor="bench")  # fmt: skip
    runner = SelfPlay(game, encoder, config, evaluator=evaluator, fast=fast)
    start = time.perf_counter()
    for _ in runner.play():
        pass
    return runner, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    games = 4 if "--quick" in args else 16
    torch.set_num_threads(1)
    overrides = [a for a in args if "=" in a]
    settings = load_settings(["run=default", "game=goofspiel", "game.params.num_cards=13",
                              "search.leaf=network+random", *overrides])  # fmt: skip
    python, t_python = _selfplay(settings, False, games)
    _selfplay(settings, True, 2)  # numba: load the cache (or compile)
    compiled, t_fast = _selfplay(settings, True, games)
    assert compiled.fast is not None, compiled.fast_reason
    before = python.stats.decisions / t_python
    after = compiled.stats.decisions / t_fast
    fast = compiled.fast
    print(
        f"Goofspiel-13 self-play, {games} games, leaf {settings.search.leaf} "
        f"({compiled.stats.simulations / compiled.stats.searches:.1f} simulations a search): "
        f"Python loop {before:,.0f} decisions/s, compiled {after:,.0f} -> {after / before:.1f}x; "
        f"{fast.calls} evaluator calls, mean batch {fast.leaves / max(1, fast.calls):.1f} "
        f"leaves, {fast.forward_seconds / max(t_fast, 1e-9):.0%} of the time in forward"
    )


if __name__ == "__main__":
    main()
