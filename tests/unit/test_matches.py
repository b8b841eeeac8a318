"""Match specifications, chunking and merging, slices, the paired design and the Mexican Train
counts hook. Games are short (Kuhn poker, one-round Mexican Train) with fixed seeds."""

from __future__ import annotations

import pickle

import pytest

from omega_cluster.eval.counts import counts_hook
from omega_cluster.eval.matches import (
    BenchError,
    MatchSpec,
    SliceKey,
    chunk_specs,
    match_spec,
    merge_results,
    play_spec,
    play_specs,
    slice_outcomes,
)
from omega_cluster.eval.paired import paired_sample, paired_specs
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.mexican_train.counts import mexican_train_counts
from omega_cluster.games.registry import make_game
from omega_cluster.players.registry import PlayerSpecError

MT = "mexican_train"
MT1 = {"rounds": 1}


def kuhn_bench(games: int = 12) -> tuple[MatchSpec, ...]:
    return tuple(
        match_spec("kuhn_poker", ["random", "random"], derive_seed(7, i), index=i, deal=i)
        for i in range(games)
    )


def test_match_spec_normalizes_params_and_seeds() -> None:
    spec = match_spec(MT, [" ensign", "ensign "], 5, params={"hand_sizes": [9] * 7, "rounds": 1})
    assert spec.seats == ("ensign", "ensign")
    assert spec.params_dict == {"hand_sizes": (9,) * 7, "players": 2, "rounds": 1}
    assert spec.seat_seeds == (derive_seed(5, "player", 0, 0), derive_seed(5, "player", 0, 1))
    assert hash(spec) == hash(match_spec(MT, ["ensign", "ensign"], 5, params=spec.params_dict))
    with pytest.raises(BenchError, match="seat seeds"):
        MatchSpec(MT, (), ("ensign",), 1, (1, 2))
    with pytest.raises(BenchError, match="focus seat 3"):
        match_spec(MT, ["ensign"] * 2, 1, focus=3)


def test_play_spec_is_a_pure_function_of_its_spec() -> None:
    spec = match_spec(MT, ["commander", "ensign", "lieutenant"], 11, params=MT1, index=4)
    first, second = play_spec(spec), play_spec(spec)
    assert first == second
    assert first.record.index == 4 and first.objective == "points"
    assert set(first.record.counts) == {
        "went_out",
        "blocked_rounds",
        "markers_placed",
        "pips_left",
        "rounds_won",
    }
    # what a Ray worker sends back survives pickling unchanged
    assert pickle.loads(pickle.dumps(first)) == first
    assert play_spec(spec, counts=False).record.counts == {}


def test_chunks_played_apart_merge_into_the_whole_bench() -> None:
    specs = kuhn_bench(12)
    whole = play_specs(specs)
    chunks = chunk_specs(specs, size=5)
    assert [len(c) for c in chunks] == [5, 5, 2]
    parts = [play_specs(c) for c in reversed(chunks)]  # any order, any worker
    parts.append(parts[0])  # a retried chunk: identical results merge once
    assert merge_results(parts, expected=specs) == whole


def test_merge_results_rejects_empty_missing_and_conflicting_results() -> None:
    specs = kuhn_bench(4)
    results = play_specs(specs)
    with pytest.raises(BenchError, match="no results"):
        merge_results([[], []])
    with pytest.raises(BenchError, match="1 match specs have no result"):
        merge_results([results[:3]], expected=specs)
    other = play_spec(match_spec("kuhn_poker", ["random"] * 2, 99, index=0))
    with pytest.raises(BenchError, match="two different results for match spec 0"):
        merge_results([results, [other]])
    with pytest.raises(BenchError, match="of another spec"):
        merge_results([[other, *results[1:]]], expected=specs)
    with pytest.raises(BenchError, match="positive int"):
        chunk_specs(specs, size=0)


def test_paired_specs_fix_everything_but_the_focus_player() -> None:
    specs = paired_specs(MT, "commander", "ensign", ["lieutenant", "ensign"], [3, 8], params=MT1)
    assert len(specs) == 2 * 3 * 2  # seeds × rotations × arms
    assert [s.index for s in specs] == list(range(12))
    for a, b in zip(specs[::2], specs[1::2], strict=True):
        assert (a.arm, b.arm) == ("a", "b")
        assert a.deal_seed == b.deal_seed and a.seat_seeds == b.seat_seeds
        assert a.focus == b.focus == a.rotation
        assert a.seats[a.focus] == "commander" and b.seats[b.focus] == "ensign"
        others = [a.seats[(a.focus + 1 + k) % 3] for k in range(2)]
        assert others == ["lieutenant", "ensign"]  # the others rotate with the focus seat
        assert [x for i, x in enumerate(a.seats) if i != a.focus] == [
            x for i, x in enumerate(b.seats) if i != b.focus
        ]
    assert {s.deal_seed for s in specs[:6]} == {3} and specs[6].deal == 1


