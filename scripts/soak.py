"""The soak: a training run on the embedded Ray while a chaos driver kills its parts.

    python scripts/soak.py                  # make soak: 12 kills, async mode
    python scripts/soak.py --kills 3 --mode sync --dir /tmp/soak

A ``python -m omega_cluster train`` driver runs a small game (kuhn_poker, ``run=smoke``) on the
embedded Ray. At random times (seeded: ``--seed``) the chaos loop SIGKILLs a random target: a
self-play actor, the learner, the gatekeeper (Ray actor processes, found by their process titles
``ray::SelfPlayActor`` ...) or the driver itself, which is then resumed (``run.resume=<dir>``);
before each resume one random shard of the store is truncated (a disk that lost a write), which
the resumed run must quarantine and stop counting.
The run is open-ended (``run.iterations`` far above ``--iterations``), so it cannot finish
before the kills are sent: once they are and it has made ``--iterations`` gate decisions, the
soak stops it as a user would (one SIGINT: the chunks in flight are written, exit 0). Then the
invariants of ``tests/faults/run_invariants.py``
are checked on its directory — every game reported finished in exactly one shard, no chunk
twice, no shard half-visible, counters equal to the manifest, the champion chain only through
won gates — and nothing the soak started may be left running or listening (processes are
recognised by a marker in their environment, which every process a driver starts inherits).

The report (kills by target, resumes, data checked, each invariant) is printed and written as
JSON to ``<dir>/soak.json``; the exit status is 0 when every invariant holds. Linux only (the
process checks read ``/proc``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "faults"))
from run_invariants import (  # noqa: E402
    check_run,
    data_checked,
    listening_sockets,
    manifest_entries,
    run_processes,
)

MARKER_NAME = "OMEGA_SOAK_RUN"
TARGETS = {  # target -> the process title of its Ray actor (None: the driver itself)
    "selfplay": "ray::SelfPlayActor",
    "learner": "ray::LearnerActor",
    "gatekeeper": "ray::GatekeeperActor",
    "driver": None,
}


@dataclass
class SoakReport:
    run_dir: str
    mode: str
    seed: int
    kills_planned: int = 0  # SIGKILLs asked for (fewer are sent only if the soak runs out of time)
    kills: dict[str, int] = field(default_factory=dict)  # target -> SIGKILLs sent
    resumes: int = 0  # driver starts that resumed the run
    corrupted: list[str] = field(default_factory=list)  # shards truncated before a resume
    driver_exits: list[int] = field(default_factory=list)  # exit status of every driver start
    decisions: int = 0
    data: dict[str, int] = field(default_factory=dict)  # shards, records, games checked
    invariants: dict[str, list[str]] = field(default_factory=dict)  # invariant -> problems
    left_running: list[str] = field(default_factory=list)  # processes alive after the last stop
    left_listening: list[str] = field(default_factory=list)  # their listening sockets
    # the drivers' lines that say what stopped a run or may stop a resume (DRIVER_PROBLEMS)
    driver_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        failed_exit = any(code != 0 for code in self.driver_exits[-1:])
        return not (any(self.invariants.values()) or self.left_running or self.left_listening
                    or failed_exit or self.driver_problems)  # fmt: skip


# in a driver's log: the one line of an error that stopped it, and Ray's warning that an
# actor's restart depends on constructor arguments it may not find again (Ray issue 53727)
DRIVER_PROBLEMS = (": error: ", "constructor arguments in the object store")
OPEN_ENDED = 100_000  # the driver's run.iterations: the soak, not the run, decides when it ends


def driver_log(run_dir: Path) -> Path:
    """Where every driver start of the soak writes its output (beside the run directory)."""
    return run_dir.parent / f"{run_dir.name}-driver.log"


def _decisions(state: Path) -> int:
    try:
        return int(json.loads(state.read_text())["decisions"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def corrupt_one(run_dir: Path, rng: random.Random) -> str | None:
    """Truncate one live shard of the run's store to half its bytes (seeded choice); its path,
    or None when the store has no entry yet."""
    entries, _ = manifest_entries(run_dir / "shards")
    paths = [run_dir / "shards" / e["shard_path"] for e in entries]
    paths = [p for p in paths if p.is_file() and p.stat().st_size > 1]
    if not paths:
        return None
    path = rng.choice(paths)
    with path.open("r+b") as shard:
        shard.truncate(path.stat().st_size // 2)
    return str(path.relative_to(run_dir))


def driver_command(run_dir: Path, mode: str, iterations: int, resume: bool) -> list[str]:
    command = [sys.executable, "-m", "omega_cluster", "train", "run=smoke", "game=kuhn_poker",
               "cluster=embedded", f"cluster.mode={mode}", "cluster.self_play_actors=2",
               "cluster.num_cpus=2", f"run.iterations={iterations}", "run.progress=false",
               f"run.dir={run_dir}"]  # fmt: skip
    return command + ([f"run.resume={run_dir}"] if resume else [])


def _targets_alive(
    marker: str, driver: subprocess.Popen[bytes], state: Path
) -> dict[str, list[int]]:
    """target -> pids of its live processes (the driver: while it runs, once it has saved the
    run's state and the store holds a shard — a driver killed before that leaves nothing to
    resume or to truncate, and tests nothing)."""
    alive: dict[str, list[int]] = {name: [] for name in TARGETS}
    for pid, command in run_processes(marker).items():
        for name, title in TARGETS.items():
            if title and command.startswith(title):
                alive[name].append(pid)
    manifest = state.parent / "shards" / "manifest"
    if driver.poll() is None and state.exists() and any(manifest.glob("*.json")):
        alive["driver"] = [driver.pid]
    return alive


class Chaos:
    """Kills a live target every ``gap`` seconds (drawn from ``rng``), ``kills`` times. Targets
    come in rounds of a seeded random order of all four, so every target is hit as often as
    the others. A target that is not up is waited for (the driver is one once the store holds a
    shard, which a loaded machine can take a while to write) and skipped for the next only after
    ``patience`` seconds: skipping at once let a short soak's few kills miss a target."""

    def __init__(
        self, rng: random.Random, kills: int, gap: tuple[float, float], state: Path,
        patience: float = 90.0,
    ) -> None:  # fmt: skip
        self.rng, self.left, self.gap, self.state = rng, kills, gap, state
        self.patience = patience
        self.next_at = time.monotonic() + rng.uniform(*gap)
        self.kills: Counter[str] = Counter()
        self.order: list[str] = []

    def _next_target(self, alive: dict[str, list[int]]) -> str | None:
        if not self.order:
            self.order = self.rng.sample(sorted(TARGETS), len(TARGETS))
        waited = time.monotonic() - self.next_at  # how long the round's next target kept us
        for target in list(self.order):
            if alive.get(target):
                self.order.remove(target)
                return target
            if waited < self.patience:
                return None
        return None

    def step(self, marker: str, driver: subprocess.Popen[bytes], log: Any) -> str | None:
        """Kill something if it is time and a target is up; the target's name, else None."""
        if self.left <= 0 or time.monotonic() < self.next_at:
            return None
        alive = {k: v for k, v in _targets_alive(marker, driver, self.state).items() if v}
        if not alive.keys() - {"driver"}:  # the cluster is (re)starting: wait for its actors
            return None
        target = self._next_target(alive)
        if target is None:
            return None
        pid = self.rng.choice(sorted(alive[target]))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return None
        self.kills[target] += 1
        self.left -= 1
        self.next_at = time.monotonic() + self.rng.uniform(*self.gap)
        print(f"soak: SIGKILL {target} (pid {pid}); {self.left} kills left", file=log, flush=True)
        return target


