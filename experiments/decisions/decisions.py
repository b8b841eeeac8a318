"""Per-decision strength of Mexican Train searchers against Commander, paired and cheap.

A whole-game win rate needs ~1,000 games to resolve a 3-point difference. This bench measures the
same thing one decision at a time, with far less noise: positions come from Commander-vs-Commander
single rounds (2p unless ``--players``; every decision with a real choice, sampled); for each
legal move its value ``Q(move)`` is the win share of the player to move when every seat continues
as a Commander from the *true* position, averaged over ``K`` reshuffles of the boneyard (the only
chance left), the same reshuffles for every move (common random numbers). A searcher's
**advantage** on a position is ``Q(its move) - Q(Commander's move)``: what one decision of the
searcher, in Commander's place, adds to the round's win probability against Commanders. The mean
advantage over the positions (with a 95% interval) ranks searchers the way the game-level bench
does, at a fraction of the cost; the oracle (the best move under the true hands) bounds what any
searcher can gain per decision.

Specs are player specs (``ismcts:commander_rollout:400:deduce=true``),
``paired:<W>:<z>[:commander[:<checks>:<tries>]]``: every legal move on the same ``W``
determinizations (public deductions, or ``CommanderBelief`` checking that many recent moves)
with Commander continuations, Commander's move kept unless another beats it by ``z`` standard
errors of the paired difference — flat Monte Carlo with the noise of the worlds paired away — or
``truehands:<simulations>:<c_uct>[:key=value ...]``: ISMCTS + Commander rollouts whose
determinizations hold the true hands (only the boneyard's order drawn; options such as
``root_selection`` and ``opponent`` go to the search player). Caution: with the true hands every
opponent's information set is the same in every world, so the tree grows through the opponents'
nodes and they play UCT in it, not Commander — ``opponent=commander`` keeps the model true.

Measured (2p, 400 positions, 64 reshuffles, seed 1; mean advantage per decision ± 95%):
oracle +0.054 ± 0.010 (biased up by the max over noisy Q: an upper bound); ISMCTS + Commander
rollouts, public deductions: 400 simulations -0.002 ± 0.010 (differs from Commander on 45% of the
decisions), 1000 +0.005 ± 0.009, 400 with c_uct 2.5 +0.005 ± 0.009, c_uct 0.7 -0.002 ± 0.010,
``opponent=commander`` -0.002 ± 0.010, ``anchor=commander`` +0.001 ± 0.005 (differs 14%);
``paired:100:0`` +0.007 ± 0.010, ``paired:100:2`` +0.004 ± 0.004. Reading: what a single
decision can add over Commander without seeing the hands is a few thousandths of win
probability; the search's choices away from Commander's are mostly as good, not better. The
oracle's gap is what the hidden tiles hide.

Measured at 4p (``--players 4 --positions 500 --shuffles 64 --seed 11``; "vs" is the paired
difference to the first spec on the same positions): the oracle +0.071 ± 0.012, unbiased (the move
chosen on half the reshuffles, valued on the other half) +0.053 ± 0.013. ISMCTS + Commander
rollouts, deductions, c_uct 2.5: 1000 simulations +0.012 ± 0.011 (differs from Commander 37%);
2000 simulations vs 1000: -0.002 ± 0.007; c_uct 1.2 +0.001 ± 0.008, c_uct 5 -0.000 ± 0.008;
``opponent=commander`` -0.003 ± 0.007; ``belief=commander`` -0.002 ± 0.008 (3x slower);
D x S = 100 x 10 determinizations -0.002 ± 0.010, 25 x 40 -0.004 ± 0.011;
``final_policy=max_value`` +0.000 ± 0.002; ``margin=0.3`` +0.002 ± 0.007; ``rollouts=4`` the
very same moves (a Commander playout from a determinized leaf is deterministic);
``truehands:1000:2.5`` +0.016 ± 0.010 (the true hands, but a tree whose opponents play UCT:
see the caution above); flat paired evaluation ``paired:100:0`` +0.006 ± 0.011 against the
search, with ``CommanderBelief`` worlds (``paired:100:0:commander``) -0.003 ± 0.009 against
that. New search options, paired against the 1000-simulation search: ``prior=commander`` (PUCT
with the Commander's softmax) -0.004 ± 0.008 to -0.004 ± 0.009 over T in {2, 5, 10} and c_puct
in {1, 2, 3} (it stays nearer Commander's move: differs 8-22%); ``keying=observer`` (the
single-observer tree, which does reach past the opponents: depth 3-5 instead of 1) -0.011 ±
0.009 at c_uct 2.5, -0.007 ± 0.009 at 1.0 (its opponents play UCT in the tree, and the
Commanders do not); ``root_selection=sequential_halving`` (the root's moves on common worlds)
-0.005 ± 0.008, at 2,000 simulations +0.001 ± 0.007. On 300 of the positions: ``paired:100:0``
+0.004 ± 0.010; ``CommanderBelief`` with 3 checks -0.007 ± 0.011 against it, with 12 checks and
400 tries -0.005 ± 0.011, although the checks are right (the true hands pass all 1,887 of them
on 200 positions) and selective (a uniform world passes 3 checks 1 time in 16). With the true
hands and the root compared on common worlds (``truehands:1000:2.5:root_selection=
sequential_halving``) +0.023 ± 0.010 (+0.007 ± 0.006 over UCT's root), and with the opponents
kept Commanders in the tree as well (``...:opponent=commander``) +0.030 ± 0.013 (+0.014 ± 0.012
over ``truehands:1000:2.5``): perfect beliefs would be worth two to three times the search's
present gain. Reading: the search's gain
per decision (~+0.01, which makes its 4p game share ~1.25) moves by less than this screen
resolves with budget, exploration, root schedule, opponent model, tree keying or the beliefs the
public moves support; the flat evaluation that sees the hands gains +0.05, and no inference
available here recovers that. (Closing 1.25 -> 1.3 would take ~+0.0025 per decision: below this
screen's resolution, so it rules out large gains, not small ones.)

Measured 2026-11-30 (4p, 64 reshuffles). The deductions now keep what a seat proved before the draws
it still holds (``deal_constraints`` limits; the old ones stay as the spec
``lastdraw:<simulations>:<c_uct>[:key=value ...]``): ISMCTS 1000 simulations, c_uct 2.5, paired
against ``lastdraw:1000:2.5``: +0.0025 ± 0.0048 (seed 11, 500 positions; the old deductions
reproduce +0.0122 there), -0.0010 ± 0.0020 (seed 12, 500 positions, where the search itself scores
only +0.0024 ± 0.0079 and ``paired:400:0``, 400 common worlds per move, +0.0046 ± 0.0074: more
worlds do not lift it). ``posterior:<worlds>:<steps>``: flat paired evaluation on worlds from a
Markov chain over whole deals that replay the round legally with every opponent choice Commander's
(:mod:`experiments.decisions.posterior`; the best belief there is against Commanders, up to the
chain's mixing): -0.0105 ± 0.0108 against ``paired:100:0`` (seed 11, 300 positions, 3,000 steps,
about 2 s a position; the chain's worlds are autocorrelated, so fewer than 100 independent
ones). Its worlds give each opponent 0.202 of its true tiles, the deductions' 0.178, worlds
without any inference 0.173 (``python -m experiments.decisions.posterior``: 17 positions where
the chain found a legal deal; it fails on some long rounds): Commander's choices do say something
about its hand, but not what shows in the decisions.

Measured 2026-11-30 with the Commander rollouts compiled (4p, seed 11, 64 reshuffles; the
constrained deals now draw through an inlined Fisher–Yates, so the same spec lands on other
worlds than above): ISMCTS 1000 simulations, c_uct 2.5 +0.0128 ± 0.0097 (500 positions, 28 s
instead of 164 s); 4000 +0.0011 ± 0.0079 and 10,000 -0.0007 ± 0.0077 against it: the budget does
not lift it. ``anchor=commander`` (the Commander's move unless the search beats it by 1 standard
error) -0.0063 ± 0.0067, ``anchor_z=2`` -0.0087 ± 0.0076: the search's unsure deviations are
worth keeping. Flat paired evaluation on 300 of the positions: ``paired:100:0`` +0.0050,
``paired:400:0`` +0.0137, ``paired:1600:0`` +0.0171 ± 0.0107 (+0.0069 ± 0.0085 over the 1000-
simulation search, 13,000 rollouts a decision): more common worlds help a little, within noise.

Measured 2026-11-30, later (4p, 128 reshuffles; the Q table now plays the compiled Commander
too: 38 s for 2,000 positions), paired against ISMCTS 1000 simulations, c_uct 2.5. Seed 13, 2,000
positions (the search itself +0.0066 ± 0.0050): ``paired:400:0`` -0.0006 ± 0.0041,
``paired:1600:0`` +0.0041 ± 0.0039 (3.5x the time), sequential halving at 4,000 simulations
+0.0028 ± 0.0039, the paired race at the root (``root_selection=racing``: batches of 20 common
worlds, a move dropped once it trails the leader by 2 standard errors, the budget a ceiling;
5,000, ~1,550 simulations a decision, 1.7x the time) +0.0035 ± 0.0040, with ``race_z=3``
+0.0027 ± 0.0039, at 10,000 with ``race_z=2.5`` +0.0025 ± 0.0038. The race on other positions:
seed 11 (500, 64 reshuffles) -0.0016 ± 0.0071, seed 12 (1,500) -0.0004 ± 0.0043 — over the
4,000 positions +0.0014 ± 0.0025. Broken down by position (seed 13: legal moves, move number,
hand sizes, boneyard, open doubles, markers; ``--breakdown`` prints the first two) neither the
search nor ``paired:1600:0`` loses significantly against Commander anywhere; their gains grow
late in the round (move 60+: +0.028 ± 0.022) where the hands are small and the deductions sharp.
Game level, declared in advance: the race at 5,000, 2,400 games on 600 fresh deals, fair share
1.29 [1.22, 1.37] (``bench/bench_ismcts.py``). Checked on seed 14 (2,000 positions, the search
+0.0079 ± 0.0055): ``paired:1600:0`` +0.0038 ± 0.0036 over it again, so over seeds 13 and 14
+0.0040 ± 0.0026 — a real gain, about half the search's own, but at 3.5x its time; the race's
early stops give most of it away. Reading: comparing the moves on common worlds is worth a few
thousandths per decision over UCT, and only at several times its cost.

Then the same full paired evaluation as a search option, ``root_selection=racing`` with
``race_z=inf`` (no move drops for trailing; every move on the same worlds until the budget),
5,500 simulations a decision (about the 1,600 worlds a move of ``paired:1600:0`` at the
positions' mean of 3.4 moves), seed 14: +0.0103 ± 0.0053 over Commander, +0.0024 ± 0.0036 over
the search (``paired:1600:0`` there +0.0038), 4.4x its time (605 s against 139 s).

Since the search core dropped its study options (after commit c497747), the specs that use them
need that commit: ``anchor=``, ``prior=``, ``margin=``, ``epsilon=``, ``belief=``, ``opponent=``,
``keying=observer``, ``root_selection=sequential_halving`` / ``racing`` with a finite ``race_z``,
and ``truehands:`` (its ``world_sampler``). ``root_selection=racing:race_z=inf`` is now
``root=paired`` (the same moves, tested), and ``paired:``, ``posterior:``, ``lastdraw:`` and
plain ISMCTS specs run on the current tree.

Run: ``python -m experiments.decisions.decisions [--players 2] [--positions 300] [--shuffles 64]
[--quick] [--breakdown] [spec ...]``.
"""

