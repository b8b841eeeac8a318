"""A run from nothing in poker (``run=zero``, Leduc or Kuhn) by its exploitability, beside
OpenSpiel's NFSP and CFR+ for the same minutes.

``python -m bench.bench_poker_zero --run runs/<run dir> [--seed S] [--quick] [--save]``:

* **The service.** Each champion of the run (``v0``, then every promotion, in the order the gate
  decided them) at the minute of its promotion (the registry's ``decided``, from ``v0``'s
  ``created``), the self-play games stored by then (the shard manifest's times) and its
  exploitability as the network alone (its probabilities) and as the search (its final policy
  from one search at each information state): the rows the gatekeeper kept in ``pipeline.json``
  at each promotion, computed here, as the gatekeeper would (the run's seed), for a champion that
  has none. Beside them, the learner's snapshots (every candidate, rejected or not; at most
  :data:`SNAPSHOTS` of them, evenly spaced) as the network alone: what the learner had made by
  then, whether or not the gate promoted it.
* **NFSP.** OpenSpiel's neural fictitious self-play (its PyTorch version, the hyperparameters of
  its own example for the game, ``open_spiel/python/examples/nfsp_<game>_pytorch.py``), one
  agent per seat, trained for as long as the run (``v0`` to its last gate decision), in this
  process with torch's threads pinned as the run pinned its players (``cluster.torch_threads``):
  its average policy's exploitability at :data:`POINTS` evenly spaced times, at each champion's
  minute and at each champion's self-play games (its episodes); the time spent measuring is
  not on its clock.
* **CFR+.** OpenSpiel's C++ solver (``pyspiel.CFRPlusSolver``), its average policy's
  exploitability at the same times and at every power of two iterations, for as long as the run
  or until it is below :data:`FLOOR`: the floor, what a tabular solver reaches in that time.

Every figure is OpenSpiel's exact exploitability (NashConv / 2, :mod:`omega_cluster.eval.
exploitability`: the whole tree walked, no sampling, so no interval; uniform play: Kuhn 0.458,
Leduc 2.37); each side is one training run. Leduc is read against wall-clock minutes, Kuhn
against self-play games (:data:`AXIS`).

The plot of the three (``bench-exploitability.png``, log y) and its data
(``bench-exploitability.json``) go into the run's ``plots/``; ``--save`` also draws it as
``docs/exploitability-<game>.png`` and records one row per champion, and one at the run's end,
in ``docs/results/bench_poker_zero.json`` (the ``exploitability_<game>`` table of
``docs/results.md``: a recording replaces that game's table). ``--quick`` (a smoke check)
gives NFSP :data:`QUICK_EPISODES` episodes and CFR+ :data:`QUICK_SECONDS`, and records nothing.
``--seed`` seeds NFSP and its deals (the service's figures are the run's own).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.bench_zero import games_at, run_minutes
from bench.results import Figure, record, results_dir
from omega_cluster.data import ShardStore
from omega_cluster.eval.anchors import KINDS, champion_exploitability
from omega_cluster.eval.matches import BenchError
from omega_cluster.games.chance import derive_seed
from omega_cluster.model.registry import ModelRegistry, ModelVersion
from omega_cluster.model.threads import pin_threads
from omega_cluster.pipeline.run_state import PipelineState, RunPaths
from omega_cluster.wiring import gate_service_config, load_run_settings, run_registry

AXIS = {"leduc_poker": "minutes", "kuhn_poker": "games"}  # what each game is read against
# OpenSpiel's NFSP examples (open_spiel/python/examples/nfsp_{leduc,kuhn}_pytorch.py), verbatim;
# what Kuhn's example leaves out are the NFSP class's defaults
NFSP = {
    "leduc_poker": {
        "hidden_layers_sizes": [128],
        "reservoir_buffer_capacity": int(2e6),
        "anticipatory_param": 0.1,
        "replay_buffer_capacity": int(2e5),
        "min_buffer_size_to_learn": 1000,
        "batch_size": 128,
        "learn_every": 64,
        "rl_learning_rate": 0.01,
        "sl_learning_rate": 0.01,
        "optimizer_str": "sgd",
        "loss_str": "mse",
        "update_target_network_every": 19200,
        "discount_factor": 1.0,
        "epsilon_decay_duration": int(20e6),
        "epsilon_start": 0.06,
        "epsilon_end": 0.001,
    },
    "kuhn_poker": {
        "hidden_layers_sizes": [128],
        "reservoir_buffer_capacity": int(2e6),
        "anticipatory_param": 0.1,
        "replay_buffer_capacity": int(2e5),
        "epsilon_decay_duration": int(3e6),  # the example's num_train_episodes
        "epsilon_start": 0.06,
        "epsilon_end": 0.001,
    },
}
POINTS = 20  # NFSP's and CFR+'s evenly spaced measurements over the run's minutes
FLOOR = 1e-3  # CFR+ stops below this exploitability
SNAPSHOTS = 40  # the learner's snapshots measured, at most
QUICK_SECONDS = 2.0  # --quick: CFR+'s training time
QUICK_EPISODES = 12_000  # --quick: NFSP's episodes (Kuhn: its average network learns from ~9,000)
COMMAND = "python -m bench.bench_poker_zero"


@dataclass(frozen=True)
class Point:
    """One measurement of a curve: after ``seconds`` of training and ``games`` self-play games
    (NFSP's episodes, CFR+'s iterations), the exploitability ``value``."""

    seconds: float
    games: int
    value: float


@dataclass(frozen=True)
class Champion:
    """A champion of the service's run: when it was promoted, the games stored by then and its
    exploitability as each player kind (:data:`~omega_cluster.eval.anchors.KINDS`)."""

    version: int
    minutes: float
    games: int
    network: float
    search: float


@dataclass(frozen=True)
class Run:
    """What the bench reads of one service run."""

    game: str
    minutes: float  # v0 to the last gate decision
    games: int  # self-play games stored by then
    champions: tuple[Champion, ...]  # in promotion order
    snapshots: tuple[tuple[int, Point], ...]  # (version, its network's point), by version
    simulations: int  # the search kind's budget (gate.bench_simulations)


def _promoted(registry: ModelRegistry) -> list[ModelVersion]:
    """v0, then every promoted version in the order the gate decided them."""
    later = [v for v in registry.versions if v.version > 0 and v.decided is not None
             and v.status in ("champion", "retired")]  # fmt: skip
    return [registry.get(0), *sorted(later, key=lambda v: (v.decided, v.version))]


def read_run(run_dir: Path) -> Run:
    """The champions of the run in ``run_dir`` and the learner's snapshots (module docstring)."""
    settings = load_run_settings(run_dir)
    game = settings.game.name
    if game not in AXIS:
        raise BenchError(f"{run_dir}: a run of {game!r}; game must be one of {', '.join(AXIS)}")
    registry = run_registry(run_dir, settings)
    paths = RunPaths(run_dir, settings.run.shard_store)
    store = ShardStore(paths.store_uri)
    kept = PipelineState.load(paths.state, game=game).exploitability
    recorded = {(int(r["version"]), str(r["player"])): float(r["value"]) for r in kept}
    config = gate_service_config(settings)
    start = registry.get(0).created
    champions = []
    for v in _promoted(registry):
        minutes = 0.0 if v.version == 0 else (float(v.decided or start) - start) / 60.0
        missing = tuple(k for k in KINDS if (v.version, k) not in recorded)
        began = time.perf_counter()
        for kind, value in champion_exploitability(config, v.version, v.uri, kinds=missing):
            recorded[v.version, kind] = value
        if missing:
            print(f"v{v.version}: exploitability of {', '.join(missing)} computed here "
                  f"({time.perf_counter() - began:.1f} s)", flush=True)  # fmt: skip
        champions.append(Champion(v.version, minutes, games_at(store, start, minutes),
                                  recorded[v.version, "network"], recorded[v.version, "search"]))  # fmt: skip
    minutes = run_minutes(registry)
    return Run(game, minutes, games_at(store, start, minutes), tuple(champions),
               _snapshots(config, registry, store, recorded, start),
               settings.gate.bench_simulations)  # fmt: skip