def soak(run_dir: Path, *, kills: int, seed: int, mode: str, iterations: int,
         gap: tuple[float, float], timeout_s: float, log: Any = sys.stderr) -> SoakReport:  # fmt: skip
    """Run the soak (module docstring) and return its report."""
    marker = f"{MARKER_NAME}={uuid.uuid4().hex}"
    env = {**os.environ, MARKER_NAME: marker.split("=", 1)[1],
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    report = SoakReport(str(run_dir), mode, seed, kills_planned=kills)
    state = run_dir / "pipeline.json"
    chaos = Chaos(random.Random(seed), kills, gap, state)
    damage = random.Random(seed + 1)  # the shards truncated between restarts
    start = time.monotonic()
    logs = driver_log(run_dir)
    while time.monotonic() - start < timeout_s:
        resume = state.exists()  # killed before it wrote one: start anew
        report.resumes += resume
        with logs.open("a") as out:
            driver = subprocess.Popen(driver_command(run_dir, mode, OPEN_ENDED, resume), env=env,
                                      stdout=out, stderr=subprocess.STDOUT, cwd=run_dir.parent,
                                      start_new_session=True)  # fmt: skip
            at_start, stopping = _decisions(state), False
            while driver.poll() is None and time.monotonic() - start < timeout_s:
                chaos.step(marker, driver, log)
                done = _decisions(state)
                # stop once the kills are sent and the run has its decisions — and this driver
                # has made one, so it is in its loop with the signal handlers installed
                if not stopping and chaos.left <= 0 and done >= iterations and done > at_start:
                    print(f"soak: {done} gate decisions, kills sent: SIGINT", file=log, flush=True)
                    driver.send_signal(signal.SIGINT)
                    stopping = True
                time.sleep(0.25)
            if driver.poll() is None:  # out of time: stop it as a user would
                driver.send_signal(signal.SIGINT)
                driver.wait(60)
        report.driver_exits.append(driver.returncode)
        print(f"soak: driver exited {driver.returncode}", file=log, flush=True)
        # 0: done; 2: an expected error (bad input), which another start would only repeat
        if driver.returncode in (0, 2) or len(report.driver_exits) > 3 * kills + 3:
            break
        corrupted = corrupt_one(run_dir, damage)
        if corrupted is not None:
            report.corrupted.append(corrupted)
            print(f"soak: truncated {corrupted} before the resume", file=log, flush=True)
    report.seconds = round(time.monotonic() - start, 1)
    report.kills = dict(chaos.kills)
    _check(report, run_dir, marker)
    return report


def _check(report: SoakReport, run_dir: Path, marker: str, grace_s: float = 15.0) -> None:
    """The invariants, then what is still running or listening (ended afterwards)."""
    deadline = time.monotonic() + grace_s
    alive = run_processes(marker)
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = run_processes(marker)
    report.left_listening = [f"pid {pid} {address}" for pid, address in listening_sockets(alive)]
    report.left_running = [f"pid {pid} {command[:120]}" for pid, command in sorted(alive.items())]
    for pid in alive:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    report.decisions = _decisions(run_dir / "pipeline.json")
    logs = driver_log(run_dir)
    lines = logs.read_text(errors="replace").splitlines() if logs.exists() else []
    report.driver_problems = [line.strip()[:400] for line in lines
                              if any(problem in line for problem in DRIVER_PROBLEMS)]  # fmt: skip
    report.invariants = check_run(run_dir)
    report.data = data_checked(run_dir)


def print_report(report: SoakReport, out: Any = sys.stdout) -> None:
    kills = ", ".join(f"{k} {v}" for k, v in sorted(report.kills.items())) or "none"
    print(f"soak of {report.run_dir} ({report.mode} mode, seed {report.seed}): "
          f"{sum(report.kills.values())} of {report.kills_planned} kills ({kills}), "
          f"{report.resumes} resumes, {len(report.corrupted)} shards truncated, "
          f"{report.decisions} gate decisions, {report.seconds:.0f} s", file=out)  # fmt: skip
    d = report.data
    print(
        f"  checked {d.get('shards', 0)} shards, {d.get('records', 0)} records, "
        f"{d.get('games', 0)} games ({d.get('quarantined', 0)} quarantined)",
        file=out,
    )
    for name, problems in report.invariants.items():
        print(f"  {name:16} {'OK' if not problems else 'BROKEN: ' + '; '.join(problems)}", file=out)
    print(f"  {'nothing_left':16} " + ("OK" if not (report.left_running or report.left_listening)
          else f"BROKEN: {report.left_running + report.left_listening}"), file=out)  # fmt: skip
    for line in report.driver_problems:
        print(f"  driver said: {line}", file=out)
    print(f"  driver exits {report.driver_exits}; {'OK' if report.ok else 'FAILED'}", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=12, help="SIGKILLs to send (default 12)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill times and targets")
    parser.add_argument("--mode", choices=("async", "sync"), default="async")
    parser.add_argument("--iterations", type=int, default=30, help="gate decisions of the run")
    parser.add_argument(
        "--dir", type=Path, default=None, help="run directory (default: a new temp dir)"
    )
    parser.add_argument("--timeout", type=float, default=1800.0, help="give up after this long (s)")
    args = parser.parse_args(argv)
    run_dir = (args.dir or Path(tempfile.mkdtemp(prefix="omega-soak-")) / "run").resolve()
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    report = soak(run_dir, kills=args.kills, seed=args.seed, mode=args.mode,
                  iterations=args.iterations, gap=(5.0, 20.0), timeout_s=args.timeout)  # fmt: skip
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "soak.json").write_text(json.dumps({**asdict(report), "ok": report.ok}, indent=1))
    print_report(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
