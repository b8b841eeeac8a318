"""How well a belief predicts where Mexican Train's hidden tiles are: the log-likelihood of the
true hidden hands on held-out positions, at 2 and 4 players.

Positions: the decisions with a real choice of Commander-vs-Commander single rounds (double-12,
default rules), each kept with probability ``--keep``; the held-out positions come from other
deals than the training ones. At each, every tile hidden from the player to move has a true
location code (the HiddenSpec codes: 1 the boneyard, ``1 + k`` the hand of the seat ``k`` after
the player), and each belief gives it a probability. Figures: the mean log-probability of the
true holder per hidden tile (nats), and per position (the sum over its hidden tiles, i.e. the
log-likelihood of the true hands under the belief's per-tile marginals), with 95% intervals over
the positions.

Beliefs compared:

* ``uniform`` — each hidden tile's holder proportional to the places left (the other hand sizes
  and the boneyard size), what the unseen counts alone say;
* ``constraints`` — the same restricted to the holders the hard deductions allow
  (:func:`~omega_cluster.games.mexican_train.inference.deal_constraints`: bans and limits),
  estimated from ``--worlds`` worlds drawn by ``sample_world`` under them: each holder's
  frequency, smoothed by one pseudo-world spread as ``uniform`` over the holders the bans allow
  (an estimate, not the exact marginal: its sampling noise costs it about ``(N - 1) / (2M)``
  nats per tile for ``N`` holders and ``M`` worlds, ~0.0015 at 4p and the default 1,000);
* ``learned`` — a small network with a belief head (``ModelConfig.belief_head``) trained by
  cross-entropy on the training positions' codes (up to ``--epochs`` passes, Adam, kept at the
  epoch of its best loss on the positions of another tenth as many rounds), its softmax over the
  codes that exist at the table;
* ``learned+constraints`` — the learned odds on the holders the bans allow, renormalised: what
  ``belief=network`` searches deal from (the observation shows only the recent public actions,
  so the network cannot see every ban that older draws and passes proved).

The codes come from ``state.hidden_state(player)`` where the game gives it, else are computed
from the state (:func:`~omega_cluster.games.mexican_train.belief_worlds.hidden_codes`).
``--quick`` is a smoke run of a few games that records nothing; a full run records the per-tile
figures into ``docs/results/bench_belief.json``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.results import Figure, record
from omega_cluster.games import make_game
from omega_cluster.games.api import Game
from omega_cluster.games.mexican_train import MexicanTrainState
from omega_cluster.games.mexican_train.belief_worlds import hidden_codes
from omega_cluster.games.mexican_train.inference import deal_constraints
from omega_cluster.players import make_player


@dataclass
class Position:
    """One decision: the state, the player to move, its hidden tiles' true codes."""

    state: MexicanTrainState
    player: int
    codes: np.ndarray  # int64[tiles]: 0 not hidden, else the true location code


def true_codes(state: MexicanTrainState, player: int) -> np.ndarray:
    """The hidden tiles' codes: the game's ``hidden_state`` when it gives one, else computed."""
    hidden = state.hidden_state(player)
    if hidden is not None:
        return np.rint(np.asarray(hidden)).astype(np.int64)
    return hidden_codes(state, player)


def positions(game: Game, games: int, seed: int, keep: float) -> list[Position]:
    """Decisions with a real choice of ``games`` Commander-vs-Commander rounds (seeds from ``seed``)."""
    commander = make_player("commander", game)
    rng = random.Random(seed)
    out: list[Position] = []
    for g in range(games):
        state: Any = game.new_initial_state(seed + g)
        while not state.is_terminal():
            p = state.current_players[0]
            if len(state.legal_actions(p)) > 1 and rng.random() < keep:
                out.append(Position(state.clone(), p, true_codes(state, p)))
            state.apply_action(commander.act(state, p, rng))
    return out


def uniform_probs(pos: Position) -> np.ndarray:
    """``float[tiles, classes]``: each unseen tile's holder proportional to the places left."""
    s, n = pos.state, pos.state.game.num_players
    probs = np.zeros((len(pos.codes), n + 1))
    probs[:, 1] = len(s.boneyard)
    for q in range(n):
        if q != pos.player:
            probs[:, 1 + (q - pos.player) % n] = s.hands[q].bit_count()
    return probs / probs.sum(axis=1, keepdims=True)


def allowed(pos: Position) -> np.ndarray:
    """``bool[tiles, classes]``: the holders the hard deductions leave each tile (bans)."""
    n = pos.state.game.num_players
    facts = deal_constraints(pos.state, pos.player)
    mask = np.ones((len(pos.codes), n + 1), bool)
    if facts is not None:
        for q in range(n):
            if q != pos.player:
                banned = [t for t in range(len(pos.codes)) if facts.forbidden[q] >> t & 1]
                mask[banned, 1 + (q - pos.player) % n] = False
    return mask