def _snapshots(
    config: Any,
    registry: ModelRegistry,
    store: ShardStore,
    recorded: dict[tuple[int, str], float],
    start: float,
) -> tuple[tuple[int, Point], ...]:
    """The learner's snapshots as the network alone, at most :data:`SNAPSHOTS` evenly spaced
    (the last always) and every one whose value is known (``recorded``: the champions), each at
    the time it was made and the games stored by then."""
    made = [v for v in registry.versions if v.version > 0 and Path(v.uri).exists()]
    step = max(1, math.ceil(len(made) / SNAPSHOTS))
    spaced = {v.version for v in made[::-1][::step]}
    chosen = [v for v in made if v.version in spaced or (v.version, "network") in recorded]
    points = []
    for v in chosen:
        value = recorded.get((v.version, "network"))
        if value is None:
            value = champion_exploitability(config, v.version, v.uri, kinds=("network",))[0][1]
        seconds = v.created - start
        points.append((v.version, Point(seconds, games_at(store, start, seconds / 60.0), value)))
    return tuple(points)


def _measure(
    train: Callable[[], int],
    evaluate: Callable[[], float],
    seconds: float,
    *,
    at_seconds: Sequence[float],
    at_games: Sequence[int] = (),
    max_games: float = math.inf,
    stop_below: float = -1.0,
) -> list[Point]:
    """Call ``train`` (one step: returns the games it played) for ``seconds`` of its own clock
    or ``max_games`` games, measuring ``evaluate`` at 0, at each of ``at_seconds`` and
    ``at_games`` (once passed) and at the end, the measurement off the clock; stops early after
    a measurement below ``stop_below``."""
    times = sorted({t for t in at_seconds if 0 < t < seconds})
    counts = sorted({g for g in at_games if 0 < g < max_games})
    clock, games = 0.0, 0
    points = [Point(0.0, 0, evaluate())]
    while clock < seconds and games < max_games and points[-1].value >= stop_below:
        began = time.perf_counter()
        games += train()
        clock += time.perf_counter() - began
        due = False
        while times and clock >= times[0]:
            times.pop(0)
            due = True
        while counts and games >= counts[0]:
            counts.pop(0)
            due = True
        if due or clock >= seconds or games >= max_games:
            points.append(Point(clock, games, evaluate()))
    return points


