"""Registered cohorts: the shipped files load and check out, malformed files fail clearly, and a
small cohort runs into paired contrasts and slices."""

from __future__ import annotations

from pathlib import Path

import pytest

from omega_cluster.eval.cohorts import (
    COHORT_DIR_ENV,
    CohortError,
    available_cohorts,
    load_cohort,
    run_cohort,
    seeds_digest,
)
from omega_cluster.eval.matches import SliceKey
from omega_cluster.players.registry import PlayerSpecError

GOOD = """\
name: {name}
description: a test cohort
created: 2025-01-02
game: mexican_train
params: {{players: 3, rounds: 1}}
others: ensign
seeds: [4, 9, 16]
"""


def write(tmp_path: Path, text: str, name: str = "tiny") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def test_the_shipped_cohorts_load_with_distinct_pinned_seeds() -> None:
    assert {"mt4p-200", "mt2p-64"} <= set(available_cohorts())
    big = load_cohort("mt4p-200")
    assert (big.game, big.num_players, len(big.seeds)) == ("mexican_train", 4, 200)
    assert len(set(big.seeds)) == 200
    assert dict(big.params) == {"players": 4, "rounds": 1, "objective": "points"}
    assert big.others == ("lieutenant",) * 3 and big.rotations == (0, 1, 2, 3)
    assert big.created and "Mexican Train" in big.description
    small = load_cohort("mt2p-64")
    assert (small.num_players, len(small.seeds), small.others) == (2, 64, ("lieutenant",))
    assert not set(small.seeds) & set(big.seeds)  # fresh seeds are not reused across cohorts
    assert load_cohort(big.path) == big  # by path as well as by name


def test_a_cohort_file_with_duplicated_seeds_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.format(name="tiny").replace("[4, 9, 16]", "[4, 9, 4, 16, 9]"))
    with pytest.raises(CohortError, match=r"duplicated seeds \[4, 9\]"):
        load_cohort(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("others: ensign\n", ""), r"missing \['others'\]"),
        (("game:", "colour: red\ngame:"), r"unknown keys \['colour'\]"),
        (("[4, 9, 16]", "[4, -1]"), "non-negative ints"),
        (("[4, 9, 16]", "[]"), "non-empty list"),
        (("{players: 3, rounds: 1}", "{players: 3, rounds: 99}"), "rounds=99"),
        (("mexican_train", "tic_tac_toe"), "game 'tic_tac_toe'"),
        (("others: ensign", "others: [ensign]"), "1 others for 3 players"),
        (("seeds:", "rotations: [0, 3]\nseeds:"), "distinct seats in 0..2"),
        (("seeds:", "seeds_sha256: abc\nseeds:"), "do not match seeds_sha256"),
        (("name: tiny", "name: other"), "differs from the file name"),
        (("name: tiny", "name: [tiny"), "not valid YAML"),
    ],
)
def test_malformed_cohort_files_fail_with_the_reason(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    text = GOOD.format(name="tiny")
    assert edit[0] in text
    with pytest.raises(CohortError, match=message):
        load_cohort(write(tmp_path, text.replace(*edit)))


def test_unknown_names_and_non_mappings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CohortError, match="registered cohorts: .*mt4p-200"):
        load_cohort("mt4p-2000")
    with pytest.raises(CohortError, match="expected a mapping"):
        load_cohort(write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(CohortError, match="does not exist"):
        load_cohort(tmp_path / "absent.yaml")
    write(tmp_path, GOOD.format(name="tiny"))
    monkeypatch.setenv(COHORT_DIR_ENV, str(tmp_path))
    assert available_cohorts() == ["tiny"]
    assert load_cohort("tiny").seeds == (4, 9, 16)


def test_digest_pins_the_seeds(tmp_path: Path) -> None:
    digest = seeds_digest([4, 9, 16])
    text = GOOD.format(name="tiny").replace("seeds:", f"seeds_sha256: {digest}\nseeds:")
    assert load_cohort(write(tmp_path, text)).seeds == (4, 9, 16)
    assert seeds_digest([4, 16, 9]) != digest


def test_cohort_specs_and_limits() -> None:
    cohort = load_cohort("mt2p-64")
    specs = cohort.specs("commander", "lieutenant", seeds=10)
    assert len(specs) == 10 * 2 * 2
    assert [s.deal_seed for s in specs[::4]] == list(cohort.seeds[:10])
    assert len(cohort.specs("commander", "lieutenant", seeds=3, rotations=[1])) == 6
    with pytest.raises(CohortError, match=r"seeds=65; allowed 1..64"):
        cohort.specs("commander", "lieutenant", seeds=65)
    with pytest.raises(PlayerSpecError, match="unknown player 'admiral'"):
        cohort.specs("admiral", "lieutenant")


def test_run_cohort_heads_up() -> None:
    """Commander vs Lieutenant heads-up on 32 seeds of the 2p cohort. What it measures: the
    machinery (pairing, contrasts per metric, slices), with the win-share contrast's sign as a
    wide-margin check: on the 4p cohort Commander's edge is ~+0.28 wins per game."""
    result = run_cohort("mt2p-64", "commander", "lieutenant", seeds=32, bootstrap=500)
    assert (result.seeds, result.games) == (32, 32 * 2 * 2)
    assert set(result.contrasts) >= {"win_share", "score", "went_out", "markers_placed"}
    win = result.contrasts["win_share"]
    assert win.n == 32 and win.bootstrap_interval is not None
    assert win.mean == pytest.approx(sum(result.samples["win_share"].differences) / 32, abs=1e-12)
    assert win.mean > 0
    slices = result.slices["a"]
    assert set(slices) == {SliceKey(2, "points", s) for s in (-1, 0, 1)}
    assert slices[SliceKey(2, "points", -1)].games == 64
    again = run_cohort("mt2p-64", "commander", "lieutenant", seeds=32, bootstrap=500)
    assert again.contrasts == result.contrasts  # a cohort re-runs exactly
