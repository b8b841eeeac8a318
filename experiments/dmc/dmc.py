"""Deep Monte-Carlo (DouZero, Zha et al. 2021) on Mexican Train 2p: the search-free route.

``python experiments/dmc/dmc.py --minutes 15 --deals 200 --seed 23501``

The action-conditioned network's score of a legal action is read as Q(s, a) and regressed on the
Monte-Carlo return of its own self-play (the acting player's round outcome, its win share), with
ε-greedy exploration; no search, no visit targets. It starts where `make train` starts — the
warm start ``v0`` of ``run=default`` (2,000 Commander games, 100 steps) — and trains for
``--minutes`` of wall-clock on this machine (self-play and learning in one process: 64 games
in flight, one batched forward pass per decision round, then ``--steps`` AdamW steps on the
newest 100,000 decisions). Then the greedy Q-network and ``v0`` (the `make train` champion:
its run promoted nothing) each play ``--deals`` fresh deals against Commander from both seats
(the same deals and seats: a paired contrast), seeds from ``--seed``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections import deque
from pathlib import Path

import numpy as np
import torch

from omega_cluster.config import load_settings
from omega_cluster.eval.stats import mean_ci
from omega_cluster.model.network import pad_batch
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player
from omega_cluster.wiring import build_encoder, build_game, build_model, warm_start


def scores(model, encoder, state, player):  # type: ignore[no-untyped-def]
    legal = state.legal_actions(player)
    obs = encoder.encode_observation(state, player)
    feats = encoder.encode_actions(state, player, legal)
    o, f, m = pad_batch([obs], [feats])
    with torch.no_grad():
        return legal, model(o, f, m).logits[0, : len(legal)].numpy()


def play_round(model, encoder, games, seeds, eps, rng):  # type: ignore[no-untyped-def]
    """``len(seeds)`` self-play games at once, ε-greedy on Q; the (obs, action features, player)
    of every decision with a choice, and each game's returns."""
    states = [games.new_initial_state(s) for s in seeds]
    logs: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in states]
    while True:
        rows = []
        for i, s in enumerate(states):
            while not s.is_terminal() and len(s.legal_actions(s.current_players[0])) == 1:
                p = s.current_players[0]
                s.apply_action(s.legal_actions(p)[0])
            if not s.is_terminal():
                rows.append(i)
        if not rows:
            break
        obs, feats, legals = [], [], []
        for i in rows:
            s = states[i]
            p = s.current_players[0]
            legal = s.legal_actions(p)
            obs.append(encoder.encode_observation(s, p))
            feats.append(encoder.encode_actions(s, p, legal))
            legals.append((p, legal))
        o, f, m = pad_batch(obs, feats)
        with torch.no_grad():
            q = model(o, f, m).logits.numpy()
        for k, i in enumerate(rows):
            p, legal = legals[k]
            j = (
                rng.randrange(len(legal))
                if rng.random() < eps
                else int(np.argmax(q[k, : len(legal)]))
            )
            logs[i].append((obs[k], feats[k][j], p))
            states[i].apply_action(legal[j])
    return [(log, np.asarray(s.returns(), np.float32)) for log, s in zip(logs, states, strict=True)]


def bench(model, encoder, game, deals, seed):  # type: ignore[no-untyped-def]
    """Win share per game of the greedy network against Commander, deal d from both seats."""
    commander = make_player("commander", game)
    rng, out = random.Random(seed), []
    for d in range(deals):
        for seat in (0, 1):
            s = game.new_initial_state(seed + d)
            while not s.is_terminal():
                p = s.current_players[0]
                if p == seat:
                    legal, q = scores(model, encoder, s, p)
                    s.apply_action(legal[int(np.argmax(q))])
                else:
                    s.apply_action(commander.act(s, p, rng))
            out.append(float(s.returns()[seat]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--seed", type=int, default=23501)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=50, help="learner steps per 64 games")
    parser.add_argument("--lr", type=float, default=1e-4)
    args = parser.parse_args()
    pin_threads(1)
    settings = load_settings(["game.params.players=2", "game.params.rounds=1"])
    game, encoder = build_game(settings), build_encoder(settings)
    v0 = build_model(settings, game, encoder)
    with tempfile.TemporaryDirectory() as tmp:
        warm_start(settings, game, encoder, v0, Path(tmp))
    v0.eval()
    model = build_model(settings, game, encoder)
    model.load_state_dict(v0.state_dict())
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    buffer: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=100_000)
    rng, nrng = random.Random(args.seed), np.random.default_rng(args.seed)
    started, played, steps, losses = time.perf_counter(), 0, 0, []
    while time.perf_counter() - started < 60 * args.minutes:
        model.eval()
        seeds = [10**9 + played + i for i in range(64)]
        for log, returns in play_round(model, encoder, game, seeds, args.epsilon, rng):
            buffer.extend((o, a, float(returns[p])) for o, a, p in log)
        played += 64
        model.train()
        for _ in range(args.steps):
            idx = nrng.integers(0, len(buffer), size=256)
            o = torch.from_numpy(np.stack([buffer[i][0] for i in idx]))
            a = torch.from_numpy(np.stack([buffer[i][1] for i in idx]))[:, None, :]
            y = torch.tensor([buffer[i][2] for i in idx])
            q = model(o, a, torch.ones((256, 1), dtype=torch.bool)).logits[:, 0]
            loss = torch.nn.functional.mse_loss(q, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        steps += args.steps
        if played % 640 == 0:
            print(f"{time.perf_counter() - started:5.0f} s: {played} games, {steps} steps, "
                  f"Q loss {np.mean(losses[-200:]):.4f}", flush=True)  # fmt: skip
    model.eval()
    print(f"trained {played} games, {steps} steps in {args.minutes} min")
    a = bench(model, encoder, game, args.deals, args.seed)
    b = bench(v0, encoder, game, args.deals, args.seed)
    for name, x in (("DMC", a), ("v0", b)):
        ci = mean_ci(x)
        print(
            f"{name:4} vs Commander: {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] over {len(x)} games"
        )
    diff = mean_ci(
        [(a[2 * d] + a[2 * d + 1] - b[2 * d] - b[2 * d + 1]) / 2 for d in range(args.deals)]
    )
    print(f"DMC - v0, paired by deal: {diff.estimate:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}]")


if __name__ == "__main__":
    main()
