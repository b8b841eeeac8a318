"""The exact card path of ``sample_world`` (hearts, oh_hell) and the compiled card kernels.

* :class:`Holdings` draws every valid assignment equally often (counted against a brute-force
  enumeration), the compiled draw too, and never fails where an assignment exists;
* at late positions of real games the members of the player's information set are enumerated
  independently (every deal of the unseen cards, each replayed move by move in pyspiel against
  the player's views): every world is a member and each member, the true deal included, comes up
  as often as the others (chi-square, fixed seeds, a wide bound) — compiled and Python paths;
* what hearts' rules prove is honoured (a point card on the first trick, a heart led before
  hearts broke, the first leader's two of clubs): deals built so the rule decides;
* two states of one information set give the same search;
* no position goes without a world, every world passing the adapter's replay check;
* the compiled playout's legal moves are pyspiel's at every step of random games (hearts' rule
  variants, oh_hell's tables), and its playouts replay in pyspiel to the same returns.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from omega_cluster._optional import numba_available
from omega_cluster.games.openspiel import OpenSpielGame, OpenSpielState
from omega_cluster.games.openspiel.card_games import UNDEALT, Deal
from omega_cluster.games.openspiel.holdings import Holdings
from omega_cluster.games.openspiel.knowledge import replay_check
from omega_cluster.games.openspiel.sampling import CardWorlds
from omega_cluster.players.registry import make_player

pytest.importorskip("pyspiel")

compiled = pytest.mark.skipif(not numba_available(), reason="numba is an optional extra")


def _chi_square_ok(counts: Counter[Any], categories: list[Any], draws: int) -> None:
    """Each category about ``draws / len(categories)`` times: the chi-square statistic below
    its mean plus eight standard deviations (a fixed seed; a biased draw lands far beyond)."""
    k = len(categories)
    expected = draws / k
    stat = sum((counts[c] - expected) ** 2 / expected for c in categories)
    assert set(counts) <= set(categories)
    assert stat < (k - 1) + 8 * math.sqrt(2 * (k - 1)), (stat, k, counts.most_common(3))


# -- Holdings -------------------------------------------------------------------------------------
UNKNOWN = (0, 1, 2, 3, 4, 5, 6)
SLOTS = (2, 2, 3)
FORBIDDEN = (0b0000011, 0b1000000, 0)  # holder 0 never 0, 1; holder 1 never 6


def _valid_assignments() -> list[tuple[frozenset[int], ...]]:
    out = []
    for perm in itertools.permutations(UNKNOWN):
        parts = (perm[:2], perm[2:4], perm[4:])
        if all(not any(FORBIDDEN[h] >> c & 1 for c in part) for h, part in enumerate(parts)):
            out.append(tuple(frozenset(p) for p in parts))
    return sorted(set(out), key=lambda a: [sorted(p) for p in a])


def test_holdings_draws_every_valid_assignment_equally_often() -> None:
    valid = _valid_assignments()
    holdings, rng = Holdings(UNKNOWN, SLOTS, FORBIDDEN), random.Random(3)
    draws = 200 * len(valid)
    counts = Counter(tuple(frozenset(h) for h in holdings.draw(rng)) for _ in range(draws))
    _chi_square_ok(counts, valid, draws)


@compiled
def test_the_compiled_draw_is_the_same_distribution() -> None:
    from omega_cluster.games.openspiel._card_kernels import draw_world, pack

    valid = _valid_assignments()
    places = ((0, 1), (2, 3), ())  # holder 2 is a stock: no places
    deal = Deal(UNKNOWN, (1, 2, UNDEALT), SLOTS, FORBIDDEN, (-1,) * 4, places)
    ints, floats = pack(Holdings(UNKNOWN, SLOTS, FORBIDDEN), deal)
    hist, text = np.empty(4, np.int64), np.empty(16, np.uint8)
    rng, counts = random.Random(4), Counter()
    draws = 200 * len(valid)
    for _ in range(draws):
        size = draw_world(ints, floats, rng.getrandbits(63), hist, text)
        assert text[:size].tobytes().decode() == "\n".join(str(v) for v in hist)
        a, b = frozenset(hist[:2].tolist()), frozenset(hist[2:].tolist())
        counts[(a, b, frozenset(UNKNOWN) - a - b)] += 1
    _chi_square_ok(counts, valid, draws)


def test_holdings_refuses_what_no_assignment_fits() -> None:
    with pytest.raises(ValueError, match="unknown cards for"):
        Holdings((1, 2), (1, 2), (0, 0))
    with pytest.raises(ValueError, match="no assignment"):
        Holdings((1, 2), (1, 1), (0b110, 0))  # holder 0 may hold neither card


# -- worlds at real positions -------------------------------------------------------------------
def _agrees(truth: OpenSpielState, history: list[int], player: int) -> bool:
    """``history`` is legal move by move and ``player`` acts and sees what it saw in the truth
    (independent of the adapter: pyspiel alone)."""
    pg = truth.game.pyspiel_game
    a, b = pg.new_initial_state(), pg.new_initial_state()
    for ours, theirs in zip(truth.history, history, strict=True):
        if b.is_terminal() or theirs not in b.legal_actions():
            return False
        if a.current_player() == player or b.current_player() == player:
            if a.current_player() != b.current_player():
                return False
            if a.information_state_string(player) != b.information_state_string(player):
                return False
        a.apply_action(ours)
        b.apply_action(theirs)
    return a.current_player() == b.current_player() and (
        a.information_state_string(player) == b.information_state_string(player)
    )


def _members(truth: OpenSpielState, player: int, deal_at: int, per: int) -> list[str]:
    """The information set of ``player`` at ``truth``, by brute force: every deal of the cards
    it has not seen (round the table from entry ``deal_at``, ``per`` cards a seat; the rest in
    the stock), kept when it agrees (:func:`_agrees`); each member as pyspiel's state string."""
    pg, n = truth.game.pyspiel_game, truth.game.num_players
    deck, after = pg.max_chance_outcomes(), deal_at + per * n
    played: dict[int, list[int]] = {s: [] for s in range(n)}
    for e in truth.pyspiel_state.full_history()[after:]:
        if e.player >= 0 and e.action < deck:  # a card played (not a bid)
            played[e.player].append(e.action)
    mine = truth.history[deal_at + player : after : n]
    seen = set(mine) | set(truth.history[after:])
    unknown = [c for c in range(deck) if c not in seen]
    others = [s for s in range(n) if s != player]
    checked: set[tuple[tuple[int, ...], ...]] = set()
    members = []
    for perm in itertools.permutations(unknown):
        hands = {player: sorted(mine)}
        at = 0
        for s in others:
            k = per - len(played[s])
            hands[s] = sorted(played[s] + list(perm[at : at + k]))
            at += k
        key = tuple(tuple(hands[s]) for s in range(n))
        if key in checked:
            continue
        checked.add(key)
        deal = [hands[i % n][i // n] for i in range(per * n)]
        history = [*truth.history[:deal_at], *deal, *truth.history[after:]]
        if _agrees(truth, history, player):
            state = pg.new_initial_state()
            for entry in history:
                state.apply_action(entry)
            members.append(str(state))
    return sorted(members)


def _late_position(game: OpenSpielGame, seed: int, left: int) -> OpenSpielState:
    """A decision ``left`` entries before the end of a random game, where the player to move
    has seen someone show a void (so the deal is constrained)."""
    rng = random.Random(seed)
    while True:
        line, probe = [], game.new_initial_state()
        while not probe.is_terminal():
            line.append(rng.choice(probe.legal_actions()))
            probe.apply_action(line[-1])
        state = game.new_initial_state()
        for entry in line[:-left]:
            state.apply_action(entry)
        worlds = CardWorlds.of(state, state.current_players[0], game.card_game)  # type: ignore[arg-type]
        if worlds is not None and worlds.holdings.constrained:
            return state


@pytest.mark.parametrize(
    ("name", "params", "deal_at", "per", "left", "seed"),
    [
        ("hearts", {"pass_cards": False}, 1, 13, 8, 1),
        ("oh_hell", {"num_suits": 2, "num_cards_per_suit": 6, "num_tricks_fixed": 3}, 2, 3, 6, 2),
    ],
)
@pytest.mark.parametrize("path", ["compiled", "python"])
def test_worlds_are_uniform_over_the_information_set(
    name: str, params: dict[str, Any], deal_at: int, per: int, left: int, seed: int, path: str
) -> None:
    if path == "compiled" and not numba_available():
        pytest.skip("numba is an optional extra")
    game = OpenSpielGame(name=name, **params)
    truth = _late_position(game, seed, left)
    player = truth.current_players[0]
    members = _members(truth, player, deal_at, per)
    assert str(truth.pyspiel_state) in members and 4 <= len(members) <= 200
    worlds = CardWorlds.of(truth, player, game.card_game)  # type: ignore[arg-type]
    assert worlds is not None and worlds.holdings.constrained
    assert (worlds.packed is not None) == numba_available()
    if path == "python":
        worlds.packed = None  # the twin: Holdings.draw and CardGame.world
    rng = random.Random(11)
    draws = 120 * len(members)
    counts: Counter[str] = Counter()
    for _ in range(draws):
        world = worlds.draw(rng)
        assert world is not None
        counts[str(world.pyspiel_state)] += 1
    _chi_square_ok(counts, members, draws)  # the truth is one member among the others


# -- hearts' own rules --------------------------------------------------------------------------
def _hearts(hands: list[list[int]], plays: list[int], **params: Any) -> OpenSpielState:
    """A hearts state without passing: seat ``s`` dealt ``hands[s]``, then ``plays``."""
    assert sorted(c for h in hands for c in h) == list(range(52))
    state = OpenSpielGame(name="hearts", pass_cards=False, **params).new_initial_state()
    for entry in [0, *(hands[i % 4][i // 4] for i in range(52)), *plays]:
        state.apply_action(entry)
    return state


def _worlds(state: OpenSpielState, player: int, count: int = 60) -> list[OpenSpielState]:
    rng = random.Random(0)
    worlds = [state.sample_world(player, rng) for _ in range(count)]
    for world in worlds:
        assert _agrees(state, world.history, player)
    return worlds


def _hand(world: OpenSpielState, seat: int) -> set[int]:
    return set(world.history[1 + seat : 53 : 4])


HEARTS = set(range(2, 52, 4))
QS = 43


def test_a_point_card_on_the_first_trick_proves_a_hand_of_points() -> None:
    # seat 1 holds every heart: on the first trick it cannot follow clubs and has no card
    # without points, so it may play 2H; its other cards are then hearts (or the queen of spades)
    clubs, diamonds, spades = list(range(0, 52, 4)), list(range(1, 52, 4)), list(range(3, 52, 4))
    hands = [clubs[:7] + diamonds[:6], sorted(HEARTS), clubs[7:] + diamonds[6:], spades]
    state = _hearts(hands, [0, 2, 28, 3])  # 2C, 2H, 9C, 2S
    for world in _worlds(state, 0):
        assert _hand(world, 1) <= HEARTS | {QS}
    assert any(QS in _hand(w, 1) for w in _worlds(state, 0))  # and no tighter than that


def test_a_heart_led_before_hearts_broke_proves_a_hand_of_hearts() -> None:
    c = list(range(0, 52, 4))
    d, s = list(range(1, 52, 4)), list(range(3, 52, 4))
    hands = [
        [c[0], c[1], *d[:11]],
        [c[2], c[3], c[4], 2, d[11], d[12], *s[:7]],
        [c[12], *sorted(HEARTS - {2})],
        [*c[5:12], *s[7:]],
    ]
    state = _hearts(hands, [0, 8, 48, 20, 6])  # the ace of clubs wins, then seat 2 leads 3H
    for world in _worlds(state, 0):
        assert _hand(world, 2) - {48} <= HEARTS


def test_the_first_leader_holds_the_two_of_clubs() -> None:
    c, d, h, s = (list(range(k, 52, 4)) for k in range(4))
    hands = [[*c[:4], *d[:9]], [*c[4:8], *d[9:], *h[:5]], [*c[8:], *h[5:]], s]
    for plays in ([], [4]):  # to lead, and after leading 3C (can_lead_any_club)
        state = _hearts(hands, plays, can_lead_any_club=True)
        for world in _worlds(state, 1):
            assert 0 in _hand(world, 0)


# -- the search, and every position ---------------------------------------------------------------
def test_two_states_of_one_information_set_get_the_same_search() -> None:
    game = OpenSpielGame(name="hearts", pass_cards=False)
    truth = _late_position(game, 4, 30)
    player = truth.current_players[0]
    other = truth.sample_world(player, random.Random(9))
    assert str(other.pyspiel_state) != str(truth.pyspiel_state)
    assert other.information_set_key(player) == truth.information_set_key(player)
    search = make_player("ismcts:random:150", game).search  # type: ignore[attr-defined]
    a = search.search(truth, player, random.Random(3))
    b = search.search(other, player, random.Random(3))
    assert a.visits == b.visits and a.action == b.action


@pytest.mark.parametrize(
    ("name", "params"),
    [("hearts", {"pass_cards": False}), ("hearts", {}), ("oh_hell", {"players": 4})],
)
def test_every_position_gets_a_world_that_agrees(name: str, params: dict[str, Any]) -> None:
    game = OpenSpielGame(name=name, **params)
    rng, positions = random.Random(6), 0
    while positions < 60:
        state = game.new_initial_state()
        stop = rng.randrange(200)
        while not state.is_terminal() and len(state.history) < stop:
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal() or state.is_chance_node():
            continue
        positions += 1
        player = rng.randrange(game.num_players)
        known = state._knowledge(player)
        for _ in range(3):
            world = state.sample_world(player, rng)
            reach = replay_check(game.pyspiel_game, world.history, known, game._info_kind)
            assert reach.index > known.length, (state.history, player)


# -- the compiled playout -------------------------------------------------------------------------
@compiled
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("hearts", {}),
        ("hearts", {"pass_cards": False}),
        ("hearts", {"no_pts_on_first_trick": False, "can_lead_any_club": True, "jd_bonus": True,
                    "avoid_all_tricks_bonus": True, "must_break_hearts": False,
                    "qs_breaks_hearts": False, "can_lead_hearts_instead_of_qs": True}),
        ("hearts", {"can_lead_hearts_instead_of_qs": True, "qs_breaks_hearts": False}),
        ("oh_hell", {}),
        ("oh_hell", {"players": 7, "off_bid_penalty": True, "points_per_trick": 2}),
        ("oh_hell", {"players": 4, "num_suits": 2, "num_cards_per_suit": 5,
                     "num_tricks_fixed": 2}),
    ],
)  # fmt: skip
def test_the_compiled_playout_follows_pyspiels_rules(name: str, params: dict[str, Any]) -> None:
    from omega_cluster.games.openspiel._card_kernels import legal_after, playout, rules

    game = OpenSpielGame(name=name, **params)
    pg = game.pyspiel_game
    r = rules(name, pg.get_parameters())
    rng = random.Random(len(name) + len(params))
    out, moves = np.empty(64, np.int64), np.empty(pg.max_history_length(), np.int64)
    returns = np.empty(game.num_players, np.float64)
    for _ in range(6):
        state = game.new_initial_state()
        while True:
            history = np.array(state.history, np.int64)
            count = legal_after(r, history, out)
            if state.is_terminal():
                assert count == 0
                break
            legal = state.legal_actions()  # the adapter's: chance outcomes that can happen
            assert sorted(out[:count].tolist()) == legal, state.history
            if rng.random() < 0.15:  # a playout from here replays in pyspiel to its returns
                played = playout(r, history, rng.getrandbits(63), moves, returns)
                world = state.clone()
                for action in moves[:played].tolist():
                    world.apply_action(action)  # checked: illegal raises
                assert world.is_terminal() and world.returns() == tuple(returns.tolist())
            state.apply_action(rng.choice(legal))


@compiled
def test_random_playout_returns_is_uniform_over_the_first_move() -> None:
    game = OpenSpielGame(name="oh_hell", num_tricks_fixed=3, players=3)
    state = game.new_initial_state()
    for entry in (3, 0, *range(9), 9):  # three tricks, dealer 0, nine cards dealt, the trump
        state.apply_action(entry)
    # seat 1 bids first: every legal bid comes up about as often as the others
    rng, firsts = random.Random(2), Counter()
    kernel, r, moves, returns = game._playout
    history = np.array(state.history, np.int64)
    for _ in range(3000):
        kernel(r, history, rng.getrandbits(63), moves, returns)
        firsts[int(moves[0])] += 1
    _chi_square_ok(firsts, state.legal_actions(), 3000)
    assert len(state.random_playout_returns(rng)) == 3  # type: ignore[attr-defined]
