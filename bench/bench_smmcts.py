"""SM-MCTS on Goofspiel-13: iterations per second, and strength against joint-action MCTS.

Speed. :class:`~omega_cluster.search.smmcts.SMMCTS` (decoupled UCB, one uniform-random rollout per
leaf) searches the same Goofspiel-13 positions on the native engine and on OpenSpiel's C++
``goofspiel`` through the OpenSpiel adapter (``make_game("openspiel:goofspiel", num_cards=13)``).
Both engines number actions and chance outcomes alike, so with the same rng the two searches are
the same search (the bench checks that their visit counts agree) and the ratio is pure engine +
adapter cost (both on the Python loop, ``fast=False``). The imp_info variant (a ``sample_world`` per
iteration) and the compiled SM-MCTS (:mod:`omega_cluster.search.fast.smm`, what ``SMMCTS`` runs on
Goofspiel by default) are printed too.

Strength. SM-MCTS (decoupled UCB at simultaneous nodes, Lanctot et al. 2013) against *sequential
joint-action MCTS* (:class:`JointActionMCTS`, plain MCTS with one bandit over the joint actions)
with the same budget (iterations per move), the same leaf (one random rollout) and the same UCB
constant, on Goofspiel-13 with ``win_loss`` returns and random point order. The baseline runs one
UCB1 bandit over joint actions ``(a0, a1)`` at a simultaneous node, scored with the searcher's own
value, and plays the searcher's part of its most-visited joint action: a pure strategy. A second,
stronger baseline ``serialized`` lets the searcher pick first and the opponent answer with its
own UCB, *seeing* the searcher's pick (the usual way to run sequential MCTS on a simultaneous
game; it plans against a worst case and also plays a pure strategy). Games come in seat-swapped
pairs over the same point-card deal; a win scores 1, a tie 1/2 (ties count half), a loss 0; 95%
Wilson intervals. Bar (set when SM-MCTS was added): >= 70% for decoupled UCB against the
joint-action baseline.

How SM-MCTS turns its mixed strategy into a move matters at these budgets: each line says whether
it plays the most-weighted action (``temperature=0``) or samples the strategy (``temperature=1``,
the default). With a few hundred iterations over 13 bids, UCB's visit distribution is still mostly
exploration (e.g. 47 of 300 visits on the best bid), so sampling it plays close to uniformly and
loses to the baselines' pure moves (measured 55% at 300 and 45% at 500 iterations vs the joint
baseline, 22% vs serialized) while the most-visited move scores ~70% (dev runs of 100 games:
73% at 300, 68.5% at 500 iterations). Mixing pays against opponents that adapt to it, which these
baselines do not; the sampled policy is the right *training target* and self-play move. Giving
SM-MCTS alone another UCB constant did not help (c = 0.7 / 2.5 / 4: 58 / 71.5 / 67%, 100 games
each), so both searches share c = 1.4.

Where the time goes (cProfile, 5k iterations from the first decision of Goofspiel-13): the random
rollout (``RolloutEvaluator`` -> ``play_out`` -> the game's steps and ``RandomPlayer.act``) ~65 %;
the tree walk ~30 % (bandit selection ~9 %, node creation ~6 %, the joint steps on the world ~5 %,
the walk itself and the back-up the rest); the generator round trip and ``run_searches`` ~4 %.
A faster leaf (a game-specific ``random_playout`` as Mexican Train has, or a value network) is
where more iterations per second would come from.

``--quick``: fewer iterations and games (a smoke run, ~20 s). Timings are noisy when other
processes share the cores.
"""

from __future__ import annotations

import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from omega_cluster.eval.stats import wilson_interval
from omega_cluster.games import make_game
from omega_cluster.games.api import CHANCE, Game, State
from omega_cluster.games.player import RandomPlayer
from omega_cluster.search.evaluators import Evaluator, Leaf, RolloutEvaluator
from omega_cluster.search.smmcts import SMMCTS

C_UCT = 1.4