def constraint_probs(pos: Position, worlds: int, rng: random.Random) -> np.ndarray:
    """Holder frequencies over ``worlds`` worlds under the hard deductions, smoothed by one
    pseudo-world spread like :func:`uniform_probs` over the holders the bans allow."""
    facts = deal_constraints(pos.state, pos.player)
    prior = np.where(allowed(pos), uniform_probs(pos), 0.0)
    mass = prior.sum(axis=1, keepdims=True)
    counts = np.divide(prior, mass, out=np.zeros_like(prior), where=mass > 0)
    rows = np.arange(len(pos.codes))
    for _ in range(worlds):
        world = pos.state.sample_world(pos.player, rng, facts)
        counts[rows, hidden_codes(world, pos.player)] += 1
    counts[:, 0] = 0.0  # the tiles not hidden: rows of zeros
    total = counts.sum(axis=1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)


def _renormalised(probs: np.ndarray) -> np.ndarray:
    total = probs.sum(axis=1, keepdims=True)
    return np.divide(probs, total, out=np.zeros_like(probs), where=total > 0)


def log_likelihoods(pos: Position, probs: np.ndarray) -> np.ndarray:
    """Log-probability of the true holder of each hidden tile (codes >= 1)."""
    hidden = np.nonzero(pos.codes >= 1)[0]
    return np.log(probs[hidden, pos.codes[hidden]])


@dataclass(frozen=True)
class Row:
    """A belief's figures on the held-out positions."""

    per_tile: float  # mean log-probability of the true holder over every hidden tile
    per_tile_ci: float  # 95% half-width, over positions (their per-tile means)
    per_position: float  # mean over positions of the sum over its hidden tiles
    per_position_ci: float


def summarize(per_position: Sequence[np.ndarray]) -> Row:
    sums = np.array([x.sum() for x in per_position])
    means = np.array([x.mean() for x in per_position])
    tiles = np.concatenate(list(per_position))

    def half(x: np.ndarray) -> float:
        return 1.96 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1 else float("nan")

    return Row(float(tiles.mean()), half(means), float(sums.mean()), half(sums))


def _masked_logits(logits: Any, n: int) -> Any:
    """Logits with the codes that do not exist at an ``n``-player table (0 and > n) at -inf."""
    out = logits.clone()
    out[..., 0] = float("-inf")
    out[..., n + 1 :] = float("-inf")
    return out


def train_belief(
    game: Game, train: list[Position], valid: list[Position], epochs: int, seed: int
) -> tuple[Any, Any]:
    """A small network with a belief head trained on ``train``'s codes, kept at the epoch of
    its best loss on ``valid``, and its encoder."""
    import torch

    from omega_cluster.games.encoding import HiddenSpec
    from omega_cluster.games.mexican_train.encoder import MexicanTrainEncoder
    from omega_cluster.model.network import ModelConfig, PolicyValueNet

    torch.manual_seed(seed)
    encoder = MexicanTrainEncoder(game, max_players=game.num_players)
    hidden = encoder.info().hidden or HiddenSpec(
        "locations", encoder.num_tiles, 1 + encoder.max_players
    )
    config = ModelConfig.for_encoder(
        encoder, game, hidden_size=128, num_layers=1, belief_head=True, hidden=hidden
    )
    net = PolicyValueNet(config, encoder.observation_size, encoder.action_feature_size)
    best = _fit(net, encoder, _tensors(encoder, train), _tensors(encoder, valid), epochs)
    print(f"  learned: best validation loss {best:.4f} nats per hidden tile")
    return net, encoder


def _tensors(encoder: Any, found: list[Position]) -> tuple[Any, Any]:
    import torch

    obs = np.stack([encoder.encode_observation(p.state, p.player) for p in found])
    return torch.from_numpy(obs), torch.from_numpy(np.stack([p.codes for p in found]))


