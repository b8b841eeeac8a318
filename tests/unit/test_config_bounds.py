"""Budgets bounded by the memory this process may use (omega_cluster/fields.py, search/_layout.py):
an absurd budget is refused where its config is checked, in one line naming the key and the
largest value that fits, by the settings, a player spec and a direct config alike; the compiled
drivers refuse an allocation that would not fit, before trying it. No test allocates much: the
refusals come before any array is made."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from omega_cluster import fields
from omega_cluster.config import ConfigError, load_settings
from omega_cluster.fields import (
    FieldError,
    MemoryAllowance,
    MemoryBoundError,
    budget_problem,
    format_bytes,
    memory_allowance,
)
from omega_cluster.games import make_game
from omega_cluster.players.registry import PlayerSpecError, make_player
from omega_cluster.search import _layout
from omega_cluster.search.ismcts import ISMCTSConfig, simulation_bytes
from omega_cluster.search.smmcts import SMMCTSConfig
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig

ABSURD = 10**12
ONE_LINE = r"={value} needs ~[\d.]+ [KMGTPE]iB for {what}; this machine allows at most \d+ \(.+\)$"


def _refused(key: str, what: str, value: int = ABSURD) -> str:
    return "^" + re.escape(key) + ONE_LINE.format(value=value, what=re.escape(what))


@pytest.fixture
def allowance(monkeypatch: pytest.MonkeyPatch) -> MemoryAllowance:
    """A machine that may allocate 1 GiB (the bounds then read the same on any machine)."""
    bound = MemoryAllowance(1 << 30, "MemAvailable 1 GiB")
    monkeypatch.setattr(fields, "memory_allowance", lambda: bound)
    return bound


@pytest.mark.parametrize(
    ("overrides", "key", "what"),
    [
        (["search.simulations=1000000000000"], "search.simulations", "the search tree"),
        (["search.fast_simulations=1000000000000"], "search.fast_simulations", "the search tree"),
        (["gate.bench_simulations=1000000000000"], "gate.bench_simulations", "the search tree"),
        (["learner.batch_size=1000000000000"], "learner.batch_size", "its rows (>= 104 B each)"),
        (
            ["learner.window_rows=1000000000000"],
            "learner.window_rows",
            "the replay window's rows (>= 104 B each)",
        ),
        (
            ["cluster.concurrent_games=1000000000000"],
            "cluster.concurrent_games",
            "its search trees of 800 simulations",
        ),
    ],
)
def test_an_absurd_budget_is_refused_in_one_line_naming_its_key(
    overrides: list[str], key: str, what: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(overrides)
    lines = [line for line in str(info.value).splitlines() if line.lstrip("- ").startswith(key)]
    assert len(lines) == 1, str(info.value)
    assert re.search(_refused(key, what), lines[0].lstrip("- ")), lines[0]


def test_concurrent_games_are_bounded_with_the_runs_own_budget() -> None:
    with pytest.raises(ConfigError, match="cluster.concurrent_games=100000 needs .* for its "
                       "search trees of 100000 simulations"):  # fmt: skip
        load_settings(["cluster.concurrent_games=100000", "search.simulations=100000"])


def test_a_large_but_sane_budget_is_accepted() -> None:
    s = load_settings(["search.simulations=100000", "gate.bench_simulations=100000"])
    assert s.search.simulations == 100_000
    assert ISMCTSConfig(simulations=100_000).simulations == 100_000
    assert SMMCTSConfig(simulations=100_000).simulations == 100_000
    assert LearnerConfig(batch_size=65_536).batch_size == 65_536
    # a time limit stops SM-MCTS first (its Python tree grows as it runs; none is compiled)
    assert SMMCTSConfig(simulations=ABSURD, time_limit_s=0.05).simulations == ABSURD


def test_direct_configs_and_player_specs_are_refused_alike() -> None:
    for config in (ISMCTSConfig, SMMCTSConfig):
        with pytest.raises(FieldError, match=_refused(f"{config.__name__}.simulations",
                                                      "the search tree")):  # fmt: skip
            config(simulations=ABSURD)
    with pytest.raises(FieldError, match=_refused("SelfPlayConfig.fast_simulations",
                                                  "the search tree")):  # fmt: skip
        SelfPlayConfig(fast_simulations=ABSURD)
    with pytest.raises(FieldError, match=r"SelfPlayConfig.concurrent_games=1000000 needs .* "
                       r"search trees of 50000 simulations"):  # fmt: skip
        SelfPlayConfig(concurrent_games=10**6, search=ISMCTSConfig(simulations=50_000))
    with pytest.raises(FieldError, match=_refused("LearnerConfig.batch_size",
                                                  "its rows (>= 104 B each)")):  # fmt: skip
        LearnerConfig(batch_size=ABSURD)
    kuhn = make_game("kuhn_poker")
    with pytest.raises(PlayerSpecError, match=r"ismcts: ISMCTSConfig.simulations=1000000000000 "
                       r"needs ~\d+ TiB for the search tree; this machine allows at most"):  # fmt: skip
        make_player("ismcts:random:1000000000000", kuhn)
    assert make_player("ismcts:random:100000", kuhn).name == "ismcts:random:100000"


def test_the_bound_is_the_largest_value_that_fits(allowance: MemoryAllowance) -> None:
    problem = budget_problem(ABSURD, simulation_bytes, "the search tree")
    assert problem is not None and problem.endswith("(MemAvailable 1 GiB)")
    most = int(problem.split("at most ")[1].split()[0])
    assert simulation_bytes(most) <= allowance.bytes < simulation_bytes(most + 1)
    assert budget_problem(most, simulation_bytes, "the search tree") is None
    with pytest.raises(FieldError, match=f"allows at most {most} "):
        ISMCTSConfig(simulations=most + 1)
    # a value below the floor never reads the memory; a bad type is the int check's to report
    assert budget_problem(1000, simulation_bytes, "x") is None
    assert budget_problem("many", simulation_bytes, "x") is None


def test_the_per_simulation_cost_is_the_compiled_trees_own_arrays() -> None:
    """The shapes the configs price are those the drivers allocate (a small budget, measured)."""
    from omega_cluster.games.goofspiel import GoofspielGame
    from omega_cluster.games.goofspiel.fast import fast_smm_search
    from omega_cluster.search.fast import driver, fast_game, smm_driver

    kuhn = make_game("kuhn_poker")
    fast, _ = fast_game(kuhn)
    assert fast is not None
    roots = np.zeros((3, fast.state_size), np.int64)  # the shapes do not read the roots
    pool, bufs = driver._allocate(fast, roots, np.array([5, 9, 7]))
    game = {"num_players": fast.num_players, "max_legal": fast.max_legal,
            "state_size": fast.state_size}  # fmt: skip
    tables = driver._tables(ISMCTSConfig(), 9 + 3)  # as run_batched asks for them
    measured = sum(a.nbytes for a in (*pool, *bufs, *tables))
    assert measured == _layout.ismcts_bytes(3, 9, **game)
    assert simulation_bytes(9) == _layout.ismcts_bytes(1, 9)

    goof = GoofspielGame(num_cards=4)
    sm, _ = fast_smm_search(goof)
    assert sm is not None
    S = sm.pack(goof.new_initial_state())
    trees = smm_driver._trees(sm, S[None], np.array([0]), np.array([6]), np.array([1]),
                              SMMCTSConfig())  # fmt: skip
    shapes = _layout.smm_arrays(1, 6, num_players=sm.num_players, max_legal=sm.num_actions,
                                state_size=sm.state_size, max_depth=sm.max_depth,
                                hidden=bool(sm.hidden))  # fmt: skip
    assert [a.shape for a in trees] == [shape for shape, _ in shapes]
    assert sum(a.nbytes for a in trees) == _layout.nbytes(shapes)


def test_the_drivers_refuse_an_allocation_that_would_not_fit(allowance: MemoryAllowance) -> None:
    from omega_cluster.games.goofspiel import GoofspielGame
    from omega_cluster.games.goofspiel.fast import fast_smm_search
    from omega_cluster.search.fast import driver, fast_game, smm_driver

    fast, _ = fast_game(make_game("kuhn_poker"))
    assert fast is not None
    roots = np.zeros((64, fast.state_size), np.int64)
    with pytest.raises(MemoryBoundError) as info:  # K searches × the budget: 64 × 10**7
        driver._allocate(fast, roots, np.full(64, 10**7))
    text = str(info.value)
    assert "\n" not in text and isinstance(info.value, MemoryError)
    assert re.fullmatch(r"compiled ISMCTS: 64 search tree\(s\) of 10000000 simulations "
                        r"\(kuhn_poker\) needs ~[\d.]+ GiB; this machine allows at most 1 GiB "
                        r"\(MemAvailable 1 GiB\)", text)  # fmt: skip
    sm, _ = fast_smm_search(GoofspielGame(num_cards=4))
    assert sm is not None
    with pytest.raises(MemoryBoundError, match=r"^compiled SM-MCTS: 1 search tree\(s\) of "):
        smm_driver._trees(sm, np.zeros((1, sm.state_size), np.int64), np.array([0]),
                          np.array([ABSURD]), np.array([1]), SMMCTSConfig())  # fmt: skip


def test_memory_allowance_reads_meminfo_and_the_cgroup_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 67108864 kB\nMemAvailable: 20971520 kB\n")
    cgroup = tmp_path / "cgroup"
    cgroup.mkdir()
    monkeypatch.setattr(fields, "_MEMINFO", meminfo)
    monkeypatch.setattr(fields, "_CGROUP_V2", cgroup)
    monkeypatch.setattr(fields, "_CGROUP_V1", tmp_path / "none")
    assert memory_allowance() == MemoryAllowance(20 << 30, "MemAvailable 20 GiB")
    (cgroup / "memory.max").write_text("max\n")  # no limit
    assert memory_allowance() == MemoryAllowance(20 << 30, "MemAvailable 20 GiB")
    (cgroup / "memory.max").write_text(f"{8 << 30}\n")
    (cgroup / "memory.current").write_text(f"{2 << 30}\n")
    assert memory_allowance() == MemoryAllowance(6 << 30, "cgroup memory.max 8 GiB, 6 GiB free")
    meminfo.unlink()  # no /proc: the physical memory, still under the cgroup's room
    assert memory_allowance() == MemoryAllowance(6 << 30, "cgroup memory.max 8 GiB, 6 GiB free")


def test_format_bytes() -> None:
    assert [format_bytes(n) for n in (512, 1536, 20 << 30, 37 * 2**40, 1500 * 2**30)] == [
        "512 B", "1.5 KiB", "20 GiB", "37 TiB", "1.46 TiB",
    ]  # fmt: skip