class _JointNode:
    __slots__ = ("children", "n", "options", "owner", "visits", "w")

    def __init__(self, owner: int, options: list[Any]) -> None:
        self.owner = owner  # whose value this node's bandit maximises (-1: chance / terminal)
        self.options = options  # joint actions, or one player's actions
        self.n = [0] * len(options)
        self.w = [0.0] * len(options)
        self.children: dict[Any, _JointNode] = {}
        self.visits = 0


class JointActionMCTS:
    """Sequential MCTS applied to a simultaneous game, the baseline SM-MCTS is measured against.

    ``mode="joint"``: one UCB1 bandit over the joint actions at a simultaneous node, maximising the
    searcher's value (|A0|·|A1| arms, one per joint action). ``mode="serialized"``:
    the searcher picks first, then each other acting player picks by its own UCB knowing the
    earlier picks. Either way the answer is pure: the searcher's part of the most-visited option.
    Same leaf as SM-MCTS (``evaluator``, one leaf at a time) and rewards rescaled to [0, 1].
    """

    def __init__(self, game: Game, evaluator: Evaluator, simulations: int, mode: str) -> None:
        if mode not in ("joint", "serialized"):
            raise ValueError(f"mode={mode!r}; allowed: 'joint', 'serialized'")
        self.game, self.evaluator, self.simulations, self.mode = game, evaluator, simulations, mode
        spec = game.spec
        self.lo = spec.min_return if spec.min_return is not None else 0.0
        hi = spec.max_return if spec.max_return is not None else 1.0
        self.inv_span = 1.0 / (hi - self.lo)

    def act(self, state: State, player: int, rng: random.Random) -> int:
        root = self._node(state, player, ())
        for _ in range(self.simulations):
            self._iterate(root, state.clone(), player, rng)
        best = max(range(len(root.options)), key=lambda i: (root.n[i], -i))
        choice = root.options[best]
        return choice[state.current_players.index(player)] if isinstance(choice, tuple) else choice

    def _node(self, state: State, player: int, prefix: tuple[int, ...]) -> _JointNode:
        acting = state.current_players
        if not acting or acting[0] == CHANCE:
            return _JointNode(-1, [])
        if len(acting) == 1:
            return _JointNode(acting[0], list(state.legal_actions(acting[0])))
        if self.mode == "joint":
            legal = [state.legal_actions(p) for p in acting]
            return _JointNode(player, [tuple(j) for j in product(*legal)])
        order = self._order(acting, player)
        who = order[len(prefix)]
        return _JointNode(who, list(state.legal_actions(who)))

    @staticmethod
    def _order(acting: tuple[int, ...], player: int) -> list[int]:
        return [player, *(p for p in acting if p != player)] if player in acting else list(acting)

    def _iterate(self, root: _JointNode, state: State, player: int, rng: random.Random) -> None:
        node, path = root, []
        prefix: tuple[Any, ...] = ()
        while True:
            acting = state.current_players
            if not acting:
                values = state.returns()
                break
            if node.visits == 0 and node is not root and not prefix and acting[0] != CHANCE:
                values = self.evaluator.evaluate([Leaf(state, player, (), rng)])[0].values
                break
            if acting[0] == CHANCE:
                outcomes = state.chance_outcomes()
                key: Any = outcomes[int(rng.random() * len(outcomes))][0]  # uniform in Goofspiel
                state.apply_action(key)
            else:
                i = self._ucb(node, rng)
                path.append((node, i))
                key = node.options[i]
                if self.mode == "serialized" and len(acting) > 1:
                    prefix = (*prefix, key)
                    if len(prefix) < len(acting):  # more players to pick at this state
                        child = node.children.get(key)
                        if child is None:
                            child = node.children[key] = self._node(state, player, prefix)
                        node = child
                        continue
                    order = self._order(acting, player)
                    key = tuple(prefix[order.index(p)] for p in acting)
                    prefix = ()
                if len(acting) > 1:
                    state.apply_joint_action_unchecked(key)
                else:
                    state.apply_action_unchecked(key)
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = self._node(state, player, ())
            node = child
        node.visits += 1
        for nd, i in path:
            nd.visits += 1
            nd.n[i] += 1
            nd.w[i] += (values[nd.owner] - self.lo) * self.inv_span

    @staticmethod
    def _ucb(node: _JointNode, rng: random.Random) -> int:
        n, w = node.n, node.w
        untried = [i for i, x in enumerate(n) if x == 0]
        if untried:
            return untried[int(rng.random() * len(untried))]
        cl = C_UCT * math.sqrt(math.log(node.visits)) if node.visits > 1 else 0.0
        scores = [wi / ni + cl / math.sqrt(ni) for wi, ni in zip(w, n, strict=True)]
        return scores.index(max(scores))


