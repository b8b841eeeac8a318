"""What the public record of a Mexican Train round proves about the hidden hands.

Under the default rules (``must_play``, no ``draw_until_playable``, no ``first_turn_chain``) a
player draws or passes only when no tile in their hand can be laid, so every DRAW and every PASS
is a public statement: "I hold no tile matching an end open to me now". :func:`deal_constraints`
collects those statements into a :class:`~omega_cluster.games.mexican_train.DealConstraints`
(tiles each seat provably does not hold) that ``sample_world`` honours, so ISMCTS determinizes
into hands the opponents could really hold (the inference step of Cowling, Powley & Whitehouse
2012's determinization; without it every world gives an opponent who just drew a fair chance of
holding tiles that would have let them play).

The deductions, replayed over the current round's public actions only (a played tile is public,
a drawn tile is not):

* at a DRAW or a PASS by seat ``q``, ``q``'s hand holds no tile of ``M``, the tiles a legal play
  could have used (the first open double's end under the strict rule, plus doubles on open
  trains right after a double; else every end open to ``q``);
* a DRAW adds an unknown tile, so what ``q`` was known to lack no longer holds for their hand
  as a whole; but under ``must_play`` a play right after the draw can only be the drawn tile
  (the rest of the hand matched nothing and the ends have not moved), so the hand returns to
  the one from before the draw and so do its constraints;
* a draw whose tile stays (DRAW then PASS: a *kept* draw) does not erase what came before: a
  tile ``q`` was proved not to hold before it can only have come with a later kept draw, so
  of the tiles matching the statements made since kept draw ``i`` (or the deal) at most
  ``k - i - u`` are in the hand — ``k`` kept draws in all, ``u`` tiles of that kind ``q`` has
  laid since (they too came with those draws). Bounds of 0 are bans; the rest are
  ``DealConstraints.limits``, which ``sample_world`` honours by dealing the tiles held since
  the deal and each drawn tile apart, each from what the statements after it allow.

Only public facts are read (the log since the round started, the engine, who started), so two
states that one player cannot tell apart give the same constraints. With other rule variants it
returns ``None`` (no deductions). ISMCTS takes it as ``world_constraints``
(:class:`~omega_cluster.search.ismcts.ISMCTSConfig`); the search players turn it on with
``deduce=true``.

Sound (tested on real hands); its gain to a search's decisions is small and did not show in
matches against Commander (``bench/bench_ismcts.py`` plays ``deduce=true`` searches). The
kept-draw limits (``before_draws=False`` leaves them out) bound a share of the decisions of 4p
rounds; their gain is within the noise of a paired study.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from omega_cluster.games.api import Game, State
from omega_cluster.games.mexican_train import DealConstraints, MexicanTrainGame
from omega_cluster.games.mexican_train.tiles import MEXICAN_BIT, NUM_SLOTS, SLOTS_OF, TileSet

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import MexicanTrainState

__all__ = ["PublicReplay", "deal_constraints", "deductions_sound", "world_constraints"]


def world_constraints(game: Game) -> Callable[[State, int], DealConstraints | None]:
    """The plugin's ``world_constraints`` hook: :func:`deal_constraints` serves every rule set
    (it returns ``None`` where the rules make no deduction sound)."""
    return deal_constraints


def deductions_sound(game: MexicanTrainGame) -> bool:
    """Whether a draw or a pass proves "no playable tile" under ``game``'s rules (``must_play``,
    no ``draw_until_playable``, no ``first_turn_chain``)."""
    return game.must_play and not game.draw_until_playable and not game.first_turn_chain


class PublicReplay:
    """The public facts of a round, replayed action by action: the train ends, the markers,
    the open doubles (laying order), the pending double bonus and the seat to act.

    One step per public action: :meth:`play` for a tile laid, :meth:`pass_turn` for a PASS (a
    DRAW does not move any of these facts). :func:`deal_constraints` and
    :class:`~omega_cluster.games.mexican_train.belief.CommanderBelief` both read the round through it.
    """

    __slots__ = ("_high", "_low", "_pips", "bonus", "cur", "doubles", "ends", "marked", "n")

    def __init__(self, state: MexicanTrainState) -> None:
        game = cast(MexicanTrainGame, state.game)
        tiles = game.tiles
        self.n = game.num_players
        self._pips, self._high, self._low = tiles.pips, tiles.high, tiles.low
        self.ends = [state.engine] * NUM_SLOTS
        self.marked = 0
        self.doubles: list[int] = []  # open doubles, laying order
        self.bonus = False  # the acting seat has just laid a double
        self.cur = state.round_index % self.n  # seat r % N starts round r

    def play(self, action: int) -> int:
        """Lay the tile of ``action`` (a tile play of the seat to act); returns the tile id."""
        t, x = divmod(action, NUM_SLOTS)
        self.ends[x] = self._pips[t] - self.ends[x]
        if x == self.cur:
            self.marked &= ~(1 << x)
        if x in self.doubles:
            self.doubles.remove(x)
        if self._high[t] == self._low[t]:
            self.doubles.append(x)
            self.bonus = True
        else:
            self.cur, self.bonus = (self.cur + 1) % self.n, False
        return t

    def pass_turn(self) -> None:
        """The seat to act passes: its train is marked and the turn moves on."""
        self.marked |= 1 << self.cur
        self.cur, self.bonus = (self.cur + 1) % self.n, False


def deal_constraints(
    state: State, player: int, *, before_draws: bool = True
) -> DealConstraints | None:
    """Tiles each seat provably does not hold, from ``player``'s view (module docstring).

    ``before_draws``: also keep what each seat proved before the draws whose tiles it may still
    hold, as ``limits`` (at most ``k`` tiles of the mask, ``k`` those draws); ``False`` keeps
    only the statements since each seat's last such draw (the deductions before 2026-11-30, for
    comparison). ``None`` when the rules make no such deduction sound (``must_play=False``,
    ``draw_until_playable``, ``first_turn_chain``), when the game is over or when the game is not
    Mexican Train.
    """
    game = state.game
    if not isinstance(game, MexicanTrainGame) or not deductions_sound(game):
        return None
    s = cast("MexicanTrainState", state)
    if s.over:
        return None
    tiles = game.tiles
    draw = tiles.draw_action
    replay = PublicReplay(s)
    proofs = _Proofs(game.num_players)
    drew = False  # the acting seat has drawn this play
    for entry in s.history[s.round_starts[-1] :]:
        a = cast(int, entry)  # a turn-based game: every history entry is one action id
        cur = replay.cur
        if a >= draw:  # DRAW or PASS: no legal play for ``cur`` right now
            proofs.cannot_play(cur, _playable(replay, tiles, game.strict_doubles))
            if a == draw:  # an unknown tile joins the hand: a new level, until it is laid
                proofs.draw(cur)
                drew = True
            else:
                replay.pass_turn()
                drew = False
            continue
        if drew:  # must_play: the tile laid right after a draw is the drawn one
            proofs.lay_drawn(cur)
            drew = False
        else:
            proofs.lay(cur, 1 << (a // NUM_SLOTS))
        replay.play(a)
    return proofs.constraints(player, before_draws)


def _playable(replay: PublicReplay, tiles: TileSet, strict: bool) -> int:
    """The tiles the seat to act could legally lay now: a DRAW or a PASS proves it holds none."""
    em, ends, doubles = tiles.end_mask, replay.ends, replay.doubles
    open_mask = (1 << replay.cur) | MEXICAN_BIT | replay.marked
    if not strict:
        for x in doubles:
            open_mask |= 1 << x
    reach = 0
    for x in SLOTS_OF[open_mask]:
        reach |= em[ends[x]]
    if doubles and strict:
        return em[ends[doubles[0]]] | (reach & tiles.doubles_mask if replay.bonus else 0)
    return reach


class _Proofs:
    """What each seat has proved it does not hold during the round's replay, by kept draw.

    ``forbidden[q]``: what ``q`` proved since its last kept draw. ``levels[q][i]``: what ``q``
    proved since its ``i``-th kept draw (0: since the deal); ``used[q][i]``: tiles ``q`` laid since
    then that such a statement had proved absent (so they were drawn later).
    """

    def __init__(self, n: int) -> None:
        self.forbidden = [0] * n
        self.levels: list[list[int]] = [[] for _ in range(n)]
        self.used: list[list[int]] = [[] for _ in range(n)]

    def cannot_play(self, seat: int, playable: int) -> None:
        """``seat`` drew or passed: it holds none of ``playable``, at every level."""
        mine = self.levels[seat]
        for i in range(len(mine)):
            mine[i] |= playable
        self.forbidden[seat] |= playable

    def draw(self, seat: int) -> None:
        """``seat`` drew an unknown tile: what it proved so far becomes a level of its own."""
        self.levels[seat].append(self.forbidden[seat])
        self.used[seat].append(0)
        self.forbidden[seat] = 0

    def lay_drawn(self, seat: int) -> None:
        """``seat`` laid the tile it just drew: that draw's level is the current statement again."""
        self.forbidden[seat] = self.levels[seat].pop()
        self.used[seat].pop()

    def lay(self, seat: int, bit: int) -> None:
        """``seat`` laid the tile ``bit``: count it in every level that had proved it absent."""
        mine = self.levels[seat]
        for i in range(len(mine)):
            if mine[i] & bit:
                self.used[seat][i] += 1

    def constraints(self, player: int, before_draws: bool) -> DealConstraints:
        """The proofs as :class:`DealConstraints` for ``player``'s worlds (see deal_constraints)."""
        forbidden = self.forbidden
        if not before_draws:
            forbidden[player] = 0  # the player knows their own hand
            return DealConstraints(tuple(forbidden))
        limits: list[tuple[tuple[int, int], ...]] = []
        for q in range(len(forbidden)):
            if q == player:
                forbidden[q] = 0  # the player knows their own hand
                limits.append(())
                continue
            forbidden[q], facts = _limits(self.levels[q], self.used[q], forbidden[q])
            limits.append(facts)
        return DealConstraints(tuple(forbidden), tuple(limits) if any(limits) else ())