from __future__ import annotations

import argparse
import functools
import math
import multiprocessing
import random
import time
from collections.abc import Sequence
from typing import Any

from experiments.decisions.posterior import CommanderPosterior
from omega_cluster.games import make_game
from omega_cluster.games.mexican_train.officers import Commander
from omega_cluster.players.registry import make_player
from omega_cluster.players.search import ISMCTSPlayer
from omega_cluster.search.evaluators import play_out

DEFAULT_SPECS = (
    "ismcts:commander_rollout:400:deduce=true",
    "ismcts:commander_rollout:1000:deduce=true",
)

_GAME: Any = None
_COMMANDER: Commander | None = None


def _setup(players: int) -> None:
    global _GAME, _COMMANDER
    _GAME = make_game("mexican_train", players=players, rounds=1)
    _COMMANDER = Commander(_GAME)


def positions(players: int, count: int, seed: int, rate: float = 0.25) -> list[tuple[int, int]]:
    """``(deal seed, decision index)`` of ``count`` decisions with a real choice."""
    _setup(players)
    assert _COMMANDER is not None
    rng = random.Random(seed)
    out: list[tuple[int, int]] = []
    deal = seed * 100_000
    while len(out) < count:
        s = _GAME.new_initial_state(seed=deal)
        k = 0
        while not s.is_terminal() and len(out) < count:
            p = s.current_players[0]
            if len(s.legal_actions(p)) > 1 and rng.random() < rate:
                out.append((deal, k))
            s.apply_action(_COMMANDER.act(s, p, rng))
            k += 1
        deal += 1
    return out


