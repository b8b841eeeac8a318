"""The advisor: every legal move of a position with what the champion thinks of it, and why.

:func:`advise` answers for one position and one seat:

* the champion network's **policy** probability of each legal move and a **value** for the seat:
  the position's and each move's, each averaged over a few worlds drawn from what the seat
  knows (``sample_world``), so no value reads a hidden hand (the network's prior reads only the
  seat's own observation);
* with ``think`` > 0, the champion's search run for ``think`` simulations from the position (PUCT
  on the network prior, the network as the leaf): each move's **visit share** and **Q** (its
  mean value for the seat);
* the game's **named heuristic terms** of each move (the plugin hook ``advisor_terms``; Mexican
  Train: the Commander's ``explain()``, term → weight × feature);
* an **explanation** of the champion's chosen move in those terms against the runner-up.

The explanation is a post-hoc attribution, and honest about how much it explains. Over the
legal moves of this one position the network's move logits (log policy, centred) are fitted by a
ridge regression on the terms' contributions (centred; terms that do not vary over the moves are
left out), written as a common scale on the heuristic's whole score plus one departure per term,
and only the departures are penalised: where the moves are too few to tell the terms apart the
fit falls back on the heuristic's own weighting, and a network that follows one term alone still
moves that term's coefficient. The coefficient of term *k* times the difference of its
contribution between the chosen move and the runner-up is that term's share of the logit gap;
the terms with the largest shares in the gap's direction are named. When the search ran, the
chosen move and the runner-up are its two most visited moves, and the search may choose against
the network's prior or the heuristic: the gap is then negative and the terms named are those
that favour the runner-up, signed (never "no term differs" while the terms do differ). ``r2`` is the fit's R² over the legal moves: the
part of the network's preferences among these moves that the named terms explain. With as many
varying terms as moves minus one a fit is nearly exact whatever the network does, so
``underdetermined`` is set and R² says little; a fit across many positions would be sharper but
would explain an average network, not this choice. Without a champion the explanation is the Commander's own: its score is the
sum of the terms, so the decomposition is exact (R² = 1, ``source="heuristic"``).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from omega_cluster.errors import UserError
from omega_cluster.games.api import Game, State
from omega_cluster.games.chance import sample_chance
from omega_cluster.games.registry import game_plugin
from omega_cluster.players.registry import PlayerSpecError, make_player
from omega_cluster.search.evaluators import Leaf

__all__ = [
    "Advice",
    "Champion",
    "Explanation",
    "MoveAdvice",
    "advise",
    "attribute",
    "load_champion",
]

WORLDS = 4  # worlds the values are averaged over
RIDGE = 1e-3  # ridge penalty on departures from the heuristic, relative to the terms' size
TOP = 3  # terms named in an explanation


@dataclass(frozen=True)
class Champion:
    """A loaded champion: its network (``evaluate_positions`` of a NetworkEvaluator) and the
    evaluator its search uses at the leaves (the network, or a blend with a rollout)."""

    name: str
    network: Any
    leaf: Any
    options: dict[str, Any] = field(default_factory=dict)  # its search's PUCT constants


def load_champion(game: Game, spec: str) -> Champion:
    """The network of a player spec: ``champion:<run>[…]`` or ``network:<checkpoint dir>``
    (a champion of another game is refused in one line by the player registry)."""
    champion = champion_of(make_player(spec, game))
    if champion is None:
        raise PlayerSpecError(
            f"advisor champion {spec!r} has no network (give champion:<run> or network:<dir>)"
        )
    return champion


def champion_of(player: Any) -> Champion | None:
    """The :class:`Champion` of an already built network or search player (None: no network)."""
    network = _network_of(player)
    if network is None:
        return None
    leaf = getattr(player, "evaluator", None) or network
    own = getattr(player, "options", {})
    options = {k: own[k] for k in ("c_puct", "c_uct") if k in own}
    return Champion(str(getattr(player, "name", "network")), network, leaf, options)


def _network_of(obj: Any) -> Any:
    """The NetworkEvaluator inside a player or an evaluator (None: there is none)."""
    for _ in range(4):
        if obj is None or callable(getattr(obj, "evaluate_positions", None)):
            return obj
        obj = next(
            (getattr(obj, a) for a in ("_evaluator", "evaluator", "a") if hasattr(obj, a)), None
        )
    return None


@dataclass(frozen=True)
class MoveAdvice:
    """One legal move: its number (index among the legal moves), action and name, and what the
    champion, its search and the game's heuristic say of it (None where not asked or not known)."""

    number: int
    action: int
    name: str
    policy: float | None = None
    value: float | None = None
    visits: float | None = None  # share of the search's root visits
    q: float | None = None  # the search's mean value of the move for the seat
    total: float | None = None  # the heuristic's score (the sum of ``terms``)
    terms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Explanation:
    """Why ``chosen`` rather than ``runner_up``, in named terms (module docstring)."""

    chosen: int
    runner_up: int | None
    source: str  # "network" (the ridge fit of its logits) or "heuristic" (exact)
    top_terms: list[tuple[str, float]]  # (term, share of the logit/score gap), largest first
    gap: float  # the chosen move's logit (or score) minus the runner-up's
    r2: float | None  # how much of the preferences over the legal moves the terms explain
    moves: int
    terms_fitted: int
    underdetermined: bool

    def text(self, game: Game) -> str:
        if self.runner_up is None:
            return f"{game.describe_action(self.chosen)} is the only move"
        named = ", ".join(f"{t} {v:+.2f}" for t, v in self.top_terms) or "no term differs"
        r2 = "n/a" if self.r2 is None else f"{self.r2:.2f}"
        caveat = " (few moves: the fit is nearly exact whatever the network does)"
        against = " (the search's choice, against the terms)" if self.gap < 0 else ""
        return (
            f"{game.describe_action(self.chosen)} over {game.describe_action(self.runner_up)}"
            f"{against}: {named}; gap {self.gap:+.2f}, R² {r2} over {self.moves} moves "
            f"({self.source})" + (caveat if self.underdetermined else "")
        )