def nfsp_curve(
    game_name: str,
    seconds: float,
    *,
    at_seconds: Sequence[float],
    at_games: Sequence[int],
    seed: int,
    threads: int,
    episodes: float = math.inf,
) -> list[Point]:
    """OpenSpiel's NFSP on ``game_name`` for ``seconds`` or ``episodes`` (module docstring): its
    average policy's exploitability, games counted in episodes."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import exploitability as os_exploitability
    from open_spiel.python.pytorch import nfsp

    pin_threads(threads)
    sampler = rl_environment.ChanceEventSampler(seed=derive_seed(seed, "nfsp", "deals") % 2**31)
    env = rl_environment.Environment(game_name, players=2, chance_event_sampler=sampler)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    hp = dict(NFSP[game_name])
    layers, reservoir = hp.pop("hidden_layers_sizes"), hp.pop("reservoir_buffer_capacity")
    anticipatory = hp.pop("anticipatory_param")
    agents = [nfsp.NFSP(p, size, actions, layers, reservoir, anticipatory,
                        seed=derive_seed(seed, "nfsp", p) % 2**31, **hp) for p in range(2)]  # fmt: skip

    class Average(os_policy.Policy):  # type: ignore[misc]
        """Both agents' average policies as one OpenSpiel policy (as OpenSpiel's example)."""

        def __init__(self) -> None:
            super().__init__(env.game, [0, 1])

        def action_probabilities(self, state: Any, player_id: Any = None) -> dict[int, float]:
            seat = state.current_player()
            legal = state.legal_actions(seat)
            obs = {"current_player": seat, "info_state": [None, None],
                   "legal_actions": [None, None]}  # fmt: skip
            obs["info_state"][seat] = state.information_state_tensor(seat)
            obs["legal_actions"][seat] = legal
            step = rl_environment.TimeStep(observations=obs, rewards=None, discounts=None,
                                           step_type=None)  # fmt: skip
            with agents[seat].temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
                probs = agents[seat].step(step, is_evaluation=True).probs
            return {a: float(probs[a]) for a in legal}

    average = Average()

    def episode() -> int:
        step = env.reset()
        while not step.last():
            step = env.step([agents[step.observations["current_player"]].step(step).action])
        for agent in agents:
            agent.step(step)
        return 1

    def evaluate() -> float:
        return float(os_exploitability.exploitability(env.game, average))

    return _measure(episode, evaluate, seconds, at_seconds=at_seconds, at_games=at_games,
                    max_games=episodes)  # fmt: skip


def cfr_plus_curve(game_name: str, seconds: float, *, at_seconds: Sequence[float]) -> list[Point]:
    """OpenSpiel's CFR+ on ``game_name`` for ``seconds`` or until below :data:`FLOOR`: its
    average policy's exploitability, games counted in iterations (measured also at every power
    of two)."""
    import pyspiel

    game = pyspiel.load_game(game_name)
    solver = pyspiel.CFRPlusSolver(game)

    def iterate() -> int:
        solver.evaluate_and_update_policy()
        return 1

    def evaluate() -> float:
        return float(pyspiel.exploitability(game, solver.average_policy()))

    powers = [2**k for k in range(40)]
    return _measure(iterate, evaluate, seconds, at_seconds=at_seconds, at_games=powers,
                    stop_below=FLOOR)  # fmt: skip


def uniform_exploitability(game_name: str) -> float:
    """Uniform random play's exploitability (the untrained reference)."""
    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability as os_exploitability

    game = pyspiel.load_game(game_name)
    return float(os_exploitability.exploitability(game, os_policy.UniformRandomPolicy(game)))


