"""The conformance suite itself: it passes a correct game and catches each kind of broken one.

Each broken game below is the example game with exactly one contract bug; ``check_game`` must name
the failing check. Without these tests a suite that checks nothing would look green. The same for
``check_kernels``: the example's compiled kernels pass, and each one given a bug is named.
"""

from __future__ import annotations

import dataclasses
import random
from types import ModuleType
from typing import Any

import pytest

from omega_cluster.games.conformance import (
    ConformanceError,
    check_game,
    check_kernels,
    check_trajectory,
)


def test_example_game_passes(blind_war: ModuleType) -> None:
    for players in (2, 3, 4):
        report = check_game(blind_war.BlindWarGame(players=players), playouts=20, seed=3)
        assert report.playouts == 20
        assert report.decisions == 20 * players * 3
        assert report.sampled_worlds > 0 and report.worlds_differing > 0
        assert report.illegal_refused > 0


def _broken(blind_war: ModuleType, **overrides: Any) -> Any:
    state_cls = type("BrokenState", (blind_war.BlindWarState,), overrides)

    class BrokenGame(blind_war.BlindWarGame):
        def new_initial_state(self, seed: int = 0) -> Any:
            good = super().new_initial_state(seed)
            bad = state_cls.__new__(state_cls)
            for slot in ("game", "history", "hands", "table", "leader", "tricks", "seed"):
                setattr(bad, slot, getattr(good, slot))
            return bad

    return BrokenGame(players=3)


def test_no_op_sampler_is_caught(blind_war: ModuleType) -> None:
    game = _broken(blind_war, sample_world=lambda self, p, rng, constraints=None: self.clone())
    with pytest.raises(ConformanceError, match="no-op"):
        check_game(game, playouts=5)


def test_sampler_that_changes_own_hand_is_caught(blind_war: ModuleType) -> None:
    def leaky(self: Any, player: int, rng: Any, constraints: Any = None) -> Any:
        world = blind_war.BlindWarState.sample_world(self, player, rng)
        world.hands[player], world.hands[(player + 1) % 3] = (
            world.hands[(player + 1) % 3],
            world.hands[player],
        )
        return world

    with pytest.raises(ConformanceError, match="sample_world"):
        check_game(_broken(blind_war, sample_world=leaky), playouts=5)


def test_shallow_clone_is_caught(blind_war: ModuleType) -> None:
    def shallow(self: Any) -> Any:
        twin = type(self).__new__(type(self))
        for slot in ("game", "history", "hands", "table", "leader", "tricks", "seed"):
            setattr(twin, slot, getattr(self, slot))  # shares the lists: a classic bug
        return twin

    with pytest.raises(ConformanceError, match="clone independence|changed the truth"):
        check_game(_broken(blind_war, clone=shallow), playouts=5)


def test_unsorted_legal_actions_are_caught(blind_war: ModuleType) -> None:
    def backwards(self: Any, player: int | None = None) -> list[int]:
        return sorted(blind_war.BlindWarState.legal_actions(self, player), reverse=True)

    with pytest.raises(ConformanceError, match="legal actions"):
        check_game(_broken(blind_war, legal_actions=backwards), playouts=5)


def test_bad_returns_are_caught(blind_war: ModuleType) -> None:
    with pytest.raises(ConformanceError, match="returns"):
        check_game(_broken(blind_war, returns=lambda self: (1.0, 0.0)), playouts=2)


def test_nondeterministic_game_is_caught(blind_war: ModuleType) -> None:
    class Unseeded(blind_war.BlindWarGame):
        def new_initial_state(self, seed: int = 0) -> Any:
            return super().new_initial_state(random.randrange(10**9))

    with pytest.raises(ConformanceError, match="determinism|replay"):
        check_game(Unseeded(players=2), playouts=5)


def test_check_trajectory_follows_choices(blind_war: ModuleType) -> None:
    game = blind_war.BlindWarGame(players=2, hand=2)
    first = check_trajectory(game, 5, [0, 0, 0, 0])
    last = check_trajectory(game, 5, [99, 99, 99, 99])
    assert len(first.history) == len(last.history) == 4
    # choice 0 always plays the lowest card, 99 % 2 / 99 % 1 the highest: different games
    assert first.history != last.history


def test_coercing_apply_action_is_caught(blind_war: ModuleType) -> None:
    def coercing(self: Any, action: Any) -> None:  # a game that "helpfully" takes 1.0 for 1
        blind_war.BlindWarState.apply_action(self, int(action))

    with pytest.raises(ConformanceError, match="loose types.*accepted"):
        check_game(_broken(blind_war, apply_action=coercing), playouts=3)


def test_joint_action_read_from_any_iterable_is_caught(blind_war: ModuleType) -> None:
    def iterating(self: Any, actions: Any) -> None:  # takes a set, a str, a generator: tuple(...)
        blind_war.BlindWarState.apply_joint_action(self, tuple(actions))

    with pytest.raises(ConformanceError, match="input types"):
        check_game(_broken(blind_war, apply_joint_action=iterating), playouts=3)


def test_replay_that_coerces_its_seed_is_caught(blind_war: ModuleType) -> None:
    class Rounding(blind_war.BlindWarGame):  # type: ignore[misc]
        def replay(self, seed: Any, history: Any) -> Any:  # "helpfully" takes 2.5 for 2
            return super().replay(int(seed), history)

    with pytest.raises(ConformanceError, match=r"input types.*2\.5 accepted"):
        check_game(Rounding(players=2), playouts=1, seed=2)