@dataclass(frozen=True)
class Advice:
    """The advisor's answer for one position and seat (:func:`advise`)."""

    game: str
    seat: int
    champion: str | None
    value: float | None  # the champion's value of the position for the seat
    think: int
    moves: list[MoveAdvice]
    explanation: Explanation | None
    text: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def advise(
    game: Game, state: State, seat: int, *, champion: Any = None, think: int = 0, seed: int = 0
) -> Advice:
    """The advice for ``seat`` at ``state`` (module docstring). ``champion``: a
    :class:`Champion`, a network player or evaluator, or None (the heuristic's terms only)."""
    if isinstance(think, bool) or not isinstance(think, int) or think < 0:
        raise UserError(f"think must be an int >= 0 (simulations), got {think!r}")
    legal = list(state.legal_actions(seat)) if seat in state.current_players else []
    if not legal:
        raise UserError(f"seat {seat} has no move to advise on now")
    if champion is not None and not isinstance(champion, Champion):
        network = _network_of(champion)
        if network is None:
            raise UserError(f"the advisor's champion must hold a network, got {champion!r}")
        champion = Champion(str(getattr(champion, "name", "network")), network, network)
    rng = random.Random(seed)
    terms = _terms(game, state, seat, legal)
    policy = value = values = None
    if champion is not None:
        policy, value, values = _network_view(champion.network, state, seat, legal, rng)
    visits = qs = None
    if think and len(legal) > 1:
        visits, qs = _search(game, state, seat, champion, think, rng)
    moves = [
        MoveAdvice(
            i, a, game.describe_action(a),
            policy=None if policy is None else float(policy[i]),
            value=None if values is None else values[i],
            visits=None if visits is None else visits[i],
            q=None if qs is None else qs[i],
            total=None if a not in terms else float(sum(terms[a].values())),
            terms=terms.get(a, {}),
        )
        for i, a in enumerate(legal)
    ]  # fmt: skip
    explanation = _explain(moves, policy, visits)
    name = None if champion is None else champion.name
    advice = Advice(game.spec.name, seat, name, value, think, moves, explanation)
    return dataclasses.replace(advice, text=format_advice(game, advice))


