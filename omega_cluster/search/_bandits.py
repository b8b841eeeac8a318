"""Per-player bandits of simultaneous-move MCTS: decoupled UCB1, Exp3 and regret matching.

Internal to :mod:`omega_cluster.search.smmcts`. At a node where several players act at once, each
acting player owns one :class:`Bandit` over *its own* actions and picks from it without looking at
the others' picks (decoupled selection, Lanctot et al. 2013; Lisý et al. 2013; Tak et al. 2014); the
joint action is the tuple of picks. A node where one player acts is a bandit of that player alone.

Rewards reaching a bandit are the player's own value rescaled to [0, 1] (UCB1 and Exp3 assume
bounded rewards in that range). Statistics are lists indexed by *position* (the order in which the
bandit met its actions, ``Bandit.legal``); a selection looks only at ``cand``, the positions the
search allows this visit (every legal action or, in hidden-information mode, the actions legal in
the sampled world). Exp3 and regret matching mix their strategy with ``GAMMA``-uniform
exploration.

Each selection records what its update needs on the bandit itself (``last``, ``last_prob``,
``last_cand``): a node occurs at most once on a selection path, so no per-path allocation is needed.
"""

from __future__ import annotations

import math
import random

__all__ = [
    "EXP3",
    "GAMMA",
    "REGRET_MATCHING",
    "UCB",
    "Bandit",
    "average_strategy",
    "select",
    "update",
]

UCB, EXP3, REGRET_MATCHING = 0, 1, 2
GAMMA = 0.1  # uniform exploration γ of Exp3 (learning rate η = γ/K) and regret matching
_exp = math.exp
_log = math.log
_sqrt = math.sqrt


class Bandit:
    """One acting player's statistics at one node."""

    __slots__ = (
        "avail",  # int per position: visits in which the action was a candidate (hidden mode)
        "index",  # action -> position (None until first needed)
        "last",  # position picked at the latest selection
        "last_cand",  # the candidate positions of the latest selection (regret matching)
        "last_prob",  # probability of ``last`` at the latest selection
        "legal",  # actions in position order
        "n",  # int per position: times picked
        "order",  # every position, ascending (a perfect-information visit's candidates)
        "player",  # whose bandit
        "regret",  # float per position: cumulative regret (RM) or reward estimate (Exp3)
        "strategy",  # float per position: summed σ without its γ exploration (Exp3, RM)
        "total",  # selections made at this bandit
        "w",  # float per position: summed reward in [0, 1]
    )

    def __init__(self, player: int, legal: list[int]) -> None:
        k = len(legal)
        self.player = player
        self.legal = legal
        self.index: dict[int, int] | None = None  # built on first use (hidden mode, hooks, result)
        self.n = [0] * k
        self.w = [0.0] * k
        self.regret = [0.0] * k
        self.strategy = [0.0] * k
        self.avail = [0] * k
        self.order = list(range(k))
        self.total = 0
        self.last = -1
        self.last_prob = 0.0
        self.last_cand: list[int] = self.order

    def position(self, action: int) -> int:
        """The position of ``action``, appending it if the bandit has not met it (hidden mode)."""
        index = self.index
        if index is None:
            index = self.index = {a: i for i, a in enumerate(self.legal)}
        i = index.get(action)
        if i is None:
            i = len(self.legal)
            index[action] = i
            self.legal.append(action)
            self.n.append(0)
            self.w.append(0.0)
            self.regret.append(0.0)
            self.strategy.append(0.0)
            self.avail.append(0)
            self.order.append(i)
        return i


def select(
    b: Bandit, cand: list[int], rule: int, c: float, gamma: float, rng: random.Random, hidden: bool
) -> int:
    """Pick a position among ``cand`` with ``rule``; record what :func:`update` needs."""
    if rule == UCB:
        i = _select_ucb(b, cand, c, rng, hidden)
        b.last_prob = 1.0
    elif rule == EXP3:
        i = _select_exp3(b, cand, gamma, rng)
    else:
        i = _select_regret_matching(b, cand, gamma, rng)
    b.last = i
    b.last_cand = cand
    return i