def _limits(
    levels: list[int], used: list[int], forbidden: int
) -> tuple[int, tuple[tuple[int, int], ...]]:
    """One seat's ``(forbidden, limits)`` from what it proved since each kept draw.

    ``levels[i]`` (nested, widest first) can hold only tiles drawn after kept draw ``i`` (0: the
    deal): ``len(levels) - i`` draws, less the ``used[i]`` such tiles already laid. A wider
    mask's bound bounds the narrower ones too; a bound of 0 is a ban (into ``forbidden``); a
    fact implied by another (same bound on a narrower mask, or a narrower bound on the same
    mask) is dropped.
    """
    kept = len(levels)
    bounded: list[tuple[int, int]] = []
    bound = kept
    for i, mask in enumerate(levels):
        bound = min(bound, kept - i - used[i])
        if bound == 0:
            forbidden |= mask  # the narrower levels are inside it
            break
        if bounded and bounded[-1][1] == bound:
            continue  # the wider mask already bounds this one as tightly
        bounded.append((mask, bound))
    facts: list[tuple[int, int]] = []
    narrower = forbidden
    for mask, bound in reversed(bounded):
        if mask | narrower != narrower:  # adds a tile a narrower fact does not already bound
            facts.append((mask, bound))
            narrower = mask
    return forbidden, tuple(reversed(facts))