# -- speed -------------------------------------------------------------------------------------
def _positions(game: Game, count: int) -> list[State]:
    """Decision positions a few turns in (random play, fixed seeds): the first one and later ones."""
    out = []
    for k in range(count):
        rng, state = random.Random(100 + k), game.new_initial_state()
        state.apply_action(game.spec.num_actions - 1 - k % 3)
        for _ in range(k % 4):
            state.apply_joint_action(tuple(RandomPlayer().act(state, p, rng) for p in (0, 1)))
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
        out.append(state)
    return out


def speed(quick: bool) -> None:
    """Iterations/s of the same searches on each engine: per position the best of ``repeats``
    timings, the engines interleaved so that load from other processes hits both alike."""
    positions, sims, repeats = (2, 1000, 1) if quick else (4, 2000, 3)
    engines = {
        "native goofspiel": ("goofspiel", {}, sims, False),
        "openspiel:goofspiel (C++)": ("openspiel:goofspiel", {}, sims, False),
        "native, imp_info=True": ("goofspiel", {"imp_info": True}, sims // 2, False),
        "native, compiled": ("goofspiel", {}, sims, True),
    }
    setups = {}
    for label, (name, params, budget, fast) in engines.items():
        game = make_game(name, num_cards=13, **params)
        search = SMMCTS(game, RolloutEvaluator(RandomPlayer()), simulations=budget, fast=fast)
        setups[label] = (search, _positions(game, positions), budget)
        if fast:  # load numba's cache (or compile) before timing
            search.search(setups[label][1][0], 0, random.Random(0))
    best = {label: [math.inf] * positions for label in engines}
    visits: dict[str, list[tuple[int, ...]]] = {label: [] for label in engines}
    for _ in range(repeats):
        for label, (search, states, _budget) in setups.items():
            visits[label] = []
            for i, state in enumerate(states):
                start = time.perf_counter()
                result = search.search(state, i % 2, random.Random(i))
                best[label][i] = min(best[label][i], time.perf_counter() - start)
                visits[label].append(result.visits)
    rate = {label: positions * setups[label][2] / sum(best[label]) for label in engines}
    native, spiel = rate["native goofspiel"], rate["openspiel:goofspiel (C++)"]
    same = visits["native goofspiel"] == visits["openspiel:goofspiel (C++)"]
    print(
        f"SM-MCTS (decoupled UCB, 1 random rollout/leaf), Goofspiel-13, {positions} positions x "
        f"{sims} iterations, best of {repeats}"
    )
    print(f"  native goofspiel            {native:10,.0f} iterations/s")
    print(
        f"  openspiel:goofspiel (C++)   {spiel:10,.0f} iterations/s   native / openspiel = "
        f"{native / spiel:.2f}x ({'identical searches' if same else 'SEARCHES DIFFER'})"
    )
    print(
        f"  native, imp_info=True       {rate['native, imp_info=True']:10,.0f} iterations/s"
        "   (a sample_world per iteration)"
    )
    print(
        f"  native, compiled SM-MCTS    {rate['native, compiled']:10,.0f} iterations/s"
        f"   compiled / openspiel = {rate['native, compiled'] / spiel:.2f}x"
    )


# -- strength ----------------------------------------------------------------------------------
Task = tuple[int, str, str, int, int, int, dict[str, Any]]


@dataclass(frozen=True)
class Line:
    """One matchup of the strength table."""

    label: str  # how SM-MCTS plays
    selection: str  # SMMCTSConfig.selection
    options: dict[str, Any]  # other SMMCTSConfig fields
    baseline: str  # JointActionMCTS mode
    deals: int  # seat-swapped pairs (full run)


LINES = [
    Line("UCB, most visited (T=0)", "ucb", {"temperature": 0.0}, "joint", 150),  # the bar
    Line("UCB, sampled visits (T=1)", "ucb", {}, "joint", 50),
    Line("Exp3, argmax average (T=0)", "exp3", {"final_strategy": "average", "temperature": 0.0},
         "joint", 50),
    Line("Exp3, sampled average (T=1)", "exp3", {"final_strategy": "average"}, "joint", 50),
    Line("RM, argmax average (T=0)", "regret_matching",
         {"final_strategy": "average", "temperature": 0.0}, "joint", 50),
    Line("RM, sampled average (T=1)", "regret_matching", {"final_strategy": "average"}, "joint",
         50),
    Line("UCB, most visited (T=0)", "ucb", {"temperature": 0.0}, "serialized", 50),
]  # fmt: skip


def _game_task(task: Task) -> tuple[int, float]:
    """One game: SM-MCTS (``selection``, ``options``) at ``seat`` vs the baseline (``mode``);
    returns (line, SM-MCTS's score)."""
    line, selection, mode, deal, seat, sims, options = task
    game = make_game("goofspiel", num_cards=13)  # win_loss, random point order
    evaluator = RolloutEvaluator(RandomPlayer())
    ours = SMMCTS(
        game, evaluator, simulations=sims, selection=selection, **{"c_uct": C_UCT, **options}
    )
    theirs = JointActionMCTS(game, evaluator, sims, mode)
    chance = random.Random(deal)  # the deal: the same point-card order for both seatings
    rngs = [random.Random(deal * 1000 + 10 * seat + p) for p in (0, 1)]
    state = game.new_initial_state()
    while state.current_players:
        acting = state.current_players
        if acting[0] == CHANCE:
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(chance.random() * len(outcomes))][0])
            continue
        joint = tuple(
            ours.search(state, p, rngs[p]).action if p == seat else theirs.act(state, p, rngs[p])
            for p in acting
        )
        state.apply_joint_action(joint)
    return line, (state.returns()[seat] + 1.0) / 2.0  # win 1, tie 1/2, loss 0


