"""Worlds for :meth:`OpenSpielState.sample_world`: drawn from the player's information set, checked
against everything the player saw, and never the true state in place of a world.

pyspiel's ``resample_from_infostate`` is not trusted (some fail or change the history's shape at
chance nodes, hearts' contradicts what the history shows, blackjack's never deals the true hidden
card), so every candidate world is **checked by replay**: its history, applied entry by entry to
a fresh pyspiel state, must be legal at every step, must rebuild that very world, and wherever
the player acts (and at the end) the player must act there and see exactly what it saw in the
true game (its information-state string, else its observation string).

**Trick-taking card games** (hearts, oh_hell: :mod:`.card_games`) take an exact path first: what
the history proves about the unseen hands (cards played, voids, passes, hand sizes) is read once
per information state, the unseen cards are dealt by :class:`~.holdings.Holdings` uniformly over
every deal that agrees with it (hearts' unseen passes uniformly too), and the world is built once
and checked once against the player's information-state string. A world that fails turns the
path off for that state; such states, incomplete deals and every other game take the general
path, whose candidates are tried in order until one passes the check:

1. **re-deal** (up to :data:`REDEALS`) — replay the true history, drawing every chance outcome
   again by its probability among those that leave the player's view as it was, every unseen
   move of another player uniformly among the legal ones, and keeping the moves the player saw.
   Exact for poker-like games; in trick-taking games later plays usually contradict the deal,
   so the re-deals stop at the first that makes a seen move illegal.
2. **pyspiel** (up to :data:`TRIES`) — ``resample_from_infostate`` at the state, else at the
   last decision node with the true entries since then re-applied.
3. **repair** — the candidate that got furthest is changed by a local search over what the
   player did not see (swap two hidden chance outcomes, or redraw the unseen move where the
   replay stopped), a change kept when the replay gets at least as far (at most
   :data:`REPAIR_STEPS`). Its distribution is close to, not exactly, the posterior.

Only at the end of a game, when no candidate fits, is the true state returned: pyspiel's final
information states often show everything, so it is then the set's only member and nothing is
searched from it. Otherwise :class:`SamplingNotSupportedError` names the game, the player and
where the candidates break. The re-deal and the repair read only what the player knows and their
own rng stream, so two states of one information set get the same worlds from the same rng; some
pyspiel resamplers read the true state, which is why the re-deal comes first. Each stage has its
own stream, so how long one ran never shifts what the next draws.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any, Final

from omega_cluster._optional import numba_available
from omega_cluster.games.api import HistoryEntry, SamplingNotSupportedError
from omega_cluster.games.openspiel.card_games import CardGame, Deal
from omega_cluster.games.openspiel.holdings import Holdings
from omega_cluster.games.openspiel.knowledge import (
    Knowledge,
    Reach,
    acts,
    apply_entry,
    is_legal_entry,
    node_kind,
    replay_check,
    view,
)

if TYPE_CHECKING:
    from omega_cluster.games.openspiel.state import OpenSpielState

__all__ = ["REDEALS", "REPAIR_STEPS", "TRIES", "CardWorlds", "sample"]

REDEALS: Final = 8
"""Re-deals tried first."""
TRIES: Final = 32
"""pyspiel proposals tried next."""
REPAIR_STEPS: Final = 2000
"""Swaps the repair proposes before it gives up."""


def sample(truth: OpenSpielState, player: int, rng: random.Random) -> OpenSpielState:
    """A world from ``player``'s information set: the exact card path where it applies, else
    re-deal, pyspiel, repair (module docstring)."""
    cards = truth.game.card_game
    if cards is not None:
        worlds = truth._memo(("cards", player), lambda: CardWorlds.of(truth, player, cards))
        world = worlds.draw(rng) if worlds is not None else None
        if world is not None:
            return world
    known = truth._knowledge(player)
    kind = truth.game._info_kind
    pg = truth.game.pyspiel_game
    best: tuple[Reach, list[HistoryEntry]] | None = None
    redeal_rng, pyspiel_rng, repair_rng = (random.Random(rng.getrandbits(64)) for _ in "abc")
    for attempt in range(REDEALS):
        # the first half keeps the outcomes the player was shown out of the other seats (cards
        # are dealt once); the second does not (dice, and ids that mean other things elsewhere)
        state, history = _redeal(truth, known, kind, redeal_rng, attempt < REDEALS // 2)
        if state is not None:
            return type(truth)(truth.game, state, history)
        if history:  # a move the player saw became illegal: later plays pin the deal down
            break  # (trick-taking games), so drawing it again rarely helps; ask pyspiel
    for _ in range(TRIES if known.prefix is not None else 0):
        world = truth._propose(player, pyspiel_rng.random)
        wrapped = truth._wrap(world) if world is not None else None
        if wrapped is None:
            continue
        if not _rebuilds(pg, wrapped):  # its history is not the world: nothing to check
            continue
        reach = replay_check(pg, wrapped.history, known, kind)
        if reach.index > known.length:
            return wrapped
        if best is None or reach.index > best[0].index:
            best = (reach, list(wrapped.history))
    if best is not None:
        repaired = _repair(pg, best, known, kind, repair_rng)
        if repaired is not None:
            state = pg.new_initial_state()
            for entry in repaired:
                apply_entry(state, entry)
            return type(truth)(truth.game, state, repaired)
    if truth.is_terminal():  # hearts' final information state shows the whole deal: often
        return truth.clone()  # the true state is the only member; nothing is searched from it
    where = "no candidate at all" if best is None else f"at history entry {best[0].index} at best"
    raise SamplingNotSupportedError(
        f"{truth.game.spec.name}: sample_world found no world consistent with player {player}'s "
        f"information after {REDEALS} re-deals, {TRIES} pyspiel proposals and {REPAIR_STEPS} "
        f"repair steps (history of {known.length} entries; the candidates contradict it {where}); "
        "the true state is never returned in its place"
    )


def _rebuilds(pg: Any, world: OpenSpielState) -> bool:
    """Replaying the world's history gives the world itself (gin_rummy's resampler changes
    hidden cards without rewriting the history: such a world cannot be checked, nor rebuilt)."""
    state = pg.new_initial_state()
    for entry in world.history:
        apply_entry(state, entry)
    return str(state) == str(world.pyspiel_state)


def _redeal(
    truth: OpenSpielState, known: Knowledge, kind: str, rng: random.Random, reserve: bool
) -> tuple[Any, list[HistoryEntry]]:
    """Candidate 1 of the module docstring: the true history with everything the player did not
    see drawn again; ``(pyspiel state, history)`` when it agrees with what the player knows, else
    ``(None, [])``, or ``(None, [move])`` when a move the player saw became illegal. A failed
    re-deal is dropped, not repaired: the rest of the true history, hidden outcomes included,
    must not leak into a repair."""

    state = truth.game.pyspiel_game.new_initial_state()
    history: list[HistoryEntry] = []
    player = known.player
    for i, entry in enumerate(truth.history):
        expected = known.views.get(i)
        if expected is None:
            agrees = not acts(state, player)
        else:
            agrees = state.current_player() == expected[0]
            agrees = agrees and view(state, player, kind) == expected[1]
        # the same kind of node as in the true game (blackjack: the dealer may stand here)
        if not agrees or node_kind(state) != known.nodes[i]:
            return None, []
        if i in known.seen_by:  # a chance node
            drawn = _redraw(state, i, known, kind, rng, reserve)
            if drawn is None:
                return None, []
            entry = drawn
        elif i in known.secret:  # a move the player never saw: any legal one
            entry = rng.choice(state.legal_actions())
        elif not is_legal_entry(state, entry):
            return None, [entry]  # (the refused move, so the caller can tell this case)
        apply_entry(state, entry)
        history.append(entry)
    end = known.views[known.length]
    if state.current_player() != end[0] or view(state, player, kind) != end[1]:
        return None, []
    return state, history


def _redraw(
    state: Any, i: int, known: Knowledge, kind: str, rng: random.Random, reserve: bool
) -> int | None:
    """A chance outcome for entry ``i`` of a re-deal: the known one where the player knows it,
    else one drawn by probability (not one the player knows is elsewhere, with ``reserve``) that
    leaves the player's view as it was (rejected and drawn again otherwise); None if none."""
    from omega_cluster.games.openspiel.state import chance_outcomes_of

    outcomes = chance_outcomes_of(state)
    if i in known.exact:
        wanted = known.exact[i]
        return wanted if any(a == wanted for a, _ in outcomes) else None
    if reserve:  # the outcomes the player knows are elsewhere last, not never (ids are reused)
        first = [(a, p) for a, p in outcomes if a not in known.reserved]
        rest = [(a, p) for a, p in outcomes if a in known.reserved]
        drawn = _draw_agreeing(state, i, known, kind, rng, first)
        return drawn if drawn is not None else _draw_agreeing(state, i, known, kind, rng, rest)
    return _draw_agreeing(state, i, known, kind, rng, outcomes)