def _select_ucb(b: Bandit, cand: list[int], c: float, rng: random.Random, hidden: bool) -> int:
    """Decoupled UCB1 (Auer et al. 2002; Lanctot et al. 2013): untried actions first, in random
    order, then argmax of mean + c·sqrt(ln N / n). In hidden-information mode N is the action's
    availability count, as in ISMCTS (Cowling, Powley & Whitehouse 2012), because the set of legal
    actions differs between sampled worlds."""
    n, w = b.n, b.w
    untried = [i for i in cand if n[i] == 0]
    if untried:
        return untried[int(rng.random() * len(untried))] if len(untried) > 1 else untried[0]
    best, best_score = cand[0], -1.0
    if hidden:
        avail = b.avail
        for i in cand:
            ni = n[i]
            score = w[i] / ni + c * _sqrt(_log(avail[i]) / ni)
            if score > best_score:
                best, best_score = i, score
        return best
    cl = c * _sqrt(_log(b.total)) if b.total > 1 else 0.0
    for i in cand:
        ni = n[i]
        score = w[i] / ni + cl / _sqrt(ni)
        if score > best_score:
            best, best_score = i, score
    return best


def _sample(probs: list[float], cand: list[int], rng: random.Random) -> tuple[int, float]:
    r = rng.random()
    for i, p in zip(cand, probs, strict=True):
        r -= p
        if r < 0.0:
            return i, p
    return cand[-1], probs[-1]  # rounding residue


def _select_exp3(b: Bandit, cand: list[int], gamma: float, rng: random.Random) -> int:
    """Exp3 (Auer et al. 2002) as in SM-MCTS (Lanctot et al. 2013): σ = (1-γ)·softmax(η·X) + γ/K
    with η = γ/K, X the importance-weighted reward sums (kept in ``regret``)."""
    k = len(cand)
    x = b.regret
    eta = gamma / k
    top = max(x[i] for i in cand)
    weights = [_exp(eta * (x[i] - top)) for i in cand]  # shifted: exp never overflows
    scale = (1.0 - gamma) / sum(weights)
    floor = gamma / k
    strategy = b.strategy
    probs = []
    for i, v in zip(cand, weights, strict=True):
        v *= scale
        strategy[i] += v  # the exploitation part only: see average_strategy
        probs.append(floor + v)
    i, p = _sample(probs, cand, rng)
    b.last_prob = p
    return i


def _select_regret_matching(b: Bandit, cand: list[int], gamma: float, rng: random.Random) -> int:
    """Regret matching (Hart & Mas-Colell 2000) in SM-MCTS (Lanctot et al. 2013; Lisý et al. 2013):
    σ ∝ positive cumulative regret (uniform when none), mixed with γ-uniform exploration."""
    k = len(cand)
    regret = b.regret
    positive = [r if r > 0.0 else 0.0 for r in (regret[i] for i in cand)]
    total = sum(positive)
    floor = gamma / k
    scale = (1.0 - gamma) / total if total > 0.0 else 0.0
    uniform = 0.0 if total > 0.0 else (1.0 - gamma) / k
    strategy = b.strategy
    probs = []
    for i, v in zip(cand, positive, strict=True):
        v = v * scale + uniform
        strategy[i] += v  # the exploitation part only: see average_strategy
        probs.append(floor + v)
    i, p = _sample(probs, cand, rng)
    b.last_prob = p
    return i


def update(b: Bandit, reward: float, rule: int) -> None:
    """Back up ``reward`` (the player's value in [0, 1]) for the latest selection."""
    i = b.last
    b.n[i] += 1
    b.w[i] += reward
    b.total += 1
    p = b.last_prob
    if rule == UCB:
        return
    estimate = reward / p  # importance-sampled reward of the sampled action (Exp3 and RM)
    regret = b.regret
    if rule == EXP3:
        regret[i] += estimate
        return
    # RM: the sampled reward estimates every action's value as 0 except the sampled one's (r/σ);
    # the regret of b is its estimate minus the reward actually received (Lanctot et al. 2013).
    for j in b.last_cand:
        regret[j] -= reward
    regret[i] += estimate


def average_strategy(b: Bandit, rule: int) -> list[float]:
    """The bandit's final mixed strategy by position, for ``final_strategy="average"``.

    UCB plays one pure action per visit, so its average strategy *is* the visit distribution.
    Exp3 and RM: the normalised sum over selections of σ with the γ-uniform exploration removed,
    i.e. of (1-γ)·softmax(ηX) resp. (1-γ)·R⁺/ΣR⁺ (cf. Lisý et al. 2013, who remove the exploration
    from the final Exp3 strategy): exploration keeps the search sampling every action, but an
    action that is never worth playing should get (close to) no weight in the strategy played.
    """
    weights = b.n if rule == UCB else b.strategy
    total = float(sum(weights))
    if total <= 0.0:
        return [1.0 / len(weights)] * len(weights)
    return [x / total for x in weights]
