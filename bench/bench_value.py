"""Does the value generalise? Held-out explained variance and calibration of the value head by
phase of the round, against a gradient-boosted model on plain counts.

``python -m bench.bench_value [--players 2,4] [--games 1500] [--heldout 300] [--steps 1500]
[--thin-games 6000] [--rows-per-game 8] [--every 50]``: for each table size, Commander-vs-Commander
one-round Mexican Train games (the teacher games of the warm start: ``train.warm_start``'s
self-play mode, records with the hidden state) are played on seed ``--seed`` for
training (``--thin-games`` of them; the first ``--games`` to finish are the default training
set), on ``--seed + 2`` for validation and on ``--seed + 1`` for the held-out report
(``--heldout`` games each). Every decision of a game shares the game's outcome, so a network
can memorise the deals; one network of the default model (``--nets`` of them, from other seeds)
is trained per lever (:data:`LEVERS`) as a run's learner trains (the project's
:class:`~omega_cluster.train.learner.Learner` on a replay window over real shards), up to
``--steps`` steps. Every ``--every`` steps its held-out value loss is measured on the validation
games — the mean squared error of every seat's value against that seat's round outcome — and the
network is kept at its best step (early stopping and selection on the held-out loss); the report
is on the held-out games, which chose nothing.

The reference is :func:`~omega_cluster.games.mexican_train.position_counts.position_counts` (hand
sizes, own pips, boneyard, move number, markers, ...) fed to scikit-learn's
``HistGradientBoostingRegressor``, trained on every row of all ``--thin-games`` training games: it
cannot memorise a deal. For the acting player's own round outcome (its win share), by phase —
quarters of the round (decision index over the game's decisions) and bins of the boneyard left
(nothing drawn yet, more than half of the deal's left, some, none) — the report gives:

* the explained variance ``1 - Σ(y - v)² / Σ(y - ȳ)²`` within the phase (0: the phase's mean);
* the calibration error: the expected calibration error over 10 equal-count bins of the
  prediction, ``Σ_b n_b |mean v_b - mean y_b| / n`` (0: calibrated);
* for each network, its explained variance minus the counts model's with a 95% interval, the
  held-out games resampled with replacement (:func:`ev_gaps`): a gap inside the noise is told
  from one outside it.

The bar: at every phase the network's held-out explained variance is at least the counts
model's. ``--save`` records one figure per table size and row in ``docs/results/bench_value.json``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from bench.results import Figure, record
from omega_cluster.config import load_settings
from omega_cluster.data import ReplayWindow, ShardStore, ShardWriter
from omega_cluster.data.batch import TrainingBatch, table_to_batch
from omega_cluster.data.schema import Record
from omega_cluster.games.mexican_train import MexicanTrainGame
from omega_cluster.games.mexican_train.position_counts import position_count_names, position_counts
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.registry import make_player
from omega_cluster.train.config import SelfPlayConfig
from omega_cluster.train.learner import Learner
from omega_cluster.train.losses import explained_variance as explained_variance_of
from omega_cluster.train.losses import relative_seats
from omega_cluster.train.selfplay import SelfPlay, TeacherEvaluator
from omega_cluster.wiring import build_encoder, build_game, build_model, learner_config

QUARTERS = ("q1", "q2", "q3", "q4")  # quarters of the round: decision index / the game's decisions
BONEYARD = ("yard=deal", "yard>1/2", "yard>0", "yard=0")  # boneyard left vs the deal's
PHASES = ("all", *QUARTERS, *BONEYARD)
COUNTS_MODEL = "counts model (GBM)"


@dataclass(frozen=True)
class Lever:
    """One row of the report: a network trained on one training set with one setting changed."""

    key: str  # its name on the command line (``--levers``)
    name: str
    rows: str  # the training set: "games" (all rows of --games games), "thin" (--rows-per-game
    # random rows of each of --thin-games games), "all" (all rows of --thin-games games),
    # "thin-search" (the "thin" rows, each with the root value of ROOT_SEARCH at its position) or
    # "all-search" (the "all" rows, each with its root value)
    overrides: tuple[str, ...] = ()  # settings on top of the bench's base


LEVERS = (
    Lever("default", "default", "games"),
    Lever("decay", "weight decay 1e-1", "games", ("learner.weight_decay=0.1",)),
    Lever(
        "critic", "critic targets", "games", ("model.critic=true", "learner.value_target=critic")
    ),
    Lever("thin", "k rows per game, more games", "thin"),
    Lever("all", "all rows, more games", "all"),
    Lever(
        "search",
        "search root values, k rows per game",
        "thin-search",
        ("learner.value_target=search",),
    ),
    Lever(
        "search-all", "search root values, all rows", "all-search", ("learner.value_target=search",)
    ),
)
ROOT_SEARCH = "ismcts:commander_rollout:64:c_uct=0.7"
"""The search whose root value is the "search root values" lever's target: the mean outcome of
its Commander playouts over worlds its player cannot tell apart — the value of the information
set (under Commander's play), not of the one deal that was dealt."""


@dataclass(frozen=True)
class Positions:
    """Every row of one store with what the report and the counts model need of each."""

    batch: TrainingBatch
    counts: np.ndarray  # float32[B, C]: position_counts of the acting seat
    outcome: np.ndarray  # float32[B, Nmax]: seat-relative round outcome (seat 0: the actor)
    seats: np.ndarray  # bool[B, Nmax]: real seats
    phase: dict[str, np.ndarray]  # PHASES name -> bool[B]
    games: np.ndarray  # int[B]: the row's game (0..G-1), the unit the gaps are resampled by


def teacher_games(settings: object, games: int, seed: int) -> Iterator[list[Record]]:
    """``games`` Commander-vs-Commander games, each as its records (with the hidden state)."""
    game, encoder = build_game(settings), build_encoder(settings)  # type: ignore[arg-type]
    config = SelfPlayConfig(games=games, concurrent_games=min(32, games), mode="network",
                            record_prior=True, temperature=0.0, final_temperature=0.0,
                            seed=seed, actor="bench_value")  # fmt: skip
    evaluator = TeacherEvaluator(make_player("heuristic", game), game.num_players)
    records = SelfPlay(game, encoder, config, evaluator=evaluator).play()
    for _, rows in itertools.groupby(records, key=lambda r: r.game_id):  # game by game
        yield list(rows)


def write_store(games: Iterable[list[Record]], directory: Path) -> ShardStore:
    """Every record of ``games`` in a new store, in shards of about 8,000 rows."""
    store = ShardStore(str(directory))
    writer, pending = ShardWriter(store, writer_id="bench_value"), []
    for rows in games:
        pending += rows
        if len(pending) >= 8000:
            writer.write(pending)
            pending = []
    if pending:
        writer.write(pending)
    return store


def teacher_store(settings: object, games: int, seed: int, directory: Path) -> ShardStore:
    """``games`` Commander-vs-Commander games as records (with their hidden state) in a store."""
    return write_store(teacher_games(settings, games, seed), directory)


def with_root_values(settings: object, games: list[list[Record]], seed: int) -> list[list[Record]]:
    """``games`` with every record's ``root_value`` the :data:`ROOT_SEARCH`'s at its position
    (rebuilt from the record's seed and history; a fresh tree each)."""
    game = build_game(settings)  # type: ignore[arg-type]
    searcher = make_player(ROOT_SEARCH, game)
    rng, out = random.Random(seed), []
    for rows in games:
        out.append([])
        for r in rows:
            state = game.replay(r.game_seed, r.history)
            searcher.reset()
            result = searcher.search.search(state, r.player, rng)  # type: ignore[attr-defined]
            out[-1].append(replace(r, root_value=np.asarray(result.root_value, np.float32)))
    return out


def training_stores(
    settings: object, games: int, thin_games: int, k: int, seed: int, work: Path,
    wanted: set[str],
) -> dict[str, ShardStore]:  # fmt: skip
    """The training sets ``wanted`` of :class:`Lever` from one pass of ``thin_games`` games."""
    rng = np.random.default_rng(seed)
    pool = list(teacher_games(settings, thin_games, seed))
    thin = [[rows[j] for j in sorted(rng.choice(len(rows), min(k, len(rows)), replace=False))]
            for rows in pool]  # fmt: skip
    sets = {"games": lambda: pool[:games], "thin": lambda: thin, "all": lambda: pool,
            "thin-search": lambda: with_root_values(settings, thin, seed + 3),
            "all-search": lambda: with_root_values(settings, pool, seed + 3)}  # fmt: skip
    return {name: write_store(sets[name](), work / name) for name in sorted(wanted)}


def store_table(store: ShardStore) -> pa.Table:
    window = ReplayWindow(store, window_rows=10**8)
    window.refresh()
    return window.table()


# -- phases and the counts ------------------------------------------------------------------
def round_quarter(decision_index: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    """int[B]: the quarter (0..3) of the round each decision falls in, ``decisions`` being the
    number of decisions of its game (a one-round game: the round's)."""
    index, total = np.asarray(decision_index), np.maximum(np.asarray(decisions), 1)
    return np.minimum(4 * index // total, 3).astype(np.int64)


def boneyard_bin(boneyard: np.ndarray, dealt: np.ndarray) -> np.ndarray:
    """int[B]: 0 nothing drawn yet, 1 more than half of the deal's boneyard left, 2 some, 3 none."""
    left, dealt = np.asarray(boneyard), np.asarray(dealt)
    return np.select([left >= dealt, 2 * left > dealt, left > 0], [0, 1, 2], 3).astype(np.int64)


def counts_table(game: MexicanTrainGame, table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """(float32[B, C] position counts of each row's acting seat, int[B] boneyard of its deal):
    each game replayed once from its seed, along its longest recorded history."""
    ids = np.asarray(table.column("game_id").to_pylist())
    order = np.lexsort((table.column("decision_index").to_numpy(), ids))
    lengths = pc.list_value_length(table.column("history")).to_numpy()
    seeds = table.column("game_seed").to_numpy()
    players = table.column("player").to_numpy()
    counts = np.zeros((table.num_rows, len(position_count_names(game.num_players))), np.float32)
    dealt = np.zeros(table.num_rows, np.int64)
    for _, group in itertools.groupby(order, key=lambda i: ids[i]):
        rows = list(group)
        history = table.column("history")[int(rows[-1])].as_py()
        state = game.new_initial_state(int(seeds[rows[0]]))
        dealt[rows] = state.boneyard_size
        done = 0
        for row in rows:
            for entry in history[done : lengths[row]]:
                state.apply_action(entry[0])  # one seat moves at a time: each entry is [action]
            done = int(lengths[row])
            counts[row] = position_counts(state, int(players[row]))
    return counts, dealt


def positions(game: MexicanTrainGame, store: ShardStore) -> Positions:
    """Every row of ``store`` with its counts, seat-relative outcome and phases."""
    table = store_table(store)
    batch = table_to_batch(table)
    counts, dealt = counts_table(game, table)
    _, game_of = np.unique(np.asarray(table.column("game_id").to_pylist()), return_inverse=True)
    index = table.column("decision_index").to_numpy().astype(np.int64)
    last = np.zeros(game_of.max(initial=0) + 1, np.int64)
    np.maximum.at(last, game_of, index)
    quarter = round_quarter(index, last[game_of] + 1)
    boneyard = counts[:, position_count_names(game.num_players).index("boneyard")]
    yard = boneyard_bin(boneyard, dealt)
    phase = {"all": np.ones(batch.size, bool)}
    phase |= {q: quarter == i for i, q in enumerate(QUARTERS)}
    phase |= {b: yard == i for i, b in enumerate(BONEYARD)}
    outcome, seats = relative_seats(batch.value_targets(per_round=True), batch.players,
                                    batch.num_players, game.num_players)  # fmt: skip
    return Positions(batch, counts, outcome, seats, phase, game_of.astype(np.int64))


# -- figures ---------------------------------------------------------------------------------
def explained_variance(y: np.ndarray, v: np.ndarray) -> float:
    """The learner's explained variance (:func:`omega_cluster.train.losses.explained_variance`)
    of the prediction ``v`` of ``y``, a bias counted as unexplained (``bias=True``)."""
    y64, v64 = (
        torch.from_numpy(np.asarray(y, np.float64)),
        torch.from_numpy(np.asarray(v, np.float64)),
    )
    return float(explained_variance_of(v64, y64, torch.ones_like(y64, dtype=torch.bool), bias=True))


GAP_RESAMPLES = 1000  # bootstrap resamples of the held-out games for a gap's interval
GAP_DEGENERATE = 0.01  # the share of resamples without outcome spread a gap's interval allows


def ev_gaps(
    pos: Positions, own: np.ndarray, ref: np.ndarray, seed: int
) -> dict[str, tuple[float, float, float]]:
    """Phase -> (EV of ``own`` minus EV of ``ref``, its 95% interval): the held-out games
    resampled with replacement (:data:`GAP_RESAMPLES` times; the positions of a game move
    together, as they share its outcome), both EVs on the same resample. A resample whose
    outcomes at a phase do not vary has no EV there; when more than :data:`GAP_DEGENERATE` of
    them are such (a phase a few games reach), the interval is NaN rather than a figure of
    nothing."""
    y = pos.outcome[:, 0].astype(np.float64)
    g = int(pos.games.max(initial=0)) + 1
    draws = np.random.default_rng(seed).multinomial(g, np.full(g, 1 / g), size=GAP_RESAMPLES)
    out = {}
    for name, m in pos.phase.items():
        if not m.any():
            continue
        w = draws[:, pos.games[m]].astype(np.float64)  # [R, rows]: each row's weight
        ym = y[m]
        mean = (w * ym).sum(axis=1, keepdims=True) / np.maximum(w.sum(axis=1, keepdims=True), 1)
        spread = (w * (ym - mean) ** 2).sum(axis=1)
        # the two EVs on each resample share its spread, so their difference is the gap in
        # weighted squared error over it
        errors = [(w * (ym - v[m].astype(np.float64)) ** 2).sum(axis=1) for v in (own, ref)]
        varies = spread > 1e-9 * np.maximum(w.sum(axis=1), 1)
        diff = (errors[1] - errors[0])[varies] / spread[varies]
        point = explained_variance(ym, own[m]) - explained_variance(ym, ref[m])
        lo, hi = (np.percentile(diff, [2.5, 97.5]) if varies.mean() >= 1 - GAP_DEGENERATE
                  else (math.nan, math.nan))  # fmt: skip
        out[name] = (point, float(lo), float(hi))
    return out


def calibration_error(y: np.ndarray, v: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error over ``bins`` equal-count bins of the prediction ``v``."""
    chunks = [c for c in np.array_split(np.argsort(v, kind="stable"), bins) if c.size]
    return float(sum(c.size * abs(v[c].mean() - y[c].mean()) for c in chunks) / max(v.size, 1))


def by_phase(pos: Positions, own: np.ndarray) -> dict[str, tuple[float, float, int]]:
    """Phase -> (explained variance, calibration error, positions) of the acting seat's value."""
    y = pos.outcome[:, 0]
    return {
        name: (explained_variance(y[m], own[m]), calibration_error(y[m], own[m]), int(m.sum()))
        for name, m in pos.phase.items()
        if m.any()
    }


# -- the network and the counts model ----------------------------------------------------------
def predict(model: torch.nn.Module, batch: TrainingBatch, seats: int) -> np.ndarray:
    """float32[B, seats]: the value head's seat-relative values (eval mode, chunks of 4096)."""
    model.eval()
    out = []
    with torch.no_grad():
        for lo in range(0, batch.size, 4096):
            part = slice(lo, lo + 4096)
            feats = None if batch.action_features is None else batch.action_features[part]
            values = model(
                torch.as_tensor(batch.observations[part]),
                None if feats is None else torch.as_tensor(feats),
                torch.as_tensor(batch.legal_mask[part]),
            ).values
            out.append(values[:, :seats].float().numpy())
    model.train()
    return np.concatenate(out)


def value_loss(values: np.ndarray, pos: Positions) -> float:
    """The held-out value loss: mean squared error of every seat's value against its outcome."""
    return float(np.sum((values - pos.outcome) ** 2 * pos.seats) / pos.seats.sum())


def train_network(
    lever: Lever, base: list[str], store: ShardStore, valid: Positions, args: argparse.Namespace,
    net: int = 0,
) -> tuple[torch.nn.Module, int, list[float]]:  # fmt: skip
    """The lever's network at its best held-out value-loss step (checked every ``args.every``),
    that step and the loss curve. Network ``net`` > 0 starts from other weights and draws other
    batches (``model.init_seed`` and the learner's seed offset by ``net``); 0 is the default's."""
    seeds = [f"model.init_seed={net}"] if net else []
    settings = load_settings([*base, *lever.overrides, *seeds])
    game, encoder = build_game(settings), build_encoder(settings)
    model = build_model(settings, game, encoder)
    learner = Learner(model, learner_config(settings, seed=args.seed + 1000 * net), game=game,
                      encoder=encoder)  # fmt: skip
    window = learner.window(store, window_rows=10**8)
    seats = game.num_players
    best, best_at, state, curve = np.inf, 0, None, []
    for block in range(max(args.steps // args.every, 1)):
        learner.train_steps(window, args.every)
        loss = value_loss(predict(learner.model, valid.batch, seats), valid)
        curve.append(loss)
        if loss < best:
            best, best_at = loss, args.every * (block + 1)
            state = {k: v.clone() for k, v in learner.model.state_dict().items()}
    assert state is not None
    learner.model.load_state_dict(state)
    return learner.model, best_at, curve


def counts_model(train: Positions, valid: Positions, seed: int) -> object:
    """The reference: gradient-boosted trees on the counts, fitted to the actor's outcome and
    stopped early on the validation games (a split of the training rows would share deals)."""
    from sklearn.ensemble import HistGradientBoostingRegressor  # a dev dependency: bench only

    gbm = HistGradientBoostingRegressor(learning_rate=0.05, max_iter=500, min_samples_leaf=200,
                                        early_stopping=True, n_iter_no_change=20,
                                        random_state=seed)  # fmt: skip
    return gbm.fit(train.counts, train.outcome[:, 0], X_val=valid.counts,
                   y_val=valid.outcome[:, 0])  # fmt: skip


# -- the run ---------------------------------------------------------------------------------
def run(players: int, args: argparse.Namespace, work: Path) -> list[dict]:
    """The report's rows at one table size: the counts model, then one network per lever."""
    base = [f"game.params.players={players}", "game.params.rounds=1", "learner.value_target=round"]
    plain = load_settings(base)
    game = build_game(plain)
    assert isinstance(game, MexicanTrainGame)
    t0 = time.perf_counter()
    thin = args.thin_games
    t1 = time.perf_counter()
    stores = training_stores(plain, args.games, thin, args.rows_per_game, args.seed,
                             work / f"{players}p", {lever.rows for lever in args.levers} | {"all"})  # fmt: skip
    print(f"{players}p: training sets {sorted(stores)} in {time.perf_counter() - t1:.0f} s")
    valid = positions(
        game, teacher_store(plain, args.heldout, args.seed + 2, work / f"valid{players}")
    )
    test = positions(
        game, teacher_store(plain, args.heldout, args.seed + 1, work / f"test{players}")
    )
    print(f"{players}p: {thin} training + 2 x {args.heldout} held-out teacher games "
          f"in {time.perf_counter() - t0:.0f} s")  # fmt: skip
    t0 = time.perf_counter()
    gbm = counts_model(positions(game, stores["all"]), valid, args.seed)
    ref = np.asarray(gbm.predict(test.counts), np.float32)  # type: ignore[attr-defined]
    rows = [{"players": players, "row": COUNTS_MODEL, "step": 0, "phases": by_phase(test, ref)}]
    trees = getattr(gbm, "n_iter_", 0)
    print(f"  {COUNTS_MODEL}: {trees} trees, fitted in {time.perf_counter() - t0:.0f} s")
    for lever, net in itertools.product(args.levers, range(args.nets)):
        t0 = time.perf_counter()
        model, step, curve = train_network(lever, base, stores[lever.rows], valid, args, net)
        own = predict(model, test.batch, players)[:, 0]
        gaps = ev_gaps(test, own, ref, args.seed + 4)
        name = lever.name if args.nets == 1 else f"{lever.name} #{net + 1}"
        rows.append({"players": players, "row": name, "step": step,
                     "phases": by_phase(test, own), "gaps": gaps})  # fmt: skip
        seconds = time.perf_counter() - t0
        print(f"  {name}: best held-out value loss {min(curve):.4f} at step {step} "
              f"(first {curve[0]:.4f}, last {curve[-1]:.4f}; {seconds:.0f} s)")  # fmt: skip
    print_table(rows)
    for r in rows[1:]:
        print(f"  {r['row']}: EV minus the counts model's, 95% by held-out game: {gap_text(r)}")
    for i, lever in enumerate(args.levers if args.nets > 1 else ()):
        nets = rows[1 + i * args.nets : 1 + (i + 1) * args.nets]
        print(f"  {lever.name}, {args.nets} networks: {spread_text(nets)}")
    return rows


def spread_text(rows: list[dict]) -> str:
    """Per phase, the mean of the networks' EV gaps to the counts model, their range and how
    many are short beyond the noise (their gap's interval below 0): networks trained alike
    differ by their start and batches alone, so the range is what one network's figure can
    tell."""
    out = []
    for p in PHASES:
        gaps = [r["gaps"][p] for r in rows if p in r["gaps"]]
        if gaps:
            d = [g[0] for g in gaps]
            short = sum(g[2] < 0 for g in gaps)
            out.append(
                f"{p} {np.mean(d):+.3f} [{min(d):+.3f} .. {max(d):+.3f}] {short}/{len(d)} short"
            )
    return ", ".join(out)


def print_table(rows: list[dict]) -> None:
    w = max(len(r["row"]) for r in rows)
    print(f"  {'':{w}} {'':4} " + " ".join(f"{p:>9}" for p in PHASES))
    n = rows[0]["phases"]
    print(
        f"  {'positions':{w}} {'':4} " + " ".join(f"{n[p][2] if p in n else 0:>9}" for p in PHASES)
    )
    for r in rows:
        for k, what, style in ((0, "EV", "+9.3f"), (1, "ECE", "9.3f")):
            cells = " ".join(format(r["phases"][p][k], style) if p in r["phases"] else f"{'-':>9}"
                             for p in PHASES)  # fmt: skip
            print(f"  {r['row']:{w}} {what:4} {cells}")


def bar(row: dict, reference: dict) -> str:
    """Where the network's explained variance falls short of the counts model's, and the
    phases where it falls short beyond the noise (the gap's interval below 0)."""
    short = [p for p in PHASES if p in row["phases"] and p in reference["phases"]
             and row["phases"][p][0] < reference["phases"][p][0]]  # fmt: skip
    text = "EV >= counts model at every phase: " + (
        "met" if not short else f"not met ({', '.join(short)})"
    )
    if "gaps" in row:
        below = [p for p in short if row["gaps"][p][2] < 0]
        text += f"; short beyond the noise at {', '.join(below) or 'none'} ({gap_text(row)})"
    return text


def gap_text(row: dict) -> str:
    """Each phase's EV gap to the counts model with its interval (:func:`ev_gaps`)."""
    return ", ".join(f"{p} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
                     for p in PHASES if p in row["gaps"] for d, lo, hi in (row["gaps"][p],))  # fmt: skip


def summary(phases: dict[str, tuple[float, float, int]], k: int) -> str:
    return " ".join(f"{p} {phases[p][k]:+.3f}" for p in PHASES if p in phases)


def figures(rows: list[dict], command: str) -> list[Figure]:
    out = []
    for r in rows:
        ref = next(x for x in rows if x["players"] == r["players"] and x["row"] == COUNTS_MODEL)
        positions_ = r["phases"]["all"][2]
        step = f", kept at step {r['step']}" if r["row"] != COUNTS_MODEL else ""
        out.append(Figure(
            name=f"value by phase, Mexican Train {r['players']}p, held-out: {r['row']}",
            figure=f"EV {summary(r['phases'], 0)}; ECE {summary(r['phases'], 1)} "
                   f"({positions_} positions{step})",
            reference=f"{COUNTS_MODEL} EV {summary(ref['phases'], 0)}",
            ratio="" if r is ref else bar(r, ref), command=command, table="strength"))  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="2,4")
    parser.add_argument("--games", type=int, default=1500, help="the default training set")
    parser.add_argument("--thin-games", type=int, help="games of the larger pool (4 x --games)")
    parser.add_argument("--rows-per-game", type=int, default=8, help="rows kept per pool game")
    parser.add_argument("--heldout", type=int, default=300)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--every", type=int, default=50, help="steps between held-out losses")
    parser.add_argument("--seed", type=int, default=23201)
    parser.add_argument("--nets", type=int, default=1, help="networks per lever (other seeds)")
    parser.add_argument("--levers", default=",".join(lever.key for lever in LEVERS),
                        help="the levers to train, by key: " + ", ".join(
                            f"{lever.key} ({lever.name})" for lever in LEVERS))  # fmt: skip
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    keys = {lever.key: lever for lever in LEVERS}
    unknown = [k for k in args.levers.split(",") if k not in keys]
    if unknown:
        parser.error(f"--levers: {', '.join(unknown)} unknown; allowed: {', '.join(keys)}")
    args.levers = [keys[k] for k in args.levers.split(",")]
    args.thin_games = max(args.thin_games or 4 * args.games, args.games)
    pin_threads(1)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-value-") as tmp:
        for p in (int(x) for x in args.players.split(",")):
            rows += run(p, args, Path(tmp))
    command = (f"python -m bench.bench_value --players {args.players} --games {args.games} "
               f"--thin-games {args.thin_games} --rows-per-game {args.rows_per_game} "
               f"--heldout {args.heldout} --steps {args.steps} --every {args.every} "
               f"--seed {args.seed} --levers {','.join(lever.key for lever in args.levers)}"
               + (f" --nets {args.nets}" if args.nets > 1 else ""))  # fmt: skip
    record("bench_value", figures(rows, command), quick=not args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