def test_replay_that_iterates_any_history_is_caught(blind_war: ModuleType) -> None:
    class Iterating(blind_war.BlindWarGame):  # type: ignore[misc]
        def replay(self, seed: int, history: Any) -> Any:  # reads a str as a list of chars
            return super().replay(seed, list(history))

    with pytest.raises(ConformanceError, match="input types"):
        check_game(Iterating(players=2), playouts=1)


def test_seed_checks_run_on_user_games_without_their_help(race_to_n: ModuleType) -> None:
    game = race_to_n.RaceGame(target=5)  # new_initial_state ignores its seed entirely
    report = check_game(game, playouts=2)
    assert report.playouts == 2  # and every bad seed was refused by the contract's wrapper


def test_zero_probability_chance_outcomes_are_caught() -> None:
    from omega_cluster.games import make_game

    game = make_game("kuhn_poker")
    state_cls = type(game.new_initial_state())

    def padded(self: Any) -> list[tuple[int, float]]:
        return [*state_cls.chance_outcomes(self), (5, 0.0)]

    class Padded(state_cls):  # type: ignore[misc, valid-type]
        __slots__ = ()
        chance_outcomes = padded

    class PaddedGame(type(game)):  # type: ignore[misc]
        def new_initial_state(self, seed: int = 0) -> Any:
            state = super().new_initial_state(seed)
            state.__class__ = Padded
            return state

    with pytest.raises(ConformanceError, match="probability 0"):
        check_game(PaddedGame(), playouts=1)


def test_race_to_n_passes(race_to_n: ModuleType) -> None:
    report = check_game(race_to_n.RaceGame(target=9), playouts=10, seed=2)
    assert report.playouts == 10 and report.illegal_refused > 0


# -- a game's compiled kernels against its rules (check_kernels) ------------------------------------
def test_example_kernels_equal_the_rules(blind_war: ModuleType) -> None:
    """Blind War's kernels (its plugin hook fast_search) play every random game move for move as
    its rules do: states, keys, determinizations, random playouts and encoder rows."""
    for params in ({"players": 2}, {"players": 3}, {"players": 4}, {"players": 3, "deck": 20,
                                                                    "hand": 5}):  # fmt: skip
        game = blind_war.BlindWarGame(**params)
        report = check_kernels(game, playouts=15, seed=4)
        moves = 15 * game.num_players * game.params["hand"]
        assert report.moves == report.worlds == report.rollouts == report.encodings == moves
        assert report.information_sets > moves // 2  # the opponents' sets: one per world's hand


def _broken_kernels(blind_war: ModuleType, **kernels: Any) -> tuple[Any, Any]:
    """Blind War (3 players) and its kernels with ``kernels`` replaced (plain Python functions
    wrapping the compiled ones: check_kernels calls them from Python)."""
    from blind_war.fast import for_game

    game = blind_war.BlindWarGame(players=3)
    fast, _ = for_game(game)
    return game, dataclasses.replace(fast, **kernels)


def test_kernels_that_differ_from_the_rules_are_caught(blind_war: ModuleType) -> None:
    from blind_war import fast as k

    def backwards(ctx: Any, s: Any, out: Any) -> int:
        n = k.legal(ctx, s, out)
        out[:n] = out[:n][::-1].copy()
        return n

    def low_wins(ctx: Any, s: Any, action: int) -> None:  # the trick to the lowest card
        n = ctx[0][0]
        if s[k.TABLE_LEN] == n - 1:
            table = [*s[k.HANDS + n : k.HANDS + 2 * n - 1].tolist(), action]
            leader = s[k.LEADER]
            k.apply(ctx, s, action)
            s[k.HANDS + 2 * n + s[k.LEADER]] -= 1
            s[k.LEADER] = (leader + table.index(min(table))) % n
            s[k.HANDS + 2 * n + s[k.LEADER]] += 1
            return
        k.apply(ctx, s, action)

    def peeking(ctx: Any, s: Any, player: int, rs: Any, out: Any) -> None:  # the true deal
        k.sample_world(ctx, s, player, rs, out)
        out[:] = s

    def blind_key(ctx: Any, s: Any, player: int) -> int:  # forgets the hand
        return int(s[k.LOG]) * 7 + player

    def wrong_returns(ctx: Any, s: Any, out: Any) -> None:
        k.returns(ctx, s, out)
        out[0] += 1.0

    def no_best(ectx: Any, ctx: Any, s: Any, p: int, legal: Any, n: int, obs: Any,
                feats: Any) -> None:  # fmt: skip
        k.encode(ectx, ctx, s, p, legal, n, obs, feats)
        feats[:n, ectx[-1]] = 1.0

    cases = (
        ({"legal": backwards}, "kernels: legal"),
        ({"apply": low_wins}, "kernels: apply"),
        ({"sample_world": peeking}, "kernels: sample_world"),
        ({"info_key": blind_key}, "kernels: info_key"),
        ({"returns": wrong_returns}, "kernels: returns"),
        ({"encode": no_best}, "kernels: encode"),
    )
    for kernels, check in cases:
        game, fast = _broken_kernels(blind_war, **kernels)
        with pytest.raises(ConformanceError, match=check):
            check_kernels(game, fast, playouts=10)


def test_a_game_without_kernels_is_named(race_to_n: ModuleType) -> None:
    with pytest.raises(ConformanceError, match=r"\[race_to_n\] has no compiled kernels"):
        check_kernels(race_to_n.RaceGame())