def _terms(
    game: Game, state: State, seat: int, legal: Sequence[int]
) -> dict[int, dict[str, float]]:
    """Per legal move, the game's named terms (term -> weight × feature); {} without the hook."""
    hook = game_plugin(game).hook("advisor_terms")
    if hook is None or state.is_simultaneous_node():
        return {}
    explained = hook(game).explain(state, seat)
    return {int(m.action): {k: float(v) for k, v in m.terms.items()} for m in explained}


def _network_view(
    network: Any, state: State, seat: int, legal: Sequence[int], rng: random.Random
) -> tuple[np.ndarray, float, list[float | None]]:
    """The prior over ``legal``, the seat's value of the position and of each move (means over
    :data:`WORLDS` worlds drawn from the seat's information)."""
    worlds = [state.sample_world(seat, rng) for _ in range(WORLDS)]
    roots = network.evaluate_positions([Leaf(w, seat, tuple(legal), rng) for w in worlds])
    prior = np.asarray(roots[0].prior, np.float64)
    value = float(np.mean([r.values[seat] for r in roots]))
    if state.is_simultaneous_node():
        return prior, value, [None] * len(legal)
    pending: list[tuple[int, Leaf]] = []  # (move index, leaf) of children still to evaluate
    totals = [0.0] * len(legal)
    for i, a in enumerate(legal):
        for w in worlds:
            child = w.clone()
            child.apply_action(a)
            while child.is_chance_node():
                child.apply_action(sample_chance(child.chance_outcomes(), rng.random()))
            if child.is_terminal():
                totals[i] += float(child.returns()[seat])
                continue
            actor = child.current_players[0]
            pending.append((i, Leaf(child, actor, tuple(child.legal_actions(actor)), rng)))
    answers = network.evaluate_positions([leaf for _, leaf in pending]) if pending else []
    for (i, _), answer in zip(pending, answers, strict=True):
        totals[i] += float(answer.values[seat])
    values: list[float | None] = [t / len(worlds) for t in totals]
    return prior, value, values


def _search(
    game: Game, state: State, seat: int, champion: Champion | None, think: int, rng: random.Random
) -> tuple[list[float], list[float | None]]:
    """The visit share and Q of each legal move after ``think`` simulations of the champion's
    search (PUCT on its prior), or, without a champion, of ISMCTS with the heuristic's rollouts."""
    from omega_cluster.players.search import SearchPlayer

    options: dict[str, Any] = {}
    if champion is not None:
        leaf: Any = champion.leaf
        if not game.spec.simultaneous:
            options = {"selection": "puct", **champion.options}
    else:
        leaf = "heuristic_rollout" if "heuristic" in game_plugin(game).players else "random"
    player = SearchPlayer(game, leaf=leaf, simulations=think, **options)
    result = player.search.search(state, seat, rng)
    total = max(1, sum(result.visits))
    qs = [None if q != q else float(q) for q in result.action_values]  # nan: unvisited
    return [v / total for v in result.visits], qs


def _explain(
    moves: Sequence[MoveAdvice], policy: np.ndarray | None, visits: Sequence[float] | None
) -> Explanation | None:
    """The champion's choice (the search's when it ran, else the policy's argmax; without a
    champion the heuristic's) against the runner-up, attributed to the terms."""
    names = sorted({t for m in moves for t in m.terms})
    if policy is None and not names:
        return None
    if policy is not None:
        logits = np.log(np.clip(policy, 1e-12, None))
        source = "network"
    else:
        logits = np.array([m.total or 0.0 for m in moves])
        source = "heuristic"
    # the search's choice and runner-up are its two most visited moves (ties: the higher
    # logit); without a search, the two highest logits
    ranked = np.lexsort((-logits, -np.asarray(visits))) if visits is not None else None
    order = list(ranked if ranked is not None else np.argsort(-logits, kind="stable"))
    chosen = int(order[0])
    runner = next((int(i) for i in order if int(i) != chosen), None)
    contributions = np.array([[m.terms.get(t, 0.0) for t in names] for m in moves]).reshape(
        len(moves), len(names)
    )
    fit = attribute(logits, contributions, names, chosen, runner, exact=policy is None)
    return dataclasses.replace(
        fit,
        chosen=moves[chosen].action,
        runner_up=None if runner is None else moves[runner].action,
        source=source,
    )


