"""The exact belief of a Mexican Train seat facing Commanders, by Markov chain Monte Carlo.

An experiment for ``experiments/decisions/decisions.py`` (spec ``posterior:<worlds>:<steps>``), not
a player: it answers "what would the best possible belief be worth?" when the opponents are known to
be Commanders. The hidden part of a single round is the deal: the other seats' starting hands and
the boneyard's order (draws pop from its end). ``player`` knows their own starting hand and the
tiles they drew; everything else is free. A deal is *consistent* when replaying the round's
public actions from it is legal at every step (each tile laid was held, each DRAW and PASS came
with no playable tile) and every opponent decision with a choice is the Commander's move for
the hand that deal gives it then. The chain's state is a deal; a step swaps two free tiles
between different holders (or boneyard places) and is accepted with Metropolis' rule on the
energy ``ILLEGAL * (actions not replayed) + (Commander mismatches)`` at inverse temperature
``beta``, annealed from 0.3 to ``beta`` over the first half of the steps. Worlds are the states
the kept deals replay to, with the undrawn boneyard reshuffled.

Slow (a full replay with Commander checks per step, ~2 ms) and only for single rounds.
"""

from __future__ import annotations

import math
import random
from typing import Any

from omega_cluster.games.mexican_train.tiles import NUM_SLOTS

ILLEGAL = 20.0  # energy per public action a deal cannot replay


