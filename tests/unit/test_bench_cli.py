"""``omega-cluster bench``: run in-process through ``main([...])`` on the first 40 seeds of the
registered 4-player cohort (320 games, < 1 s), and its bad-input errors (exit status 2, one line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.image import imread

from omega_cluster.cli import BENCH_KEYS, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_bench_prints_the_contrast_and_writes_the_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_dir = tmp_path / "bench"
    status, out, err = run(
        capsys,
        "bench",
        "a=commander",
        "b=lieutenant",
        "cohort=mt4p-200",
        f"out={out_dir}",
        "seeds=40",
        "bootstrap=300",
        "quiet=true",
    )
    assert status == 0, err
    for needle in ("commander (A) vs lieutenant (B)", "mt4p-200", "40 seeds", "320 games"):
        assert needle in out
    assert "95% t-interval" in out and "95% bootstrap" in out
    row = next(line for line in out.splitlines() if "win_share" in line)
    assert "+0." in row  # Commander's edge is positive even on 40 seeds (~+0.28 on 200)
    for name in ("report.md", "contrast.png", "slices.png"):
        assert (out_dir / name).is_file() and str(out_dir / name) in out
    assert imread(out_dir / "contrast.png").shape[1] > 300


def test_bench_rotations_level_and_help(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run(
        capsys,
        "bench",
        "a=lieutenant",
        "b=lieutenant",
        "cohort=mt2p-64",
        "seeds=5",
        "rotations=1",
        "level=0.9",
        "bootstrap=0",
        f"out={tmp_path}",
        "progress=false",
    )
    assert status == 0
    assert "90% t-interval" in out and "10 games" in out  # 5 seeds × 1 rotation × 2 arms
    assert "+0.000" in out  # the same deterministic player in both arms: no difference at all
    assert main(["bench", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert all(key in help_text for key in BENCH_KEYS)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["a=admiral", "b=lieutenant", "cohort=mt2p-64"], "unknown player 'admiral'"),
        (["a=commander", "b=lieutenant", "cohort=nope"], "no cohort named 'nope'"),
        (["a=commander", "cohort=mt2p-64"], "bench needs b="),
        (["a=commander", "b=ensign", "cohort=mt2p-64", "games=3"], "unknown key 'games'"),
        (["a=commander", "b=ensign", "cohort=mt2p-64", "seeds=0"], "seeds='0' must be an int"),
        (["a=commander", "b=ensign", "cohort=mt2p-64", "seeds=99"], "seeds=99; allowed 1..64"),
        (["a=commander", "b=ensign", "cohort=mt2p-64", "level=95"], "level='95' must be"),
        (["a=commander", "b=ensign", "cohort=mt2p-64", "rotations=0,5"], "distinct seats"),
    ],
)
def test_bench_bad_input_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, "bench", *argv, "quiet=true")
    assert status == 2 and out == ""
    assert err.startswith("omega-cluster bench: error:") and message in err
    assert err.count("\n") == 1


def test_bench_refuses_a_cohort_file_with_duplicated_seeds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(
        "name: dup\ndescription: d\ncreated: 2025-01-01\ngame: mexican_train\n"
        "params: {players: 2, rounds: 1}\nothers: ensign\nseeds: [1, 2, 2]\n"
    )
    status, _, err = run(capsys, "bench", "a=commander", "b=ensign", f"cohort={path}")
    assert status == 2 and "duplicated seeds [2]" in err
