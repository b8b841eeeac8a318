"""Slices of the replay window over a mix of tables: balanced sampling and per-slice losses.

Real Arrow shards of synthetic records at several table sizes and both objectives (the slice of
a row comes from its ``num_players`` and ``game_params``, as ``Fleet.key_of`` reads them): with
the mix's weights each slice present gets its weight's share of the samples (renormalised over
the slices in the window), rows within a slice uniformly; without weights, or with one slice in
the window, the batches are exactly those of a window without slicing. The learner reports the
policy and value loss of each slice, the worker puts them in the candidate's metrics, and
KataGo's cap on samples per row still holds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from slice_helpers import MIXED_ROWS, champion, mexican_store, mixed_settings, write_mix

from omega_cluster.data import ReplayWindow, ShardStore, Slicing
from omega_cluster.games.fleet import Fleet, fleet_for
from omega_cluster.wiring import build_encoder, build_fleet, learner_worker, learner_worker_config

FLEET = fleet_for("mexican_train", {"rounds": 1}, {2: 1, 3: 1, 4: 2, 8: 1}, ["points", "go_out"])
# rows written per slice: 2-player rows drown the rest; 3p go_out and 8p are absent
ROWS = {(2, "points"): 900, (2, "go_out"): 600, (3, "points"): 150, (4, "points"): 60,
        (4, "go_out"): 90}  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> ShardStore:
    store = ShardStore(str(tmp_path_factory.mktemp("mix") / "shards"))
    write_mix(store, ROWS)
    return store


def window(store: ShardStore, slicing: Slicing | None, rows: int = 10_000) -> ReplayWindow:
    w = ReplayWindow(store, window_rows=rows, slicing=slicing)
    w.refresh()
    return w


def shares(w: ReplayWindow, indices: np.ndarray) -> dict[str, float]:
    labels = w.slice_labels()
    counts = np.bincount(labels.codes[indices], minlength=len(labels.keys))
    return {k: c / indices.size for k, c in zip(labels.keys, counts, strict=True) if c}


@pytest.mark.parametrize("weighted", [False, True])
def test_balanced_sampling_gives_each_slice_its_weight(store: ShardStore, weighted: bool) -> None:
    """Shares of 30,000 draws are the mix's weights renormalised over the slices present
    (within 0.015: more than six standard deviations), whatever the rows per slice."""
    w = window(store, Slicing(FLEET.key_of, FLEET.weights()))
    assert w.slice_rows() == {f"players={n},objective={o}": c for (n, o), c in ROWS.items()}
    weights = FLEET.weights()
    present = {k: weights[k] for k in w.slice_rows()}
    expected = {k: v / sum(present.values()) for k, v in present.items()}
    assert expected["players=4,objective=points"] == pytest.approx(2 / 7)
    got = shares(w, w.sample_indices(30_000, np.random.default_rng(3), weighted=weighted))
    assert got.keys() == expected.keys()
    for key, share in expected.items():
        assert abs(got[key] - share) < 0.015, (key, got[key], share)
    # without the weights: in proportion to the rows (2-player rows take 83 % of the samples)
    plain = window(store, Slicing(FLEET.key_of))
    got = shares(plain, plain.sample_indices(30_000, np.random.default_rng(3), weighted=weighted))
    assert got["players=2,objective=points"] == pytest.approx(900 / 1800, abs=0.015)


def test_rows_within_a_slice_are_drawn_uniformly(store: ShardStore) -> None:
    """The 60 rows of the 4-player points slice share its 2/7 of the draws evenly."""
    w = window(store, Slicing(FLEET.key_of, FLEET.weights()))
    indices = w.sample_indices(30_000, np.random.default_rng(5))
    labels = w.slice_labels()
    code = labels.keys.index("players=4,objective=points")
    hits = np.bincount(indices[labels.codes[indices] == code], minlength=w.table().num_rows)
    rows = np.flatnonzero(labels.codes == code)
    per_row = hits[rows]
    mean = 30_000 * 2 / 7 / 60  # ~143 draws per row
    assert per_row.min() > 0.6 * mean and per_row.max() < 1.4 * mean
    assert hits.sum() == per_row.sum()  # no draw outside the slice's rows


def test_balanced_draws_stay_in_the_newest_rows(store: ShardStore) -> None:
    """A window smaller than the rows held samples only its newest N rows, balanced over the
    slices those hold."""
    w = window(store, Slicing(FLEET.key_of, FLEET.weights()), rows=900)  # within a shard
    offset = w.table().num_rows - w.rows
    assert offset > 0 and w.rows == 900
    indices = w.sample_indices(20_000, np.random.default_rng(1))
    assert indices.min() >= offset
    in_window = w.slice_rows()
    assert sum(in_window.values()) == 900
    weights = {k: FLEET.weights()[k] for k in in_window}
    got = shares(w, indices)
    for key in in_window:
        assert abs(got[key] - weights[key] / sum(weights.values())) < 0.02


def test_without_weights_or_with_one_slice_sampling_is_unchanged(
    store: ShardStore, tmp_path: Path
) -> None:
    """Same seed, same batches: slicing without weights, and weights over a window of one
    slice, draw exactly what a window without slicing draws."""
    plain, labelled = window(store, None), window(store, Slicing(FLEET.key_of))
    for weighted in (False, True):
        a = plain.sample_indices(512, np.random.default_rng(9), weighted=weighted)
        b = labelled.sample_indices(512, np.random.default_rng(9), weighted=weighted)
        assert np.array_equal(a, b)
    single = ShardStore(str(tmp_path / "single"))
    write_mix(single, {(4, "points"): 200})
    balanced = window(single, Slicing(FLEET.key_of, FLEET.weights()))
    assert np.array_equal(
        window(single, None).sample(64, np.random.default_rng(2)).observations,
        balanced.sample(64, np.random.default_rng(2)).observations,
    )


def test_rows_of_slices_outside_the_mix(store: ShardStore) -> None:
    """Rows of a table the weights do not name are not sampled; a window with none of the
    mix's tables says what it holds."""
    only = {"players=3,objective=points": 1.0, "players=8,objective=points": 1.0}
    w = window(store, Slicing(FLEET.key_of, only))
    got = shares(w, w.sample_indices(2000, np.random.default_rng(0)))
    assert got == {"players=3,objective=points": 1.0}
    none = window(store, Slicing(FLEET.key_of, {"players=8,objective=points": 1.0}))
    with pytest.raises(ValueError, match=r"holds rows of players=2,objective=go_out.*none of"):
        none.sample_indices(4, np.random.default_rng(0))