def _draw_agreeing(
    state: Any,
    i: int,
    known: Knowledge,
    kind: str,
    rng: random.Random,
    outcomes: list[tuple[int, float]],
) -> int | None:
    """One of ``outcomes`` by probability that leaves the player's view as it was after entry
    ``i`` (a mismatch is dropped and the draw repeated), or None. Even an outcome the player did
    not see must agree: hearts' pass direction "no pass" is what the view shows before it."""
    if not outcomes:
        return None
    first = _draw(outcomes, rng)  # nearly always agrees: one draw, one child
    if view(state.child(first), known.player, kind) == known.after[i]:
        return first
    # else the rest in a random order weighted by probability (Efraimidis-Spirakis keys): its
    # first agreeing outcome is what dropping mismatches and drawing again would give
    rest = [o for o in outcomes if o[0] != first]
    order = sorted(rest, key=lambda o: math.log(1.0 - rng.random()) / o[1], reverse=True)
    for action, _ in order:
        if view(state.child(action), known.player, kind) == known.after[i]:
            return action
    return None


def _draw(outcomes: list[tuple[int, float]], rng: random.Random) -> int:
    pick = rng.random() * sum(p for _, p in outcomes)
    for action, prob in outcomes:
        pick -= prob
        if pick < 0:
            return action
    return outcomes[-1][0]


