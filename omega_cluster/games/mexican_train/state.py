"""Mexican Train rules: :class:`MexicanTrainState`, one position of a campaign.

Owns legality, the turn structure, scoring and the campaign; the parameters live in :mod:`.game`,
the deal and the end of a round in :mod:`.rounds`, the tile tables and action ids in :mod:`.tiles`,
the fast random playout in :mod:`.playout` (it mirrors ``legal_actions`` / ``_apply_action``
exactly), determinizations in :mod:`.sampling` and the text picture in :mod:`.render`.

Rules (pagat's Mexican Train and common rule sheets; variants are game parameters):

* **Deal.** Round ``r`` sets the engine double ``max - r`` aside and deals ``hand_size`` tiles to
  each seat from a shuffle seeded by ``(chance_seed, r)``; the rest is the boneyard, drawn from
  its end. Seat ``r % N`` starts round ``r``.
* **Trains.** Each seat owns a personal train and the public Mexican train is slot 8; all start
  at the engine. A player may play on their own train, the Mexican train and any marked train:
  ending a turn without playing (PASS) puts the player's marker up, their train open to everyone
  until they play on it themselves.
* **Unable to play.** With no legal play the player draws one tile (DRAW), then plays any legal
  tile (with ``must_play`` only the drawn tile, on any train open to them) or PASSes; with an
  empty boneyard they PASS at once. ``draw_until_playable`` keeps drawing. ``must_play=False``: a
  player who could play may DRAW instead and then PASS with the marker up.
* **Doubles.** A double gives another play (a fresh one: they may draw for it). Strict rule
  (``strict_doubles``, default): an open double must be covered by the very next play, whoever
  moves, even on an unmarked train, several in the order laid; the only other play is another
  double on a different open train, and a non-double ends the turn. A player who cannot cover
  draws one tile, then PASSes with the marker up. Lenient rule: the extra play may go anywhere;
  an uncovered double opens its train to everyone until covered.
* **First-turn chain** (``first_turn_chain``): on their first turn of a round, once a player lays
  on their own train they may keep laying there; PASS ends the chain without a marker; no draws.
* **Round end.** A player who lays their last tile goes out, even on a double. The round is
  *blocked*, and ends at once, when the boneyard is empty and nobody could ever play again (no
  tile matches a train end as if every marker were up, or, strict rule with an open double, nobody
  can cover it and the acting player cannot lay another double). Each player scores the pips left
  in hand (0|0 counts ``double_blank_value``).
* **Campaign.** ``num_rounds`` rounds with engines ``max, max-1, ...``; win shares (see
  :mod:`.game`) go to the lowest cumulative pips (``points``) or most rounds gone out (``go_out``).

Hidden information: the hands of others and the boneyard order; every action (who drew, never
which tile) and each finished round's pips are public. ``information_set_key(p)`` is ``p``'s hand,
``p`` and a rolling 64-bit hash of the public record, maintained incrementally in each step.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np

from omega_cluster.games.api import RngLike, State
from omega_cluster.games.mexican_train import rounds
from omega_cluster.games.mexican_train.playout import random_playout as _random_playout
from omega_cluster.games.mexican_train.records import (
    DealConstraints,
    RoundResult,
)
from omega_cluster.games.mexican_train.render import render_state
from omega_cluster.games.mexican_train.sampling import sample_world as _sample_world
from omega_cluster.games.mexican_train.tiles import (
    HASH_MULT,
    MASK64,
    MEXICAN_BIT,
    NUM_SLOTS,
    SLOTS_OF,
)
from omega_cluster.games.mexican_train.views import StateViews

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.belief_worlds import BeliefDeal
    from omega_cluster.games.mexican_train.game import MexicanTrainGame

__all__ = ["MexicanTrainState"]

ACTING: tuple[tuple[int, ...], ...] = tuple((p,) for p in range(8))


class MexicanTrainState(StateViews, State):
    """A position: hands are bit masks, trains are (open end, length) per slot plus a marker mask.

    Fields are read-only for callers (heuristic players, encoders); only actions change them.
    """

    __slots__ = (
        "board",  # mask of the tiles on the trains this round
        "boneyard",  # list of tile indices; draws pop from the end (hidden order)
        "bonus",  # the acting player has just laid a double (strict: may lay another double)
        "chain",  # the acting player is laying a first-turn chain on their own train
        "chance_seed",  # seeds every deal of this and later rounds
        "current",  # acting seat (-1 after the end)
        "drawn",  # the acting player has drawn during the current play
        "ends",  # list[9]: open end per train slot (the engine value while empty)
        "engine",  # engine double of the round
        "first_pending",  # mask of seats that have not finished their first turn this round
        "hands",  # list[N] of tile masks
        "lengths",  # list[9]: tiles laid on each train this round
        "log_hash",  # rolling hash of the public record (information_set_key)
        "marked",  # mask of train slots whose owner's marker is up
        "open_doubles",  # tuple of train slots ending in an uncovered double, laying order
        "outs",  # tuple[N]: rounds won by going out
        "over",  # the campaign is finished
        "pip_totals",  # tuple[N]: cumulative pips of the finished rounds
        "round_index",
        "round_results",  # tuple of RoundResult
        "round_starts",  # tuple: history index where each round began
        "win",  # returns at the end (win shares), None before
    )

    game: MexicanTrainGame
    board: int
    bonus: bool
    chain: bool
    chance_seed: int
    current: int
    drawn: bool
    engine: int
    first_pending: int
    log_hash: int
    marked: int
    over: bool
    round_index: int
    boneyard: list[int]
    hands: list[int]
    ends: list[int]
    lengths: list[int]
    open_doubles: tuple[int, ...]
    outs: tuple[int, ...]
    pip_totals: tuple[int, ...]
    round_results: tuple[RoundResult, ...]
    round_starts: tuple[int, ...]
    win: tuple[float, ...] | None

    @classmethod
    def initial(cls, game: MexicanTrainGame, seed: int) -> MexicanTrainState:
        s = cls.__new__(cls)
        n = game.num_players
        s.game, s.history, s.chance_seed = game, [], seed
        s.pip_totals, s.outs, s.round_results, s.round_starts = (0,) * n, (0,) * n, (), ()
        s.log_hash, s.over, s.win = n, False, None
        s.deal(0)
        return s

    # -- dealing and round end (:mod:`.rounds`) ------------------------------------------------
    deal = rounds.deal
    end_round = rounds.end_round
    stuck = rounds.stuck
    check_blocked = rounds.check_blocked

    # -- who acts, what they may do ---------------------------------------------------------
    @property
    def current_players(self) -> tuple[int, ...]:
        return () if self.over else ACTING[self.current]

    def open_mask(self, player: int) -> int:
        """Mask of train slots ``player`` may play on, ignoring the strict open-double rule."""
        m = (1 << player) | MEXICAN_BIT | self.marked
        if not self.game.strict_doubles:
            for s in self.open_doubles:
                m |= 1 << s
        return m

    def open_slots(self, player: int) -> tuple[int, ...]:
        """Train slots ``player`` may play on (own, Mexican, marked; ignores the strict rule)."""
        return SLOTS_OF[self.open_mask(player)]

    def legal_plays(self) -> list[int]:
        """Play actions (tile × train) of the acting player, ascending."""
        cur = self.current
        hand = self.hands[cur]
        tiles = self.game.tiles
        em, ends = tiles.end_mask, self.ends
        acts: list[int] = []
        if self.chain:
            slots: tuple[int, ...] = (cur,)
        elif self.open_doubles and self.game.strict_doubles:
            d = self.open_doubles[0]
            m = hand & em[ends[d]]
            while m:
                low = m & -m
                acts.append((low.bit_length() - 1) * NUM_SLOTS + d)
                m ^= low
            if not self.bonus:
                return acts
            hand &= tiles.doubles_mask  # right after a double: another double anywhere open
            slots = SLOTS_OF[self.open_mask(cur)]
        else:
            slots = SLOTS_OF[self.open_mask(cur)]
        for s in slots:
            m = hand & em[ends[s]]
            while m:
                low = m & -m
                acts.append((low.bit_length() - 1) * NUM_SLOTS + s)
                m ^= low
        acts.sort()
        return acts

    def legal_actions(self, player: int | None = None) -> list[int]:
        if self.over or (player is not None and player != self.current):
            return []
        acts = self.legal_plays()
        g = self.game
        tiles = g.tiles
        if self.chain:
            acts.append(tiles.pass_action)
        elif acts:
            if not g.must_play:
                if self.drawn:
                    acts.append(tiles.pass_action)
                elif self.boneyard:
                    acts.append(tiles.draw_action)
        elif self.boneyard and (not self.drawn or g.draw_until_playable):
            acts.append(tiles.draw_action)
        else:
            acts.append(tiles.pass_action)
        return acts

    def is_legal(self, player: int, action: int) -> bool:
        if self.over or player != self.current:
            return False
        tiles = self.game.tiles
        if action >= tiles.draw_action or action < 0:
            return action in self.legal_actions(player)
        t, s = divmod(action, NUM_SLOTS)
        end = self.ends[s]
        if not (self.hands[player] >> t & 1 and (tiles.high[t] == end or tiles.low[t] == end)):
            return False
        if self.chain:
            return s == player
        od = self.open_doubles
        if od and self.game.strict_doubles:
            if s == od[0]:
                return True
            if not (self.bonus and tiles.high[t] == tiles.low[t]):
                return False
        return bool(self.open_mask(player) >> s & 1)

    # -- moving -------------------------------------------------------------------------------
    def _apply_action(self, action: int) -> None:
        tiles = self.game.tiles
        cur = self.current
        self.history.append(action)
        self.log_hash = (self.log_hash * HASH_MULT + action + 1) & MASK64
        if action == tiles.draw_action:
            self.hands[cur] |= 1 << self.boneyard.pop()
            self.drawn = True
        elif action == tiles.pass_action:
            if not self.chain:
                self.marked |= 1 << cur
            self.end_turn()
        elif self.play(cur, action):
            return  # went out: the next round is dealt already (or the game is over)
        if not self.boneyard:
            self.check_blocked()

    def play(self, cur: int, action: int) -> bool:
        """Lay a tile (the action is legal): doubles, chains, going out. True if the round ended."""
        tiles = self.game.tiles
        t, s = divmod(action, NUM_SLOTS)
        bit = 1 << t
        hand = self.hands[cur] ^ bit
        self.hands[cur] = hand
        self.board |= bit
        self.ends[s] = tiles.pips[t] - self.ends[s]
        self.lengths[s] += 1
        if s == cur:
            self.marked &= ~(1 << s)
        if s in self.open_doubles:  # a tile on an open double covers it
            self.open_doubles = tuple(x for x in self.open_doubles if x != s)
        if not hand:
            self.end_round(cur)  # a double laid last need not be covered
            return True
        in_chain = self.chain or (
            s == cur and self.game.first_turn_chain and bool(self.first_pending >> cur & 1)
        )
        if tiles.high[t] == tiles.low[t]:
            self.open_doubles = (*self.open_doubles, s)
            self.bonus, self.drawn, self.chain = True, False, in_chain
        elif in_chain:
            self.bonus, self.chain = False, True
        else:
            self.end_turn()
        return False

    def end_turn(self) -> None:
        cur = self.current
        self.first_pending &= ~(1 << cur)
        self.drawn = self.bonus = self.chain = False
        self.current = (cur + 1) % self.game.num_players

    # -- outcome ------------------------------------------------------------------------------
    def returns(self) -> tuple[float, ...]:
        """Win shares at the end (1/k for each of k tied winners), zeros before."""
        return self.win if self.win is not None else (0.0,) * self.game.num_players

    # -- information --------------------------------------------------------------------------
    def information_set_key(self, player: int) -> int:
        """``player``'s hand, the public-log hash and ``player`` packed into one int."""
        return (self.hands[player] << 72) | (self.log_hash << 4) | player

    def hidden_state(self, player: int) -> np.ndarray:
        """Where each tile of the set is, as ``player`` cannot see it (training only): float32
        [num_tiles], 0 — own hand, on the board or the round's engine (set aside), 1 — the
        boneyard, ``1 + k`` — the hand of the seat ``k`` places after ``player``."""
        n, t = self.game.num_players, self.game.tiles.num_tiles
        nbytes = (t + 7) // 8
        codes = np.zeros(t, np.float32)
        codes[self.boneyard] = 1.0
        for k in range(1, n):
            hand = self.hands[(player + k) % n].to_bytes(nbytes, "little")
            bits = np.unpackbits(np.frombuffer(hand, np.uint8), count=t, bitorder="little")
            codes[bits.astype(bool)] = 1.0 + k
        return codes

    def sample_world(
        self, player: int, rng: RngLike, constraints: DealConstraints | BeliefDeal | None = None
    ) -> MexicanTrainState:
        """Re-deal what ``player`` cannot see (other hands, boneyard order, future rounds)."""
        return _sample_world(self, player, rng, constraints)

    def random_playout(self, rng: random.Random, *, until_round_end: bool = False) -> None:
        """Play uniformly random legal actions to the end (of the game, or of this round).

        Identical, action for action, to ``legal = s.legal_actions(); s.apply_action(
        legal[int(rng.random() * len(legal))])`` in a loop, only faster
        (``bench/bench_mexican_train.py`` compares the two).
        """
        _random_playout(self, rng, until_round_end=until_round_end)

    # -- plumbing -----------------------------------------------------------------------------
    def clone(self) -> MexicanTrainState:
        c = MexicanTrainState.__new__(MexicanTrainState)
        c.game, c.history, c.hands = self.game, self.history.copy(), self.hands.copy()
        c.boneyard, c.ends, c.lengths = self.boneyard.copy(), self.ends.copy(), self.lengths.copy()
        c.board, c.bonus, c.chain, c.chance_seed = (
            self.board,
            self.bonus,
            self.chain,
            self.chance_seed,
        )
        c.current, c.drawn, c.engine = self.current, self.drawn, self.engine
        c.first_pending, c.log_hash, c.marked = self.first_pending, self.log_hash, self.marked
        c.open_doubles, c.outs, c.over, c.pip_totals = (
            self.open_doubles,
            self.outs,
            self.over,
            self.pip_totals,
        )
        c.round_index, c.round_results = self.round_index, self.round_results
        c.round_starts, c.win = self.round_starts, self.win
        return c

    def render(self) -> str:
        return render_state(self)
