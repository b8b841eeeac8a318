"""Torch's intra-op threads: :func:`pin_threads`, the evaluator's ``threads`` and the arena's
``threads=`` (in a subprocess started with another count). Bad counts on the command line are in
``test_cli_errors.py``'s table."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from omega_cluster.games.registry import make_game
from omega_cluster.model import NetworkEvaluator, encoder_for, pin_threads, save_checkpoint

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(autouse=True)
def _keep_threads() -> Iterator[None]:
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def test_pin_threads_sets_and_reports_the_count() -> None:
    assert pin_threads(2) == 2 == torch.get_num_threads()
    assert pin_threads(1) == 1 == torch.get_num_threads()
    assert pin_threads(1) == 1  # again: no error


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_pin_threads_refuses_a_count_that_is_not_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match=r"torch threads must be an int >= 1, got "):
        pin_threads(bad)  # type: ignore[arg-type]


def test_the_evaluators_threads_pin_the_process() -> None:
    from model_helpers import small_net

    game = make_game("kuhn_poker")
    encoder = encoder_for(game)
    NetworkEvaluator(small_net(game, encoder), encoder, threads=2)
    assert torch.get_num_threads() == 2
    with pytest.raises(ValueError, match="torch threads must be an int >= 1, got 0"):
        NetworkEvaluator(small_net(game, encoder), encoder, threads=0)


@pytest.fixture(scope="module")
def kuhn_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from model_helpers import small_net

    game = make_game("kuhn_poker")
    encoder = encoder_for(game)
    directory = tmp_path_factory.mktemp("ckpt") / "net"
    save_checkpoint(directory, small_net(game, encoder), game=game, encoder=encoder)
    return directory


@pytest.mark.parametrize(("given", "env"), [("threads=1", "2"), ("threads=2", "1"), ("", "2")])
def test_the_arena_plays_with_the_threads_it_was_given(
    kuhn_checkpoint: Path, given: str, env: str
) -> None:
    """The subprocess starts with ``OMP_NUM_THREADS`` at another count: only the pin (1 when
    ``threads=`` is not given) makes the reported count match."""
    wanted = given.partition("=")[2] or "1"
    seats = f"seats=network:{kuhn_checkpoint},random"
    argv = ["arena", "game=kuhn_poker", seats, "games=4", "quiet=true", *([given] if given else [])]
    done = subprocess.run(
        [sys.executable, "-m", "omega_cluster", *argv],
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": env},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "network" in done.stdout and "4 games" in done.stdout
    assert done.stdout.rstrip().endswith(f"torch threads: {wanted}"), done.stdout
