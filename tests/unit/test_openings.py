"""A deal's random opening (``play_game(opening=k)``, ``gate.opening_moves``): a game without
chance between deterministic players plays one game on every deal; with an opening, each deal
is its own game, the same opening in both seatings of the deal (the gate's pair).

Played on OpenSpiel's tic-tac-toe through the adapter (no chance, perfect information) with a
player that always takes the first legal action: as deterministic as a greedy network."""

from __future__ import annotations

import random

import pytest

from omega_cluster.eval.arena import ArenaError, play_game
from omega_cluster.eval.gate_bench import gate_specs
from omega_cluster.eval.matches import play_spec
from omega_cluster.games.api import State
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.registry import make_game

GAME = "openspiel:tic_tac_toe"


class FirstLegal:
    """Always the first legal action: a deterministic player."""

    name = "first_legal"

    def act(self, state: State, player: int, rng: random.Random) -> int:
        return state.legal_actions(player)[0]


def _replay(game_name: str, seed: int, opening: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """The game's actions and returns, played by hand with the rule of the arena's opening."""
    game = make_game(game_name)
    state = game.new_initial_state(seed)
    rng = random.Random(derive_seed(seed, "opening"))
    moves: list[int] = []
    while acting := state.current_players:
        legal = state.legal_actions(acting[0])
        action = legal[rng.randrange(len(legal))] if len(moves) < opening else legal[0]
        state.apply_action(action)
        moves.append(action)
    return tuple(moves), tuple(float(r) for r in state.returns())


def test_without_an_opening_every_deal_is_the_same_game() -> None:
    game = make_game(GAME)
    records = [play_game(game, [FirstLegal(), FirstLegal()], seed=s) for s in range(8)]  # type: ignore[list-item]
    assert len({(r.returns, r.history_length) for r in records}) == 1


def test_an_opening_makes_each_deal_its_own_game() -> None:
    game = make_game(GAME)
    openings = set()
    for seed in range(12):
        record = play_game(game, [FirstLegal(), FirstLegal()], seed=seed, opening=3)  # type: ignore[list-item]
        moves, returns = _replay(GAME, seed, 3)
        assert record.history_length == len(moves)  # the arena played the opening of the rule
        assert record.num_decisions == len(moves) and record.returns == returns
        openings.add(moves[:3])
    assert len(openings) >= 10  # 504 openings of 3 moves: 12 deals all but never repeat


def test_both_games_of_a_gate_pair_open_alike() -> None:
    """gate_specs(opening=k): the two seatings of a deal share its opening (the deal seed)."""
    specs = gate_specs(GAME, {}, 2, seed=5, deals=range(4), opening=2)
    assert all(s.opening == 2 for s in specs)
    for a, b in zip(specs[::2], specs[1::2], strict=True):
        assert a.deal == b.deal and a.deal_seed == b.deal_seed and a.seats != b.seats
        players = [FirstLegal(), FirstLegal()]
        ra = play_spec(a, players=players)  # type: ignore[arg-type]
        rb = play_spec(b, players=players)  # type: ignore[arg-type]
        assert ra.record.history_length == rb.record.history_length  # the same game twice
    assert len({_replay(GAME, s.deal_seed, 2)[0][:2] for s in specs[::2]}) > 1


@pytest.mark.parametrize("opening", [-1, 1.5, True])
def test_a_bad_opening_is_refused(opening: object) -> None:
    with pytest.raises(ArenaError, match="opening must be an int >= 0"):
        play_game(make_game(GAME), [FirstLegal(), FirstLegal()], seed=0, opening=opening)  # type: ignore[arg-type, list-item]
