"""Determinizations that believe the opponents are Commanders: rejection by their recent moves.

A uniform determinization (``sample_world``) gives an opponent any hand consistent with the hard
facts (:mod:`.inference`: draws and passes). But a Commander is deterministic: the move it made
says something about the hand it held, since with most other hands it would have made another.
:class:`CommanderBelief` keeps a world only if a Commander holding that world's hand, put back in
the positions where the opponent chose its recent moves, chooses the same moves — rejection
sampling from the posterior over hands under the model "the opponents are Commanders" (the
opponent-model inference of determinized search: Whitehouse, Powley & Cowling 2011, Dou Di Zhu;
Buro et al. 2009's inference for Skat). Why: a search that knew the true hands would pick
better moves than one over uniform worlds, and a belief closer to the true hands closes part of
that gap. How much this model adds over the hard deductions is small: a Commander's few recent
moves say little about the tiles that decide the round.

How a past decision is rebuilt without the hidden history: replaying the round's public actions
gives every public fact at each decision (train ends, markers, open doubles, the board, hand
sizes, the boneyard size); the opponent's hand then is its hand in the world now plus the tiles
it has laid since, less a tile it drew and laid at once after that decision (under ``must_play``
a tile laid right after a draw is the drawn one). A tile drawn and kept (a draw, then a pass)
could be any tile of the hand now, so only decisions after an opponent's last kept draw are
checked, the ``max_checks`` most recent ones. A Commander reads nothing else of another
player's hand than its size, so a view of each decision is built once per search and only the
opponent's hand changes per world.

Up to ``max_tries`` worlds are drawn (with the hard deductions); the first that passes every
check is kept, else the one that passed the most recent checks. Only public facts and the
searching player's own view are read, so it leaks nothing (the same worlds for states the
player cannot tell apart, for the same random numbers). Rules other than the default ones
(``must_play``, no ``draw_until_playable``, no ``first_turn_chain``) fall back to the hard
deductions alone. The search players turn it on with ``belief=commander``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from omega_cluster.games.api import State
from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.inference import (
    PublicReplay,
    deal_constraints,
    deductions_sound,
)
from omega_cluster.games.mexican_train.officers.commander import Commander

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train import DealConstraints, MexicanTrainState

__all__ = ["CommanderBelief"]


@dataclass
class _Check:
    """One recent decision of an opponent: its rebuilt position and the move it made."""

    seat: int  # the opponent
    action: int  # the move it made
    add_back: int  # tiles it laid since (and held then): its hand then = hand now | add_back
    view: MexicanTrainState  # the public position then (the opponent's hand set per world)


class CommanderBelief:
    """A ``world_sampler`` for ISMCTS on Mexican Train (see the module docstring)."""

    def __init__(
        self,
        game: MexicanTrainGame,
        *,
        commander: Commander | None = None,
        max_tries: int = 40,
        max_checks: int = 3,
    ) -> None:
        if not isinstance(game, MexicanTrainGame):
            raise TypeError(f"CommanderBelief models Mexican Train, not {game.spec.name!r}")
        if max_tries < 1 or max_checks < 0:
            raise ValueError(
                f"max_tries must be >= 1 and max_checks >= 0, got {max_tries}, {max_checks}"
            )
        self.game = game
        self.commander = commander or Commander(game)
        self.max_tries = max_tries
        self.max_checks = max_checks
        self._key: tuple[int, object] | None = None  # the root's (player, information set)
        self._facts: DealConstraints | None = None
        self._checks: list[_Check] = []
        self.tries = 0  # worlds drawn (diagnostics)
        self.accepted = 0  # worlds that passed every check

    def __call__(self, state: State, player: int, rng: random.Random) -> State:
        key = (player, state.information_set_key(player))
        if key != self._key:  # a new search: rebuild the deductions and the checks
            self._key = key
            self._facts = deal_constraints(state, player)
            self._checks = self._recent_checks(cast("MexicanTrainState", state), player)
        best, best_passed = None, -1
        act = self.commander.act
        for _ in range(self.max_tries):
            world = cast("MexicanTrainState", state.sample_world(player, rng, self._facts))
            self.tries += 1
            passed = 0
            for check in self._checks:
                check.view.hands[check.seat] = world.hands[check.seat] | check.add_back
                if act(check.view, check.seat, rng) != check.action:
                    break
                passed += 1
            if passed == len(self._checks):
                self.accepted += 1
                return world
            if passed > best_passed:
                best, best_passed = world, passed
        assert best is not None
        return best

    # -- rebuilding the recent decisions ------------------------------------------------------
    def _recent_checks(self, state: MexicanTrainState, player: int) -> list[_Check]:
        """Replay the round's public actions; keep each opponent's plays since its last kept
        draw, most recent first, at most ``max_checks`` of them in all."""
        game = self.game
        if self.max_checks == 0 or state.over or not deductions_sound(game):
            return []
        n, draw = game.num_players, game.tiles.draw_action
        start = state.round_starts[-1]
        replay = PublicReplay(state)
        board, drew = 0, False
        sizes = [game.hand_size] * n
        boneyard = len(state.boneyard) + sum(
            1 for a in state.history[start:] if a == draw
        )  # the boneyard at the deal: now plus every draw since
        open_checks: list[list[tuple[int, int, int, tuple[object, ...]]]] = [[] for _ in range(n)]
        add_back: dict[tuple[int, int], int] = {}
        draw_at = -1  # history index of the acting seat's draw in this play (-1: none)
        for index in range(start, len(state.history)):
            a = cast(int, state.history[index])
            cur = replay.cur
            if a >= draw:
                if a == draw:
                    draw_at, drew = index, True
                    boneyard -= 1
                    sizes[cur] += 1
                else:
                    if drew:  # a kept draw: earlier hands cannot be rebuilt
                        open_checks[cur] = []
                    replay.pass_turn()
                    drew, draw_at = False, -1
                continue
            if cur != player:
                snapshot = (tuple(replay.ends), replay.marked, tuple(replay.doubles),
                            replay.bonus, drew, board, boneyard, tuple(sizes))  # fmt: skip
                open_checks[cur].append((index, cur, a, snapshot))
            t = replay.play(a)
            for check_index, seat, _, _ in open_checks[cur]:
                if not (drew and check_index < draw_at):  # the drawn tile came after it
                    add_back[(check_index, seat)] = add_back.get((check_index, seat), 0) | 1 << t
            drew, draw_at = False, -1
            sizes[cur] -= 1
            board |= 1 << t
        recent = sorted((c for seat in open_checks for c in seat), reverse=True)[: self.max_checks]
        return [
            _Check(seat, action, add_back.get((index, seat), 0), self._view(state, seat, snap))
            for index, seat, action, snap in recent
        ]

    @staticmethod
    def _view(
        state: MexicanTrainState, seat: int, snapshot: tuple[object, ...]
    ) -> MexicanTrainState:
        """A position with the public facts of ``snapshot``, ``seat`` to move; the other hands
        are placeholders of the right sizes (a Commander reads only their sizes)."""
        ends, marked, doubles, bonus, drew, board, boneyard, sizes = snapshot
        view = state.clone()
        view.ends = list(cast(tuple[int, ...], ends))
        view.marked = cast(int, marked)
        view.open_doubles = cast(tuple[int, ...], doubles)
        view.bonus = cast(bool, bonus)
        view.drawn = cast(bool, drew)
        view.chain = False
        view.board = cast(int, board)
        view.boneyard = [0] * cast(int, boneyard)
        view.current = seat
        view.hands = [(1 << size) - 1 for size in cast(tuple[int, ...], sizes)]
        return view
