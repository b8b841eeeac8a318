"""Does the value learn? Explained variance of each value head against the round outcome.

``python -m bench.bench_value [--players 2,4] [--games 1500] [--heldout 300] [--steps 1500]``:
for each table size, Commander-vs-Commander one-round Mexican Train games (the teacher games of
the warm start: ``train.warm_start``'s self-play mode, records with the hidden state) are played
on seed ``--seed`` for training and on ``--seed + 1`` for held-out positions (``--seed + 2`` for validation), and three networks
of the default model are trained on the training rows, up to ``--steps`` steps, as a run's learner
trains (the project's :class:`~omega_cluster.train.learner.Learner` on a replay window over real
shards):

* ``value (round outcome)`` — today's value head, regressed on the round outcome;
* ``value (critic targets)`` — the imperfect-information value head regressed on the
  perfect-information critic's values (``learner.value_target=critic``: PerfectDou's
  perfect-training, imperfect-execution scheme), the critic trained beside it on the outcome;
* ``critic`` — that critic itself, which reads the hidden hands (training only: no player gets
  it as input; the critic leaf evaluates sampled worlds with it).

On the held-out positions each head's explained variance against the round outcome is
``1 - Σ(y - v)² / Σ(y - ȳ)²`` over the positions, for the acting player's own round outcome
(its win share; 0 is a constant, 1 a perfect prediction; the learner's ``learner/value_ev`` is
the same figure on its batches). The reference measured in the same run is the first
row. ``--save`` records the rows in ``docs/results/bench_value.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from bench.results import Figure, record
from omega_cluster.config import load_settings
from omega_cluster.data import ReplayWindow, ShardStore, ShardWriter
from omega_cluster.data.batch import table_to_batch
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player
from omega_cluster.train.config import SelfPlayConfig
from omega_cluster.train.learner import Learner
from omega_cluster.train.losses import relative_seats
from omega_cluster.train.selfplay import SelfPlay, TeacherEvaluator
from omega_cluster.wiring import build_encoder, build_game, build_model, learner_config

VARIANTS = {  # row -> (model.critic, learner.value_target, the head read)
    "value (round outcome)": (False, "round", "value"),
    "value (critic targets)": (True, "critic", "value"),
    "critic": (True, "critic", "critic"),
}


def teacher_store(settings: object, games: int, seed: int, directory: Path) -> ShardStore:
    """``games`` Commander-vs-Commander games as records (with their hidden state) in a store."""
    game, encoder = build_game(settings), build_encoder(settings)  # type: ignore[arg-type]
    config = SelfPlayConfig(games=games, concurrent_games=min(32, games), mode="network",
                            record_prior=True, temperature=0.0, final_temperature=0.0,
                            seed=seed, actor="bench_value")  # fmt: skip
    evaluator = TeacherEvaluator(make_player("heuristic", game), game.num_players)
    records = list(SelfPlay(game, encoder, config, evaluator=evaluator).play())
    store = ShardStore(str(directory))
    ShardWriter(store, writer_id="bench_value").write(records)
    return store


def explained_variance(y: np.ndarray, v: np.ndarray, mask: np.ndarray) -> float:
    y, v = y[mask], v[mask]
    return float(1.0 - np.sum((y - v) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-12))


def heldout_ev(learner: Learner, store: ShardStore, head: str) -> tuple[float, int]:
    """The head's explained variance against the round outcome on every row of ``store``."""
    window = ReplayWindow(store, window_rows=10**7)
    window.refresh()
    batch = table_to_batch(window.table())
    model = learner.model.eval()
    obs = torch.as_tensor(batch.observations)
    feats = torch.as_tensor(batch.action_features)
    mask = torch.as_tensor(batch.legal_mask)
    hidden = torch.as_tensor(batch.hidden_state) if head == "critic" else None
    with torch.no_grad():
        out = model(obs, feats, mask, hidden_state=hidden)
    values = (out.critic if head == "critic" else out.values).numpy()
    y, seat_mask = relative_seats(batch.value_targets(per_round=True), batch.players,
                                  batch.num_players, values.shape[1])  # fmt: skip
    own = np.zeros_like(seat_mask)
    own[:, 0] = True  # the acting player's own value (seat-relative 0): seats' means differ
    return explained_variance(y, values, own), batch.size


def run(players: int, games: int, heldout: int, steps: int, seed: int, work: Path) -> list[dict]:
    """The three rows at one table size: each network trained in blocks of 100 steps, kept at
    the block whose EV on a validation set of games (seed + 2) is best (early stopping: a
    value head overfits the few outcomes of a few thousand games), then measured on the
    held-out games (seed + 1), which chose nothing."""
    rows: list[dict] = []
    base = [f"game.params.players={players}", "game.params.rounds=1"]
    plain = load_settings(base)
    t0 = time.perf_counter()
    train = teacher_store(plain, games, seed, work / f"train{players}")
    test = teacher_store(plain, heldout, seed + 1, work / f"test{players}")
    valid = teacher_store(plain, heldout, seed + 2, work / f"valid{players}")
    print(f"{players}p: {games} + 2 x {heldout} teacher games in {time.perf_counter() - t0:.0f} s")
    for name, (critic, target, head) in VARIANTS.items():
        settings = load_settings([*base, f"model.critic={str(critic).lower()}",
                                  f"learner.value_target={target}"])  # fmt: skip
        game, encoder = build_game(settings), build_encoder(settings)
        model = build_model(settings, game, encoder)
        learner = Learner(model, learner_config(settings, seed=seed), game=game, encoder=encoder)
        window = learner.window(train, window_rows=10**7)
        best, best_at, state = -np.inf, 0, None
        for block in range(max(steps // 100, 1)):
            learner.train_steps(window, 100)
            ev, _ = heldout_ev(learner, valid, head)
            learner.model.train()
            if ev > best:
                best, best_at = ev, 100 * (block + 1)
                state = {k: v.clone() for k, v in learner.model.state_dict().items()}
        assert state is not None
        learner.model.load_state_dict(state)
        ev, n = heldout_ev(learner, test, head)
        print(f"  {name:24} EV {ev:+.3f} on {n} held-out positions (kept at step {best_at})")
        rows.append({"players": players, "head": name, "ev": ev, "positions": n, "steps": best_at})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="2,4")
    parser.add_argument("--games", type=int, default=4000)
    parser.add_argument("--heldout", type=int, default=300)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=23201)
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    pin_threads(1)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-value-") as tmp:
        for p in (int(x) for x in args.players.split(",")):
            rows += run(p, args.games, args.heldout, args.steps, args.seed, Path(tmp))
    command = (f"python -m bench.bench_value --players {args.players} --games {args.games} "
               f"--heldout {args.heldout} --steps {args.steps} --seed {args.seed}")  # fmt: skip
    figures = []
    for r in rows:
        ref = next(x for x in rows if x["players"] == r["players"])
        figures.append(Figure(
            name=f"value EV vs round outcome, Mexican Train {r['players']}p: {r['head']}",
            figure=f"{r['ev']:.3f} ({r['positions']} held-out positions, {r['steps']} steps)",
            reference=f"value (round outcome) {ref['ev']:.3f}",
            ratio="", command=command, table="strength"))  # fmt: skip
    record("bench_value", figures, quick=not args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