def at_time(points: Sequence[Point], seconds: float) -> Point | None:
    """The curve's measurement at ``seconds``: the first at or after it (a scheduled
    measurement is taken at the first step past its time); past the curve's end None, or its
    last point if it stopped early below :data:`FLOOR`."""
    if not points:
        return None
    if seconds > points[-1].seconds:
        return points[-1] if points[-1].value < FLOOR else None
    return next(p for p in points if p.seconds >= seconds)


def at_games(points: Sequence[Point], games: int) -> Point | None:
    """The curve's measurement at ``games`` games (the first at or after; None past its end)."""
    if not points or games > points[-1].games:
        return None
    return next(p for p in points if p.games >= games)


@dataclass(frozen=True)
class Row:
    """One row of the game's table: the service at a minute, the baselines then."""

    minutes: float
    games: int
    champion: Champion
    snapshot: tuple[int, Point] | None  # the learner's latest snapshot measured by then
    nfsp_time: Point | None
    nfsp_games: Point | None
    cfr_plus: Point | None


def table_rows(run: Run, nfsp: Sequence[Point], cfr_plus: Sequence[Point]) -> list[Row]:
    """One row per champion at its promotion, and one at the run's end (if no promotion was)."""
    moments = [(c.minutes, c.games, c) for c in run.champions]
    if run.minutes > moments[-1][0] + 1e-9:
        moments.append((run.minutes, run.games, run.champions[-1]))
    rows = []
    for minutes, games, champion in moments:
        made = [s for s in run.snapshots if s[1].seconds <= 60.0 * minutes + 1e-6]
        rows.append(Row(minutes, games, champion, made[-1] if made else None,
                        at_time(nfsp, 60.0 * minutes), at_games(nfsp, games),
                        at_time(cfr_plus, 60.0 * minutes)))  # fmt: skip
    return rows


def _value(point: Point | None, unit: str) -> str:
    if point is None:
        return "not reached"
    return f"{point.value:.4f} ({point.games:,} {unit})"