def _replay(deal: int, index: int) -> Any:
    assert _COMMANDER is not None
    s = _GAME.new_initial_state(seed=deal)
    rng = random.Random(0)
    for _ in range(index):
        s.apply_action(_COMMANDER.act(s, s.current_players[0], rng))
    return s


def _commander_value(state: Any, action: int, p: int, rng: random.Random) -> float:
    """Win share of ``p`` when ``action`` is played in ``state`` (mutated) and every seat then
    continues as a Commander."""
    assert _COMMANDER is not None
    state.apply_action(action)
    returns = _COMMANDER.playout_returns(state, rng)  # compiled: the same moves, ~10x faster
    if returns is not None:
        return float(returns[p])
    play_out(state, [_COMMANDER] * _GAME.num_players, rng, max_steps=100_000)
    return float(state.win_shares()[p])


Values = dict[int, float]


def _split_values(job: tuple[int, int, int]) -> tuple[Values, tuple[Values, Values]]:
    """``Q(move)`` for every legal move of the position (common boneyard reshuffles), and the
    same over the even and the odd reshuffles apart."""
    deal, index, shuffles = job
    assert _COMMANDER is not None
    state = _replay(deal, index)
    p = state.current_players[0]
    rng = random.Random(0)
    q: Values = {}
    halves: tuple[Values, Values] = ({}, {})
    for a in state.legal_actions(p):
        totals, counts = [0.0, 0.0], [0, 0]
        for k in range(shuffles):
            s = state.clone()
            random.Random(deal * 7919 + index * 131 + k).shuffle(s.boneyard)
            totals[k % 2] += _commander_value(s, a, p, rng)
            counts[k % 2] += 1
        q[a] = sum(totals) / shuffles
        for half, total, count in zip(halves, totals, counts, strict=True):
            half[a] = total / max(1, count)
    return q, halves