def _repair(
    pg: Any,
    best: tuple[Reach, list[HistoryEntry]],
    known: Knowledge,
    kind: str,
    rng: random.Random,
) -> list[HistoryEntry] | None:
    """Local search over the chance outcomes of a proposal (the module docstring, stage 2):
    ``best`` is how far it got and its history."""
    reach, history = best
    hidden = [i for i in sorted(known.seen_by) if known.player not in known.seen_by[i]]
    if len(hidden) < 2:
        return None
    for _ in range(REPAIR_STEPS):
        candidate = history.copy()
        at = reach.index
        if at in known.secret and reach.legal and rng.random() < 0.5:
            # another player's move the player never saw: it may be what is wrong, pick again
            candidate[at] = rng.choice(sorted(reach.legal))
        else:
            j, k = _pick_swap(history, hidden, reach, known, rng)
            candidate[j], candidate[k] = history[k], history[j]
        if candidate == history:
            continue
        got = replay_check(pg, candidate, known, kind)
        if got.index > known.length:
            return candidate
        if got.index >= reach.index:
            history, reach = candidate, got
    return None


def _pick_swap(
    history: list[HistoryEntry],
    hidden: list[int],
    reach: Reach,
    known: Knowledge,
    rng: random.Random,
) -> tuple[int, int]:
    """Two hidden chance positions to swap. Mostly aimed at the player who got stuck: one of
    its outcomes (preferably one that is now a legal move of its: a card that forbids the true
    move, e.g. a suit it showed void in) with one of another player (preferably the true move
    itself: a card it played but was not dealt); else any two. Aiming only picks the swap; the
    replay decides whether it is kept."""
    before = [i for i in hidden if i < reach.index] or hidden
    stuck = reach.mover
    if stuck >= 0 and rng.random() < 0.8:
        mine = [i for i in before if stuck in known.seen_by[i]]
        theirs = [i for i in hidden if stuck not in known.seen_by[i]]
        if mine and theirs:
            wanted = history[reach.index] if reach.index < len(history) else None
            blocking = [i for i in mine if history[i] in reach.legal]
            holding = [i for i in theirs if history[i] == wanted]
            j = rng.choice(blocking if blocking and rng.random() < 0.7 else mine)
            k = rng.choice(holding if holding and rng.random() < 0.7 else theirs)
            return j, k
    return rng.choice(before), rng.choice(hidden)