def strength(quick: bool, processes: int = 2) -> None:
    sims = 100 if quick else 300
    tasks: list[Task] = [
        (k, line.selection, line.baseline, deal, seat, sims, line.options)
        for k, line in enumerate(LINES)
        for deal in range(4 if quick else line.deals)
        for seat in (0, 1)
    ]
    print(
        f"\nStrength, Goofspiel-13 win_loss, random point order: SM-MCTS vs sequential "
        f"joint-action MCTS, {sims} iterations/move each, 1 random rollout/leaf, c={C_UCT}; "
        f"seat-swapped games over shared deals; score = wins + ties/2; {processes} processes"
    )
    start = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        results = pool.map(_game_task, tasks, chunksize=2)
    elapsed = time.perf_counter() - start
    for k, line in enumerate(LINES):
        scores = [s for j, s in results if j == k]
        ci = wilson_interval(sum(scores), len(scores))
        wins, ties = sum(s == 1.0 for s in scores), sum(s == 0.5 for s in scores)
        bar = "  <- bar >= 70%" if k == 0 else ""
        print(
            f"  SM-MCTS {line.label:<28} vs {line.baseline:<10} {ci.estimate:6.1%}  95% CI "
            f"[{ci.low:5.1%}, {ci.high:5.1%}]  {len(scores):3d} games: {wins} W {ties} T "
            f"{len(scores) - wins - ties} L{bar}"
        )
    print(f"  ({len(tasks)} games in {elapsed:.0f} s)")


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    quick = "--quick" in args
    speed(quick)
    strength(quick)


if __name__ == "__main__":
    main()