def _paired(
    state: Any,
    p: int,
    worlds: int,
    z: float,
    seed: int,
    belief: tuple[int, int] | None = None,
    posterior_steps: int = 0,
) -> int:
    """Every legal move on the same ``worlds`` determinizations, Commander continuations; keep
    Commander's move unless another beats it by ``z`` standard errors of the paired difference.
    The worlds honour the public deductions, or (``belief`` = (checks, tries)) come from
    ``CommanderBelief`` with that many recent moves checked and worlds tried, or
    (``posterior_steps``) from a chain of that many steps over whole deals
    (:mod:`experiments.decisions.posterior`: the round replayed legally with every opponent
    choice Commander's)."""
    from omega_cluster.games.mexican_train.belief import CommanderBelief
    from omega_cluster.games.mexican_train.inference import deal_constraints

    assert _COMMANDER is not None
    rng = random.Random(seed)
    legal = list(state.legal_actions(p))
    base = _COMMANDER.act(state, p, rng)
    constraints = deal_constraints(state, p)
    sampler = None
    if belief is not None:
        checks, tries = belief
        sampler = CommanderBelief(_GAME, commander=_COMMANDER, max_checks=checks, max_tries=tries)
    drawn: list[Any] = []
    if posterior_steps:
        chain = CommanderPosterior(state, p, _COMMANDER)
        drawn = chain.sample(worlds, posterior_steps, 3.0, random.Random(seed))
    outcomes: dict[int, list[float]] = {a: [] for a in legal}
    for k in range(worlds):
        if drawn:  # the chain's legal deals (repeated if it kept fewer)
            world = drawn[k % len(drawn)]
        elif sampler is not None:
            world = sampler(state, p, rng)
        else:  # (also when the chain found no legal deal: the deductions' worlds)
            world = state.sample_world(p, rng, constraints)
        for a in legal:
            outcomes[a].append(_commander_value(world.clone(), a, p, rng))
    best, best_score = base, 0.0
    for a in legal:
        if a == base:
            continue
        d = [x - y for x, y in zip(outcomes[a], outcomes[base], strict=True)]
        mean = sum(d) / worlds
        var = sum((x - mean) ** 2 for x in d) / max(1, worlds - 1)
        score = mean / math.sqrt(var / worlds) if var > 0 else (math.inf if mean > 0 else 0.0)
        if score > z and score > best_score:
            best, best_score = a, score
    return int(best)