class CardWorlds:
    """The exact card path (module docstring) for one player at one state: the deal it knows,
    the distribution of the unseen cards, and its information-state string to check worlds by."""

    def __init__(self, truth: OpenSpielState, player: int, cards: CardGame, deal: Deal) -> None:
        self.player, self.cards, self.deal = player, cards, deal
        self.game, self.kind = truth.game, type(truth)
        self.holdings = Holdings(deal.unknown, deal.slots, deal.forbidden)
        game = truth.game
        self.view = view(truth.pyspiel_state, player, game._info_kind)
        if game._entry_text is None:  # pyspiel's serialization: one entry a line
            pg = game.pyspiel_game
            size = max(pg.num_distinct_actions(), pg.max_chance_outcomes())
            game._entry_text = [str(a) for a in range(size)]
        self.text = game._entry_text
        self.broken = False
        self.packed: tuple[Any, ...] | None = None  # the compiled draw's inputs and outputs
        if deal.places is not None and numba_available():
            import numpy as np

            from omega_cluster.games.openspiel._card_kernels import draw_world, pack

            length = len(deal.template)
            hist, text = np.empty(length, np.int64), np.empty(4 * length, np.uint8)
            self.packed = (draw_world, *pack(self.holdings, deal), hist, text)

    @classmethod
    def of(cls, truth: OpenSpielState, player: int, cards: CardGame) -> CardWorlds | None:
        """The path at ``truth`` for ``player``, or None where it does not apply (the deal is not
        complete, or the game is over: its final strings often show every hand)."""
        if truth.is_terminal() or truth.is_chance_node():
            return None
        history = truth.history
        movers = [int(e.player) for e in truth.pyspiel_state.full_history()]
        movers.append(int(truth.pyspiel_state.current_player()))
        deal = cards.deal(history, movers, player)  # type: ignore[arg-type]
        if deal is None:
            return None
        try:
            return cls(truth, player, cards, deal)
        except ValueError:  # no deal fits what it read: a rule it does not know (the general
            return None  # path then, whose worlds the replay checks)

    def draw(self, rng: random.Random) -> OpenSpielState | None:
        """One world, or None once a world has failed the check (the general path then)."""
        if self.broken:
            return None
        game = self.game
        if self.packed is not None:  # (buffers of this state's: one draw at a time)
            draw, ints, floats, hist, buffer = self.packed
            size = draw(ints, floats, rng.getrandbits(63), hist, buffer)
            history = hist.tolist()
            text = buffer[:size].tobytes().decode()
        else:
            history = self.cards.world(self.deal, self.holdings.draw(rng), rng)
            text = "\n".join([self.text[a] for a in history])
        try:
            state = game.pyspiel_game.deserialize_state(text)
        except Exception:  # pyspiel refused a move: a rule the card path does not know
            state = None
        if state is None or view(state, self.player, game._info_kind) != self.view:
            self.broken = True
            return None
        world = self.kind(game, state, history)
        world._key = (len(history), self.player, self.view)  # its key: the search asks it next
        return world