class CommanderPosterior:
    """Deals consistent with ``state``'s public round, for ``player``, opponents Commanders."""

    def __init__(self, state: Any, player: int, commander: Any) -> None:
        game = state.game
        if game.num_rounds != 1 or len(state.round_starts) != 1:
            raise ValueError("CommanderPosterior handles single-round games only")
        self.game, self.player, self.commander = game, player, commander
        self.log = list(state.history)
        start = type(state).initial(game, state.chance_seed)
        n, h = game.num_players, game.hand_size
        # who drew which boneyard place (draws pop from the end), from the true deal
        replay = start.clone()
        drawer: dict[int, int] = {}
        for a in self.log:
            if a == game.draw_action:
                drawer[len(replay.boneyard) - 1] = replay.current_players[0]
            replay.apply_action(a)
        if replay.hands != state.hands:
            raise ValueError("the state is not a replay of its own deal")
        self.bone_len = len(start.boneyard)
        self.mine = start.hands[player]
        fixed = {i: start.boneyard[i] for i, q in drawer.items() if q == player}
        self.fixed_bone = fixed
        # free places: (holder, index): holder q < n an opponent's starting hand, n the boneyard
        places: list[tuple[int, int]] = []
        tiles: list[int] = []
        for q in range(n):
            if q == player:
                continue
            for k, t in enumerate(game.tiles.mask_tiles(start.hands[q])):
                places.append((q, k))
                tiles.append(t)
        for i, t in enumerate(start.boneyard):
            if i not in fixed:
                places.append((n, i))
                tiles.append(t)
        assert len(tiles) == (n - 1) * h + len(start.boneyard) - len(fixed)
        self.places = places
        self.template = start
        # the chain starts from a deal that puts each tile an opponent laid where it could have
        # come from: the place it drew just before; else, if some DRAW or PASS of that seat
        # showed it could not have been held then, the first later draw of that seat's not yet
        # used; else its starting hand. The other free tiles at random.
        laid: dict[int, int] = {}  # tile -> place index
        hand_slots = {
            q: [i for i, (holder, _) in enumerate(places) if holder == q] for q in range(n)
        }
        draw_place = {k: i for i, (holder, k) in enumerate(places) if holder == n}
        kept: dict[int, list[tuple[int, int]]] = {q: [] for q in range(n)}  # (time, place)
        said: dict[int, list[tuple[int, int]]] = {q: [] for q in range(n)}  # (time, mask)
        unseen = (1 << game.tiles.num_tiles) - 1
        replay, last_draw = start.clone(), {}
        for time, a in enumerate(self.log):
            q = replay.current_players[0]
            if a >= game.draw_action and q != player:  # no playable tile: which would have been?
                held = replay.hands[q]
                replay.hands[q] = unseen & ~replay.board
                mask = 0
                for x in replay.legal_actions(q):
                    if x < game.draw_action:
                        mask |= 1 << (x // NUM_SLOTS)
                replay.hands[q] = held
                said[q].append((time, mask))
            if a == game.draw_action:
                last_draw[q] = len(replay.boneyard) - 1
                if q != player and last_draw[q] in draw_place:
                    kept[q].append((time, draw_place[last_draw[q]]))
            elif a < game.draw_action and q != player:
                t = a // NUM_SLOTS
                k = last_draw.pop(q, None) if replay.drawn else None
                if k is not None and k in draw_place:
                    laid[t] = draw_place[k]
                    kept[q] = [(tm, i) for tm, i in kept[q] if i != draw_place[k]]
                else:
                    since = max((tm for tm, m in said[q] if m >> t & 1), default=-1)
                    later = [(tm, i) for tm, i in kept[q] if tm > since]
                    if later:
                        laid[t] = later[0][1]
                        kept[q].remove(later[0])
                    elif since < 0 and hand_slots[q]:
                        laid[t] = hand_slots[q].pop()
            replay.apply_action(a)
        self._laid = laid
        self.true_tiles = tiles  # the real deal (tests: its energy is 0); the chain never reads it
        self._free_tiles = [t for t in tiles if t not in laid]
        self._free_places = sorted(set(range(len(places))) - set(laid.values()))

    def _build(self, tiles: list[int]) -> Any:
        s = self.template.clone()
        n = self.game.num_players
        hands = [0] * n
        hands[self.player] = self.mine
        bone = [0] * self.bone_len
        for i, t in self.fixed_bone.items():
            bone[i] = t
        for (q, k), t in zip(self.places, tiles, strict=True):
            if q == n:
                bone[k] = t
            else:
                hands[q] |= 1 << t
        s.hands, s.boneyard = hands, bone
        return s

    def energy(self, tiles: list[int]) -> tuple[float, Any]:
        """The deal's energy and (when it replays) the state it replays to."""
        s = self._build(tiles)
        act, p = self.commander.act, self.player
        rng = random.Random(0)
        mismatches = 0
        log = self.log
        for i, a in enumerate(log):
            cur = s.current_players[0]
            legal = s.legal_actions(cur)
            if a not in legal:
                return ILLEGAL * (len(log) - i) + mismatches, None
            if cur != p and len(legal) > 1 and act(s, cur, rng) != a:
                mismatches += 1
            s.apply_action(a)
        return float(mismatches), s

    def sample(self, worlds: int, steps: int, beta: float, rng: random.Random) -> list[Any]:
        """``worlds`` states from the chain's second half (evenly spaced)."""
        tiles = [0] * len(self.places)
        for t, i in self._laid.items():
            tiles[i] = t
        rest = list(self._free_tiles)
        rng.shuffle(rest)
        for i, t in zip(self._free_places, rest, strict=True):
            tiles[i] = t
        places = self.places
        e, state = self.energy(tiles)
        burn = steps // 2
        every = max(1, (steps - burn) // worlds)
        out: list[Any] = []
        m = len(tiles)
        self.accepted = 0
        for step in range(steps):
            b = beta if step >= burn else 0.3 + (beta - 0.3) * step / max(1, burn)
            i, j = int(rng.random() * m), int(rng.random() * m)
            # two places of one hand hold the same deal either way: no move
            if places[i][0] != places[j][0] or places[i][0] == self.game.num_players:
                tiles[i], tiles[j] = tiles[j], tiles[i]
                e2, s2 = self.energy(tiles)
                if e2 <= e or rng.random() < math.exp(-b * (e2 - e)):
                    e, state = e2, s2
                    self.accepted += 1
                else:
                    tiles[i], tiles[j] = tiles[j], tiles[i]
            if step >= burn and (step - burn) % every == 0 and len(out) < worlds:
                out.append((e, state))
        self.final_energy = e
        worlds_out = []
        for _, s in out:
            if s is None:
                continue
            w = s.clone()
            rng.shuffle(w.boneyard)
            w.chance_seed = rng.getrandbits(62)
            worlds_out.append(w)
        self.energies = [energy for energy, _ in out]
        return worlds_out


def overlap(state: Any, player: int, worlds: list[Any]) -> float:
    """Mean share of each opponent's true tiles that the worlds give it."""
    shares = [
        (w.hands[q] & state.hands[q]).bit_count() / state.hands[q].bit_count()
        for w in worlds
        for q in range(state.game.num_players)
        if q != player and state.hands[q]
    ]
    return sum(shares) / len(shares)


def main(argv: list[str] | None = None) -> None:
    """How close the chain's worlds come to the true hands, against the deductions' worlds:
    ``python -m experiments.decisions.posterior [--positions 20] [--seed 11] [--steps 3000]``
    (4p positions of ``experiments/decisions/decisions.py``, every 20th of 20 x that many)."""
    import argparse

    from experiments.decisions import decisions as bd
    from omega_cluster.games.mexican_train.inference import deal_constraints

    parser = argparse.ArgumentParser(
        prog="experiments.decisions.posterior", description=main.__doc__
    )
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args(argv)
    bd._setup(4)
    commander = bd._COMMANDER
    chain_shares, deduced_shares, uniform_shares = [], [], []
    for deal, index in bd.positions(4, 20 * args.positions, args.seed)[::20]:
        state = bd._replay(deal, index)
        p = state.current_players[0]
        chain = CommanderPosterior(state, p, commander)
        worlds = chain.sample(40, args.steps, 3.0, random.Random(deal * 31 + index))
        rng = random.Random(deal)
        facts = deal_constraints(state, p)
        deduced = [state.sample_world(p, rng, facts) for _ in range(40)]
        uniform = [state.sample_world(p, rng) for _ in range(40)]
        if not worlds:
            print(f"  {len(state.history):>4} actions: the chain found no legal deal")
            continue
        chain_shares.append(overlap(state, p, worlds))
        deduced_shares.append(overlap(state, p, deduced))
        uniform_shares.append(overlap(state, p, uniform))
        print(
            f"  {len(state.history):>4} actions: true tiles held, chain {chain_shares[-1]:.3f}, "
            f"deductions {deduced_shares[-1]:.3f}, none {uniform_shares[-1]:.3f} (mean mismatches "
            f"{sum(chain.energies) / len(chain.energies):.1f})"
        )
    k = len(chain_shares)
    print(
        f"mean over {k} positions: chain {sum(chain_shares) / k:.3f}, "
        f"deductions {sum(deduced_shares) / k:.3f}, none {sum(uniform_shares) / k:.3f}"
    )


if __name__ == "__main__":
    main()