def _choice(job: tuple[str, int, int]) -> int:
    spec, deal, index = job
    state = _replay(deal, index)
    p = state.current_players[0]
    if spec.startswith("paired:"):  # paired:<worlds>:<z>[:commander[:<checks>:<tries>]]
        _, worlds, z, *belief = spec.split(":")
        if belief and (belief[0] != "commander" or len(belief) not in (1, 3)):
            raise ValueError(
                f"paired: unknown belief {':'.join(belief)!r} (available: commander, "
                "commander:<checks>:<tries>)"
            )
        model = (int(belief[1]), int(belief[2])) if len(belief) == 3 else (3, 40)
        return _paired(
            state, p, int(worlds), float(z), deal * 31 + index, model if belief else None
        )
    if spec.startswith("posterior:"):  # posterior:<worlds>:<steps>
        _, worlds, steps = spec.split(":")
        return _paired(state, p, int(worlds), 0.0, deal * 31 + index, None, int(steps))
    if spec.startswith(("truehands:", "lastdraw:")):  # <kind>:<sims>:<c_uct>[:key=value ...]
        kind, simulations, c_uct, *extra = spec.split(":")
        options: dict[str, Any] = dict(item.split("=", 1) for item in extra)
        options.update(_true_hands() if kind == "truehands" else _last_draw())
        player = ISMCTSPlayer(
            _GAME, leaf="commander_rollout", simulations=int(simulations), c_uct=float(c_uct),
            **options,
        )  # fmt: skip
        return int(player.act(state, p, random.Random(deal * 31 + index)))
    player = make_player(spec, _GAME)
    return int(player.act(state, p, random.Random(deal * 31 + index)))


def _last_draw() -> dict[str, Any]:
    """Search options for the deductions as they were before 2026-11-30: only what each seat
    proved since its last kept draw (``deal_constraints(before_draws=False)``)."""
    from omega_cluster.games.mexican_train.inference import deal_constraints

    return {"world_constraints": functools.partial(deal_constraints, before_draws=False)}


def _true_hands() -> dict[str, Any]:
    """Search options for determinizations that hold the *true* hands (only the boneyard's
    order is drawn): what perfect beliefs would give the searcher."""

    def true_world(root: Any, player: int, rng: random.Random) -> Any:
        world = root.clone()
        rng.shuffle(world.boneyard)
        return world

    return {"world_sampler": true_world}