# -- the learner and its worker --------------------------------------------------------------
@pytest.mark.parametrize("balance", [False, True])
def test_candidate_metrics_carry_each_slices_losses(tmp_path: Path, balance: bool) -> None:
    """Per slice: policy and value loss (finite), rows in the window, share of the samples
    (balanced: a quarter each; else in proportion to the rows)."""
    settings = mixed_settings(balance=balance)
    store = mexican_store(tmp_path / "shards", settings)
    worker = learner_worker(settings, run_dir=tmp_path / "run", store_uri=store.uri)
    report = worker.train_candidate(champion(settings), 1)
    assert report.version == 1
    m = report.metrics
    keys = [f"players={n},objective={o}" for n, o in MIXED_ROWS]
    for (n, o), key in zip(MIXED_ROWS, keys, strict=True):
        assert m[f"slice/{key}/window_rows"] == MIXED_ROWS[n, o]
        assert math.isfinite(m[f"slice/{key}/policy_loss"]) and m[f"slice/{key}/policy_loss"] >= 0
        assert math.isfinite(m[f"slice/{key}/value_loss"]) and m[f"slice/{key}/value_loss"] > 0
        if m[f"slice/{key}/sample_share"] > 0.05:  # a few draws may all be cheap-search rows
            assert m[f"slice/{key}/policy_loss"] > 0  # (policy weight 0)
    share = {key: m[f"slice/{key}/sample_share"] for key in keys}
    assert sum(share.values()) == pytest.approx(1.0)
    small = share["players=3,objective=points"]  # 40 of 600 rows: 7 % unbalanced, 25 % balanced
    assert (0.14 < small < 0.4) if balance else (small < 0.14)
    assert not [k for k in m if k.startswith("slice/") and k.split("/")[1] not in keys]


def test_a_slices_loss_is_the_loss_of_its_rows(tmp_path: Path) -> None:
    """With all the weight on one slice every sample is of it: its losses are the step's."""
    settings = mixed_settings(balance=False)
    store = mexican_store(tmp_path / "shards", settings)
    worker = learner_worker(settings, run_dir=tmp_path / "run", store_uri=store.uri)
    fleet = build_fleet(settings)
    only = {k: float(k == "players=3,objective=go_out") for k in fleet.keys}
    w = worker.learner.window(store, window_rows=5000, slicing=Slicing(fleet.key_of, only))
    stats = worker.learner.train_steps(w, 1)
    figures = stats.slices["players=3,objective=go_out"]
    assert figures["samples"] == stats.samples == 32
    assert figures["policy_loss"] == pytest.approx(stats.policy_loss, rel=1e-5)
    assert figures["value_loss"] == pytest.approx(stats.value_loss, rel=1e-5)
    other = stats.slices["players=2,objective=points"]  # in the window, never sampled
    assert other == {"samples": 0.0, "window_rows": 300.0}


def test_the_samples_per_row_cap_holds_with_balancing(tmp_path: Path) -> None:
    """KataGo's cap counts every sample, whichever slice it came from."""
    settings = mixed_settings(balance=True, cap=0.25)
    store = mexican_store(tmp_path / "shards", settings)
    worker = learner_worker(settings, run_dir=tmp_path / "run", store_uri=store.uri)
    report = worker.train_candidate(champion(settings), 1)
    assert report.steps == math.floor(0.25 * 600 / 32) == 4
    assert worker.allowed_steps() == 0


def test_a_run_of_one_table_has_no_slices(tmp_path: Path) -> None:
    """Without a fleet the learner samples and reports as before: no slice metrics, the
    window without slicing (balance_slices on or off)."""
    settings = mixed_settings(balance=True, fleet=False)
    config = learner_worker_config(settings)
    assert isinstance(config.fleet, Fleet) and not config.fleet.mixed
    assert config.slicing() is None
    store = ShardStore(str(tmp_path / "shards"))
    encoder = build_encoder(settings)
    write_mix(store, {(2, "points"): 100}, observation_size=encoder.observation_size,
              feature_size=encoder.action_feature_size, game="mexican_train",
              encoder_version=encoder.version)  # fmt: skip
    worker = learner_worker(settings, run_dir=tmp_path / "run", store_uri=store.uri)
    assert worker.window.slicing is None
    report = worker.train_candidate(champion(settings), 1)
    assert report.version == 1 and not [k for k in report.metrics if k.startswith("slice/")]