def test_paired_specs_reject_bad_players_seats_and_seeds() -> None:
    with pytest.raises(PlayerSpecError, match="unknown player 'capitan'"):
        paired_specs(MT, "capitan", "ensign", "ensign", [1], params=MT1)
    with pytest.raises(BenchError, match="give 3"):
        paired_specs(MT, "ensign", "ensign", ["ensign"], [1], params={"players": 4, "rounds": 1})
    with pytest.raises(BenchError, match="distinct seats"):
        paired_specs(MT, "ensign", "ensign", "ensign", [1], params=MT1, rotations=[0, 4])
    with pytest.raises(BenchError, match="at least one deal seed"):
        paired_specs(MT, "ensign", "ensign", "ensign", [], params=MT1)


def test_paired_sample_averages_rotations_per_seed() -> None:
    specs = paired_specs(MT, "commander", "lieutenant", "lieutenant", [21, 22, 23], params=MT1)
    results = play_specs(specs)
    sample = paired_sample(results)
    assert (sample.a_player, sample.b_player, sample.rotations) == ("commander", "lieutenant", 4)
    assert sample.deal_seeds == (21, 22, 23)
    # B is a Lieutenant among Lieutenants (deterministic players): over the four rotations of a
    # deal it sits in every seat of the same game once, so it wins exactly a quarter per deal.
    assert sample.b == pytest.approx((0.25, 0.25, 0.25))
    first = [r.value("win_share", r.spec.rotation) for r in results[:8:2]]  # focus == rotation
    assert sample.a[0] == pytest.approx(sum(first) / 4)
    assert sample.differences[0] == pytest.approx(sample.a[0] - 0.25)
    pips = paired_sample(results, metric="pips_left")
    scores = [r.record.scores[r.spec.rotation] for r in results[:8:2]]
    assert pips.a[0] == pytest.approx(sum(scores) / 4)
    with pytest.raises(BenchError, match="unknown metric 'elo'"):
        paired_sample(results, metric="elo")


def test_paired_sample_rejects_empty_and_unpaired_results() -> None:
    specs = paired_specs(MT, "commander", "lieutenant", "lieutenant", [5], params=MT1)
    results = play_specs(specs)
    with pytest.raises(BenchError, match="no results"):
        paired_sample([])
    with pytest.raises(BenchError, match="has arm a but not its pair"):
        paired_sample(results[:-1])
    with pytest.raises(BenchError, match="not part of a paired design"):
        paired_sample(play_specs(kuhn_bench(2)))


def test_slice_outcomes_break_down_by_players_objective_and_seat() -> None:
    specs: list[MatchSpec] = []
    for players, objective in ((2, "points"), (3, "go_out")):
        for seed in range(6):
            seats = ["commander"] + ["ensign"] * (players - 1)
            specs.append(
                match_spec(
                    MT,
                    seats[seed % players :] + seats[: seed % players],
                    seed,
                    params={"rounds": 1, "objective": objective},
                    index=len(specs),
                )
            )
    results = play_specs(specs)
    outcomes = slice_outcomes(results, player="commander")
    assert SliceKey(2, "points", -1) in outcomes and SliceKey(3, "go_out", 2) in outcomes
    total = outcomes[SliceKey(3, "go_out", -1)]
    assert total.games == 6 == sum(outcomes[SliceKey(3, "go_out", s)].games for s in range(3))
    shares = [r.record.win_shares[r.spec.seats.index("commander")] for r in results[6:]]
    assert total.wins == pytest.approx(sum(shares))
    assert total.fair_share == pytest.approx(3 * sum(shares) / 6)
    assert total.win_rate_ci.low <= total.win_rate <= total.win_rate_ci.high
    assert "went_out" in total.counts and str(total.key) == "3p · go_out · all seats"
    with pytest.raises(BenchError, match="exactly one of"):
        slice_outcomes(results)
    with pytest.raises(BenchError, match="no games of player 'admiral'"):
        slice_outcomes(results, player="admiral")


def test_mexican_train_counts_agree_with_the_round_results() -> None:
    game = make_game(MT, players=3, rounds=3)
    spec = match_spec(MT, ["ensign", "lieutenant", "commander"], 17, params={"rounds": 3})
    record = play_spec(spec).record
    state = game.new_initial_state(17)
    import random

    from omega_cluster.players.registry import make_player

    players = [make_player(s, game) for s in spec.seats]
    rngs = [random.Random(x) for x in spec.seat_seeds]
    while acting := state.current_players:
        p = acting[0]
        state.apply_action(players[p].act(state, p, rngs[p]))
    counts = mexican_train_counts(state)
    assert counts == record.counts
    results = state.round_results  # type: ignore[attr-defined]
    assert sum(counts["went_out"]) + counts["blocked_rounds"][0] == 3 == len(results)
    assert sum(counts["rounds_won"]) >= 3
    assert counts["pips_left"] == pytest.approx(
        tuple(sum(r.pips[s] for r in results) / 3 for s in range(3))
    )
    passes = state.history.count(game.pass_action)  # type: ignore[attr-defined]
    assert 0 < sum(counts["markers_placed"]) <= passes
    assert counts_hook(game) is mexican_train_counts  # the plugin's report_counts
    assert counts_hook(make_game("kuhn_poker")) is None