def _interval(xs: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / max(1, n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="experiments.decisions.decisions", description=__doc__)
    parser.add_argument("specs", nargs="*", default=list(DEFAULT_SPECS))
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--shuffles", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="40 positions, 16 reshuffles")
    parser.add_argument(
        "--breakdown", action="store_true", help="each spec's advantage by move number and moves"
    )
    args, _ = parser.parse_known_args(argv)  # python -m bench passes every bench's flags
    if args.quick:
        args.positions, args.shuffles = min(args.positions, 40), min(args.shuffles, 16)
        if args.specs == list(DEFAULT_SPECS):
            args.specs = ["ismcts:commander_rollout:100:deduce=true", "paired:25:1"]
    pos = positions(args.players, args.positions, args.seed)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(args.workers, initializer=_setup, initargs=(args.players,)) as pool:
        start = time.perf_counter()
        values = pool.map(_split_values, [(d, i, args.shuffles) for d, i in pos], chunksize=4)
        qs = [q for q, _ in values]
        print(
            f"mexican_train {args.players}p: {len(pos)} positions, Q from {args.shuffles} "
            f"boneyard reshuffles per move ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
        commander = pool.map(_choice, [("commander", d, i) for d, i in pos])
        oracle = [max(q.values()) - q[c] for q, c in zip(qs, commander, strict=True)]
        mean, half = _interval(oracle)
        print(f"  {'oracle (true hands)':<58} advantage {mean:+.4f} ± {half:.4f}", flush=True)
        # the max over noisy Q is biased up: pick the move on one half of the reshuffles and
        # value it on the other (and the other way round), an unbiased figure for the oracle
        split = [
            0.5
            * (qb[max(qa, key=qa.__getitem__)] - qb[c] + qa[max(qb, key=qb.__getitem__)] - qa[c])
            for (_, (qa, qb)), c in zip(values, commander, strict=True)
        ]
        mean, half = _interval(split)
        label = "oracle (true hands), chosen and valued on split halves"
        print(f"  {label:<58} advantage {mean:+.4f} ± {half:.4f}", flush=True)
        first: list[float] | None = None
        for spec in args.specs:
            start = time.perf_counter()
            moves = pool.map(_choice, [(spec, d, i) for d, i in pos], chunksize=2)
            adv = [q[m] - q[c] for q, m, c in zip(qs, moves, commander, strict=True)]
            mean, half = _interval(adv)
            differ = sum(m != c for m, c in zip(moves, commander, strict=True)) / len(pos)
            versus = ""
            if first is None:
                first = adv
            else:  # paired by position: the same positions and Q for both specs
                d_mean, d_half = _interval([a - b for a, b in zip(adv, first, strict=True)])
                versus = f", vs the first spec {d_mean:+.4f} ± {d_half:.4f}"
            print(
                f"  {spec:<58} advantage {mean:+.4f} ± {half:.4f}, differs from Commander "
                f"{differ:.0%}{versus} ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
            if args.breakdown:
                _print_breakdown(adv, pos, [len(q) for q in qs])  # Q: one value per legal move


def _print_breakdown(
    adv: Sequence[float], pos: Sequence[tuple[int, int]], legal: Sequence[int]
) -> None:
    """The advantage by the round's move number (tens; 60 and later together) and by the
    number of legal moves (6 and more together): where a searcher gains or loses."""
    for name, keys, label in (
        ("move", [min(i // 10, 6) for _, i in pos], lambda k: f"{10 * k}-{10 * k + 9}"),
        ("legal moves", [min(m, 6) for m in legal], str),
    ):
        groups: dict[int, list[float]] = {}
        for key, a in zip(keys, adv, strict=True):
            groups.setdefault(key, []).append(a)
        cells = []
        last = max(groups)
        for key in sorted(groups):
            mean, half = _interval(groups[key]) if len(groups[key]) > 1 else (groups[key][0], 0.0)
            tag = f"{label(key).split('-')[0]}+" if key == last else label(key)
            cells.append(f"{tag} {mean:+.4f} ± {half:.4f} ({len(groups[key])})")
        print(f"      by {name}: " + "; ".join(cells), flush=True)


if __name__ == "__main__":
    main()