def cells(row: Row) -> tuple[str, ...]:
    """A row's cells after the game (``bench.results.COLUMNS['exploitability_<game>']``)."""
    snapshot = "" if row.snapshot is None else f"{row.snapshot[1].value:.4f} (v{row.snapshot[0]})"
    return (f"{row.minutes:.1f}", f"{row.games:,}", f"v{row.champion.version}",
            f"{row.champion.network:.4f}", f"{row.champion.search:.4f}", snapshot,
            _value(row.nfsp_time, "episodes"), _value(row.nfsp_games, "episodes"),
            _value(row.cfr_plus, "iterations"))  # fmt: skip


def figures(run: Run, rows: Sequence[Row], command: str) -> list[Figure]:
    """The ``exploitability_<game>`` table's rows."""
    out = []
    for row in rows:
        nfsp = "" if row.nfsp_time is None else f"NFSP {row.nfsp_time.value:.4f}"
        out.append(Figure(
            name=f"run=zero champion v{row.champion.version} at {row.minutes:.1f} min, "
                 f"exploitability of the network alone, {run.game}",
            figure=f"{row.champion.network:.4f}", reference=nfsp,
            ratio="exact (NashConv / 2)", command=command, table=f"exploitability_{run.game}",
            cells=cells(row),
        ))  # fmt: skip
    return out


def plot(
    run: Run, nfsp: Sequence[Point], cfr_plus: Sequence[Point], uniform: float, out: Path
) -> Path:
    """Exploitability (log) against wall-clock minutes (Leduc) or self-play games (Kuhn): the
    champions as the network and as the search (each holds until the next promotion), the
    learner's snapshots, NFSP, CFR+ and uniform play."""
    from matplotlib.figure import Figure as MplFigure

    by_games = AXIS[run.game] == "games"
    fig = MplFigure(figsize=(7.5, 4.5), dpi=110, layout="constrained")
    ax = fig.subplots()
    end = run.games if by_games else run.minutes
    xs = [c.games if by_games else c.minutes for c in run.champions] + [end]
    for kind, style in (("network", "-"), ("search", "--")):
        ys = [getattr(c, kind) for c in run.champions]
        label = (f"service champion, {kind}" if kind == "network"
                 else f"service champion, search ({run.simulations} simulations)")  # fmt: skip
        ax.step(xs, [*ys, ys[-1]], style, where="post", marker="o", markevery=len(ys) * [True]
                + [False], label=label)  # fmt: skip
    if run.snapshots:
        ax.plot([p.games if by_games else p.seconds / 60.0 for _, p in run.snapshots],
                [p.value for _, p in run.snapshots], ".", color="grey", alpha=0.6,
                label="learner's snapshots, network")  # fmt: skip
    if nfsp:
        ax.plot([p.games if by_games else p.seconds / 60.0 for p in nfsp],
                [p.value for p in nfsp], "-", marker=".", label="OpenSpiel NFSP (PyTorch)")  # fmt: skip
    if cfr_plus:
        last = cfr_plus[-1]
        if by_games:
            ax.axhline(last.value, color="black", ls=":",
                       label=f"CFR+ after {last.games:,} iterations ({last.seconds:.2f} s)")  # fmt: skip
        else:
            ax.plot([p.seconds / 60.0 for p in cfr_plus] + [run.minutes],
                    [p.value for p in cfr_plus] + [last.value], ":", color="black",
                    label="OpenSpiel CFR+")  # fmt: skip
    ax.axhline(uniform, color="red", lw=0.8, ls="-.", label=f"uniform play {uniform:.3f}")
    ax.set_yscale("log")
    if by_games:
        ax.set_xscale("symlog", linthresh=100)
        ax.set_xlim(left=0)
    ax.set_xlabel("self-play games (NFSP: episodes)" if by_games else "wall-clock minutes")
    ax.set_ylabel("exploitability (NashConv / 2)")
    ax.set_title(f"{run.game}: run=zero beside NFSP and CFR+")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png")
    return out