def attribute(
    logits: np.ndarray,
    contributions: np.ndarray,
    names: Sequence[str],
    chosen: int,
    runner_up: int | None,
    *,
    exact: bool = False,
) -> Explanation:
    """The attribution of ``logits[chosen] - logits[runner_up]`` to the terms: a ridge fit of the
    centred logits on the centred ``contributions`` (moves × terms; ``exact``: the logits are the
    sum of the contributions, coefficients 1). Indices refer to rows; module docstring."""
    m = len(logits)
    y = logits - logits.mean()
    x = contributions - contributions.mean(axis=0) if m else contributions
    varying = [k for k in range(x.shape[1]) if np.ptp(x[:, k]) > 1e-12] if m else []
    beta = np.zeros(x.shape[1])
    r2: float | None = 1.0 if exact else None
    if varying and not exact:
        xs = x[:, varying]
        # logits ~ b * score + sum_k d_k * term_k, the penalty on the d_k only: a network that
        # ranks like the heuristic up to scale costs nothing, each departure from it is paid for
        design = np.column_stack([xs.sum(axis=1), xs])
        penalty = np.eye(len(varying) + 1)
        penalty[0, 0] = 0.0
        lam = RIDGE * max(float((xs**2).sum()) / len(varying), 1e-12)
        theta = np.linalg.lstsq(design.T @ design + lam * penalty, design.T @ y, rcond=None)[0]
        beta[varying] = theta[0] + theta[1:]
        ss = float(y @ y)
        r2 = None if ss < 1e-18 else 1.0 - float(((y - xs @ beta[varying]) ** 2).sum()) / ss
    elif exact:
        beta[:] = 1.0
    top: list[tuple[str, float]] = []
    gap = 0.0
    if runner_up is not None:
        gap = float(logits[chosen] - logits[runner_up])
        shares = beta * (x[chosen] - x[runner_up]) if m else beta
        top = _named(names, shares, gap)
    return Explanation(
        chosen=chosen,
        runner_up=runner_up,
        source="heuristic" if exact else "network",
        top_terms=top,
        gap=gap,
        r2=r2,
        moves=m,
        terms_fitted=len(varying),
        underdetermined=not exact and len(varying) >= m - 1,
    )


def _named(names: Sequence[str], shares: np.ndarray, gap: float) -> list[tuple[str, float]]:
    """The terms that explain the gap: those whose share has the gap's sign, largest first (a
    search may choose against the terms: a negative gap, explained by the terms against the
    choice); when none has that sign, the largest shares of either sign."""
    sign = 1.0 if gap >= 0 else -1.0
    order = sorted(range(len(names)), key=lambda k: -sign * shares[k])
    top = [(names[k], float(shares[k])) for k in order[:TOP] if sign * shares[k] > 1e-9]
    if not top:
        order = sorted(range(len(names)), key=lambda k: -abs(shares[k]))
        top = [(names[k], float(shares[k])) for k in order[:TOP] if abs(shares[k]) > 1e-9]
    return top


def format_advice(game: Game, advice: Advice, *, top: int = 12) -> str:
    """A plain-text table of the advice (the terminal shows it), best moves first."""
    head = f"advisor for seat {advice.seat}" + (
        f" — champion {advice.champion}, value {advice.value:.3f}" if advice.champion else ""
    )
    lines = [head]
    key = "visits" if advice.think else ("policy" if advice.champion else "total")

    def rank(m: MoveAdvice) -> float:
        value = getattr(m, key)
        return -(value if value is not None else float("-inf"))

    for m in sorted(advice.moves, key=rank)[:top]:
        cols = [f"{m.number:>3}. {m.name:<26}"]
        for label, v in (("p", m.policy), ("v", m.value), ("visits", m.visits), ("Q", m.q)):
            if v is not None:
                cols.append(f"{label} {v:.3f}")
        if m.total is not None:
            best = sorted(m.terms.items(), key=lambda kv: -abs(kv[1]))[:2]
            named = " ".join(f"{t}{v:+.1f}" for t, v in best if v)
            cols.append(f"score {m.total:+.1f} [{named}]")
        lines.append("  ".join(cols))
    if advice.explanation is not None:
        lines.append("why: " + advice.explanation.text(game))
    elif not advice.think:
        lines.append(f"why: no champion here and {game.spec.name} names no heuristic terms")
    return "\n".join(lines)
