"""The fault corpus: its cases (``cases.yaml``, data), and how one case is run and judged.

A case is a command line, or a named mutation of a copy of a prepared run directory followed by a
command (usually resuming it), or an in-process call of the game contract. It names the exit code
it expects, the words its message must hold, and the post-conditions (named functions of
:mod:`fault_checks`) that make a successful command a *correct* recovery. Every case is also held
to what no case may do: hang (a hard timeout kills it), print a traceback, report an expected error
on more than one line, lose what was already written (:func:`fault_checks.assert_nothing_lost`),
or leave a process running.

Commands run as real subprocesses (``python -m omega_cluster ...``) with this checkout first on
the path; every process they start inherits the marker :data:`MARKER` in its environment, so
whatever outlives a command is found and ended (and the case fails).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from run_invariants import run_processes

ROOT = Path(__file__).resolve().parents[2]
CASES_FILE = Path(__file__).with_name("cases.yaml")
MARKER_NAME = "OMEGA_FAULT_RUN"
# The overrides of the prepared runs: a resume that repeats them changes nothing it trained with.
# Most cases work on the run without MLflow (opening the store costs a resume seconds); those
# about tracking (``tracked: true``) on the one with its sqlite store in the run directory.
SMOKE = ("run=smoke", "game=kuhn_poker", "cluster=inprocess", "run.progress=false")
UNTRACKED = (*SMOKE, "tracking.enabled=false")
KINDS = ("command", "mutation", "api")
ERROR_LINE = re.compile(r"^omega-cluster( [a-z]+)?: error: ")


@dataclass(frozen=True)
class Case:
    """One entry of ``cases.yaml`` (its header explains the fields)."""

    id: str
    kind: str
    area: str
    args: tuple[str, ...] = ()
    mutation: tuple[dict[str, Any], ...] = ()  # applied in order: {"name": ..., **params}
    exit: int = 0
    words: tuple[str, ...] = ()
    post: tuple[dict[str, Any], ...] = ()
    timeout: float = 90.0
    tracked: bool = False  # work on the prepared run that has MLflow tracking
    note: str = ""

    @property
    def needs_run(self) -> bool:
        """Whether the case works on a copy of the prepared run directory."""
        return self.kind == "mutation"


def _named(item: Any) -> dict[str, Any]:
    """``name`` or ``{name: {params}}`` → ``{"name": name, **params}``."""
    if isinstance(item, str):
        return {"name": item}
    ((name, params),) = item.items()
    return {"name": name, **(params or {})}


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    """The cases of ``cases.yaml``, checked for shape (unknown fields, kinds, duplicate ids)."""
    raw = yaml.safe_load(path.read_text())
    cases, seen = [], set()
    allowed = set(Case.__dataclass_fields__)
    for item in raw:
        unknown = set(item) - allowed
        if unknown:
            raise ValueError(f"case {item.get('id')}: unknown fields {sorted(unknown)}")
        if item["kind"] not in KINDS or item["id"] in seen:
            raise ValueError(f"case {item['id']}: bad kind {item['kind']!r} or duplicate id")
        seen.add(item["id"])
        item = {**item, "args": tuple(item.get("args", ())), "words": tuple(item.get("words", ()))}
        for key in ("post", "mutation"):
            value = item.get(key, ())
            item[key] = tuple(
                _named(p) for p in ([value] if isinstance(value, str | dict) else value)
            )
        cases.append(Case(**item))
    return cases


@dataclass
class Result:
    """What one command did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    hung: bool
    leftovers: dict[int, str]  # processes it left running (then ended by the runner)

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class Context:
    """A case's working state, handed to its mutation and its checks."""

    case: Case
    tmp: Path  # the case's own folder
    run: Path  # the run directory the command works on (a mutation may move or copy it)
    prepared: Path | None = None  # the session's prepared run (never changed)
    facts: dict[str, Any] = field(default_factory=dict)  # what the mutation did, for the checks
    wrapper: list[str] = field(default_factory=list)  # prefix of the command (read-only mount)
    results: list[Result] = field(default_factory=list)

    def expand(self, args: tuple[str, ...] | list[str]) -> list[str]:
        """Args with ``{smoke}`` spread (the prepared run's overrides) and ``{run}``, ``{tmp}``, ``{champion}`` filled in."""
        out: list[str] = []
        for arg in args:
            if arg == "{smoke}":
                out.extend(SMOKE if self.case.tracked else UNTRACKED)
            else:
                out.append(arg.format(run=self.run, tmp=self.tmp, champion=self.champion()))
        return out

    def champion(self) -> Path:
        """The champion's checkpoint directory of the run (from registry.json's status)."""
        import json

        try:
            versions = json.loads((self.run / "registry.json").read_text())["versions"]
            version = next(v["version"] for v in versions if v["status"] == "champion")
        except (OSError, ValueError, KeyError, StopIteration, TypeError):
            version = 0
        return self.run / "models" / f"v{version}"