def _fit(
    net: Any, encoder: Any, train: tuple[Any, Any], valid: tuple[Any, Any], epochs: int
) -> float:
    """Adam on the belief cross-entropy (the hidden items, the codes of the table); the weights
    of the epoch with the best validation loss are kept (early stopping: the positions of a
    few hundred rounds are easy to memorize)."""
    import torch

    n = encoder.max_players  # the table size (the encoder is built for it)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)

    def loss_of(obs: Any, codes: Any) -> Any:
        logits = _masked_logits(_belief_logits(net, encoder, obs), n)
        items = codes >= 1
        return torch.nn.functional.cross_entropy(logits[items], codes[items])

    best, best_state = math.inf, None
    for _ in range(epochs):
        net.train()
        order = torch.randperm(len(train[0]))
        for start in range(0, len(order), 256):
            idx = order[start : start + 256]
            loss = loss_of(train[0][idx], train[1][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            now = float(loss_of(*valid))
        if now < best:
            best, best_state = now, {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:
        net.load_state_dict(best_state)
    net.eval()
    return best


def _belief_logits(net: Any, encoder: Any, obs: Any) -> Any:
    """The belief head's logits ``[B, tiles, classes]`` (the action inputs are a dummy row: the
    belief head reads the public trunk only)."""
    import torch

    b = obs.shape[0]
    feats = torch.zeros((b, 1, encoder.action_feature_size))
    mask = torch.ones((b, 1), dtype=torch.bool)
    return net(obs, feats, mask).belief


def learned_probs(model: Any, heldout: list[Position]) -> list[np.ndarray]:
    import torch

    from omega_cluster.players.belief import probabilities

    net, encoder = model
    obs = torch.from_numpy(
        np.stack([encoder.encode_observation(p.state, p.player) for p in heldout])
    )
    with torch.inference_mode():
        logits = _belief_logits(net, encoder, obs).double().numpy()
    n = heldout[0].state.game.num_players
    return [probabilities(logits[i], n) for i in range(len(heldout))]


def table(players: int, args: argparse.Namespace) -> dict[str, Row]:
    """The rows at one table size."""
    game = make_game("mexican_train", players=players, rounds=1)
    t0 = time.perf_counter()
    train = positions(game, args.games, args.seed, args.keep)
    heldout = positions(game, args.heldout_games, args.seed + 1_000_000, args.keep)
    heldout = heldout[: args.positions]
    print(f"{players}p: {len(train)} training positions, {len(heldout)} held out "
          f"({time.perf_counter() - t0:.0f} s)")  # fmt: skip
    rng = random.Random(args.seed)
    rows = {
        "uniform": summarize([log_likelihoods(p, uniform_probs(p)) for p in heldout]),
        "constraints": summarize(
            [log_likelihoods(p, constraint_probs(p, args.worlds, rng)) for p in heldout]
        ),
    }
    valid = positions(game, max(1, args.games // 10), args.seed + 500_000, args.keep)
    model = train_belief(game, train, valid, args.epochs, args.seed)
    probs = learned_probs(model, heldout)
    rows["learned"] = summarize(
        [log_likelihoods(p, q) for p, q in zip(heldout, probs, strict=True)]
    )
    # what belief=network samples from: the learned odds on the holders the bans allow
    banned = [
        _renormalised(np.where(allowed(p), q, 0.0)) for p, q in zip(heldout, probs, strict=True)
    ]
    rows["learned+constraints"] = summarize(
        [log_likelihoods(p, q) for p, q in zip(heldout, banned, strict=True)]
    )
    for name, row in rows.items():
        print(f"  {name:20s} per tile {row.per_tile:+.4f} ± {row.per_tile_ci:.4f}   "
              f"per position {row.per_position:+.2f} ± {row.per_position_ci:.2f}")  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.bench_belief", description=__doc__)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--games", type=int, default=1500, help="training rounds per table")
    parser.add_argument("--heldout-games", type=int, default=60)
    parser.add_argument("--positions", type=int, default=1000, help="held-out positions at most")
    parser.add_argument("--keep", type=float, default=0.5, help="share of decisions kept")
    parser.add_argument(
        "--worlds", type=int, default=1000, help="worlds per position (constraints)"
    )
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smoke run; records nothing")
    args = parser.parse_args(argv)
    if args.quick:
        args.games, args.heldout_games, args.worlds, args.epochs = 6, 2, 20, 2
    command = "python -m bench.bench_belief " + " ".join(sys.argv[1:] if argv is None else argv)
    figures = []
    for players in args.players:
        rows = table(players, args)
        base = rows["uniform"]
        for name, row in rows.items():
            figures.append(
                Figure(
                    name=f"belief log-likelihood per hidden tile, Mexican Train {players}p: {name}",
                    figure=f"{row.per_tile:+.4f} ± {row.per_tile_ci:.4f} nats "
                    f"({row.per_position:+.2f} per position)",
                    reference=f"uniform {base.per_tile:+.4f}",
                    ratio=f"{row.per_tile - base.per_tile:+.4f} nats",
                    command=command.strip(),
                    table="strength",
                )
            )
    record("bench_belief", figures, quick=args.quick)


if __name__ == "__main__":
    main()