def bench(run_dir: Path, seed: int, *, quick: bool) -> tuple[Run, list[Point], list[Point], float]:
    """The run's champions, NFSP's and CFR+'s curves and uniform play's exploitability; prints
    them and writes the plot and its data into the run's ``plots/``."""
    run = read_run(run_dir)
    threads = load_run_settings(run_dir).cluster.torch_threads
    if run.minutes <= 0:
        raise BenchError(f"{run_dir}: the run made no gate decision (nothing to compare)")
    seconds = QUICK_SECONDS if quick else 60.0 * run.minutes
    moments = [60.0 * c.minutes for c in run.champions] + [60.0 * run.minutes]
    at_seconds = [*(seconds * (k + 1) / POINTS for k in range(POINTS)), *moments]
    nfsp_games = [c.games for c in run.champions] + [run.games]
    if quick:  # NFSP by episodes, not time: past its buffer's fill, whatever the machine's speed
        at_seconds = moments
        nfsp_games += [QUICK_EPISODES * (k + 1) // 3 for k in range(3)]
    uniform = uniform_exploitability(run.game)
    print(f"{run.game}: {run.minutes:.1f} min, {run.games:,} self-play games, "
          f"{len(run.champions)} champions; uniform play {uniform:.4f}", flush=True)  # fmt: skip
    for c in run.champions:
        print(f"  v{c.version} at {c.minutes:.2f} min, {c.games:,} games: network "
              f"{c.network:.4f}, search {c.search:.4f}", flush=True)  # fmt: skip
    print("  learner's snapshots, network: " + ", ".join(
        f"v{v} {p.value:.3f}" for v, p in run.snapshots), flush=True)  # fmt: skip
    began = time.perf_counter()
    nfsp = nfsp_curve(run.game, math.inf if quick else seconds, at_seconds=at_seconds,
                      at_games=nfsp_games, seed=seed, threads=threads,
                      episodes=QUICK_EPISODES if quick else math.inf)  # fmt: skip
    print(f"NFSP: {nfsp[-1].seconds:.0f} s of training ({time.perf_counter() - began:.0f} s with its "
          f"measurements), {nfsp[-1].games:,} episodes: " + ", ".join(
              f"{p.seconds:.0f} s {p.value:.4f}" for p in nfsp), flush=True)  # fmt: skip
    cfr_plus = cfr_plus_curve(run.game, seconds, at_seconds=at_seconds)
    print(f"CFR+: {cfr_plus[-1].games:,} iterations in {cfr_plus[-1].seconds:.1f} s: " + ", ".join(
        f"{p.games} {p.value:.5f}" for p in cfr_plus), flush=True)  # fmt: skip
    plots = run_dir / "plots"
    plot(run, nfsp, cfr_plus, uniform, plots / "bench-exploitability.png")
    data = {"run": asdict(run), "nfsp": [asdict(p) for p in nfsp],
            "cfr_plus": [asdict(p) for p in cfr_plus], "uniform": uniform, "seed": seed,
            "quick": quick}  # fmt: skip
    (plots / "bench-exploitability.json").write_text(json.dumps(data, indent=1) + "\n")
    return run, nfsp, cfr_plus, uniform


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a run=zero run directory")
    parser.add_argument("--seed", type=int, default=2027, help="NFSP's seed")
    parser.add_argument(
        "--quick", action="store_true", help="NFSP and CFR+ briefly; records nothing"
    )
    parser.add_argument("--save", action="store_true", help="record in docs/results/")
    args = parser.parse_args(argv)
    run, nfsp, cfr_plus, uniform = bench(args.run, args.seed, quick=args.quick)
    rows = table_rows(run, nfsp, cfr_plus)
    for row in rows:
        print(" | ".join(cells(row)), flush=True)
    command = f"{COMMAND} --run {args.run} --seed {args.seed}"
    if args.save and not args.quick:
        out = plot(run, nfsp, cfr_plus, uniform,
                   results_dir().parent / f"exploitability-{run.game}.png")  # fmt: skip
        print(f"(plot: {out})")
    record("bench_poker_zero", figures(run, rows, command), quick=args.quick or not args.save)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