def run_command(ctx: Context, args: list[str], *, timeout: float,
                signal_when: Any = None) -> Result:  # fmt: skip
    """``python -m omega_cluster <args>`` in ``ctx.tmp``; a hang is killed after ``timeout``.

    ``signal_when``: ``(predicate, signum)``: send ``signum`` to the command the first time
    ``predicate()`` is true (polled), e.g. SIGKILL once a new shard is written.
    """
    marker = f"{MARKER_NAME}={uuid.uuid4().hex}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           MARKER_NAME: marker.split("=", 1)[1], "PYTHONUNBUFFERED": "1"}  # fmt: skip
    command = [*ctx.wrapper, sys.executable, "-m", "omega_cluster", *args]
    # output to files, not pipes: a pipe nobody reads while we poll would block the command
    n = len(ctx.results)
    out_path, err_path = ctx.tmp / f"command-{n}.out", ctx.tmp / f"command-{n}.err"
    start = time.monotonic()
    with out_path.open("w") as out, err_path.open("w") as err:
        proc = subprocess.Popen(command, cwd=ctx.tmp, env=env, stdout=out, stderr=err,
                                text=True, start_new_session=True)  # fmt: skip
    hung = False
    try:
        if signal_when is not None:
            predicate, signum = signal_when
            while proc.poll() is None and time.monotonic() - start < timeout:
                if predicate():
                    os.kill(proc.pid, signum)
                    break
                time.sleep(0.2)
        proc.wait(timeout=max(timeout - (time.monotonic() - start), 1))
    except subprocess.TimeoutExpired:
        hung = True
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stdout, stderr = out_path.read_text(errors="replace"), err_path.read_text(errors="replace")
    seconds = time.monotonic() - start
    leftovers = _end_leftovers(marker)
    result = Result(args, proc.returncode, stdout, stderr, seconds, hung, leftovers)
    ctx.results.append(result)
    return result


def _end_leftovers(marker: str, grace_s: float = 10.0) -> dict[int, str]:
    """Processes that still carry ``marker`` after ``grace_s``: reported, then killed."""
    deadline = time.monotonic() + grace_s
    alive = run_processes(marker)
    while alive and time.monotonic() < deadline:
        time.sleep(0.5)
        alive = run_processes(marker)
    for pid in alive:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return alive


def error_lines(stderr: str) -> list[str]:
    """The ``omega-cluster <cmd>: error: ...`` lines of a command's stderr."""
    return [line for line in stderr.splitlines() if ERROR_LINE.match(line)]


def has_words(text: str, words: tuple[str, ...] | list[str]) -> list[str]:
    """The words (case-insensitive; ``a|b``: either) that ``text`` lacks."""
    low = text.lower()
    return [w for w in words if not any(alt.lower() in low for alt in w.split("|"))]


def judge(case: Case, result: Result) -> list[str]:
    """What the command did wrong by the rules every case keeps (module docstring)."""
    problems = []
    tail = (result.stderr or result.stdout)[-1500:]
    if result.hung:
        problems.append(f"hung: killed after {result.seconds:.0f} s")
    if "Traceback (most recent call last)" in result.output:
        problems.append("printed a traceback")
    if result.returncode != case.exit:
        problems.append(f"exit {result.returncode}, expected {case.exit}")
    if result.leftovers:
        problems.append(f"left {len(result.leftovers)} processes running: "
                        f"{sorted(result.leftovers.values())[:3]}")  # fmt: skip
    if case.exit != 0 and not result.hung:
        lines = error_lines(result.stderr)
        if len(lines) != 1:
            problems.append(f"{len(lines)} 'omega-cluster ...: error:' lines on stderr, expected 1")
        missing = has_words(lines[0] if lines else "", case.words)
    else:
        missing = has_words(result.output, case.words)
    if missing:
        problems.append(f"message lacks {missing}")
    if problems:
        problems.append(f"stderr tail: {tail!r}")
    return problems
