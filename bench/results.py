"""The benchmarks' figures as JSON, and the tables of ``docs/results.md`` rendered from them.

A benchmark prints its figures and then hands the main ones to :func:`record`, which writes them
to ``docs/results/<bench>.json``, one file per benchmark. A run's speed figures replace all the
speed figures of that benchmark (one run measures them all, at one setting), and so do a run's
figures of a table one run measures whole (:data:`WHOLE_TABLES`: a poker game's exploitability
table), and a run's figures of a benchmark that measures one run whole (a learning curve:
``record(..., whole=True)``); a strength figure replaces only the one of the same name (each is a
long run of its own, kept until rerun). Each figure carries what it measures, the figure, the
reference measured in the same run, their ratio or the bar it is held to, the command that
reproduces it, the date and the commit it was measured at. ``--quick`` runs record nothing:
their figures are smoke checks.

``python -m bench.results`` rewrites the tables between ``<!-- results:<table> -->`` and
``<!-- /results:<table> -->`` in ``docs/results.md`` (tables ``speed``, ``strength``, ``baselines``:
the service against an outside baseline, one row per game, ``zero``: a run from nothing against
reference bots, one row per minute and player, ``zero_own``: the same for a game without those
bots, against random and the run's v0, and ``exploitability_<game>``: a run from nothing in
Leduc or Kuhn poker by its exploitability beside NFSP and CFR+, one row per champion; their
cells in :attr:`Figure.cells`) and in
``README.md`` (table ``headline``: the figures that carry a ``headline`` label), leaving the text
around them alone; ``--check`` only says whether they are up to date (exit status 1 if not);
``--root DIR`` reads ``DIR/docs/results/`` and rewrites the documents under ``DIR`` instead of
this repository's (the tests use it). ``OMEGA_RESULTS_DIR`` moves where :func:`record` writes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
POKER = ("exploitability_leduc_poker", "exploitability_kuhn_poker")  # a table per game
TABLES = ("speed", "strength", "baselines", "zero", "zero_own", *POKER)
# one row per figure, its cells after the game (Figure.cells)
CELL_TABLES = ("baselines", "zero", "zero_own", *POKER)
# tables one run measures whole: a recording replaces all of the benchmark's figures there
WHOLE_TABLES = ("speed", *POKER)
DOCUMENTS = {"docs/results.md": TABLES, "README.md": ("headline",)}
# the tables list the benchmarks bottom-up: the engines, search, the network, training, the service
ORDER = (
    "bench_small_games",
    "bench_mexican_train",
    "bench_officers",
    "bench_ismcts",
    "bench_smmcts",
    "bench_openspiel_search",
    "bench_batching",
    "bench_inference",
    "bench_runtime",
    "bench_threads",
    "bench_learner",
    "bench_learner_cuda",
    "bench_selfplay",
    "bench_fast",
    "bench_shards",
    "bench_tracking",
    "bench_service",
    "bench_champion",
    "bench_sprt",
    "bench_fleet",
    "bench_belief",
    "bench_value",
    "bench_leaf",
    "bench_ntuple",
    "bench_tuned",
    "bench_training",
    "bench_scaling",
    "bench_baselines",
    "bench_zero",
    "bench_poker_zero",
)
COLUMNS = {
    "speed": ("benchmark", "figure", "reference (same run)", "ratio / bar", "command", "measured"),
    "strength": ("match", "figure (95%)", "against", "bar", "command", "measured"),
    "headline": ("what", "figure", "against", "ratio / bar"),
    # the service against an outside baseline at equal wall-clock time (bench_baselines): scores
    # of the first-named side, 95% intervals; one row per game, its cells in Figure.cells
    "baselines": (
        "game",
        "minutes per side",
        "wall time (set-up included)",
        "service network vs heuristic",
        "service search vs heuristic",
        "PPO vs heuristic",
        "service network vs PPO",
        "service search vs PPO",
        "command",
        "measured",
    ),
    # a run from nothing (run=zero, bench_zero) at minutes of its training: its champion then,
    # as the search and as the network alone, against OpenSpiel's MCTSBot with random rollouts
    # (score, a draw a half, Wilson 95%; W-D-L), and tic-tac-toe's perfect-play test
    "zero": (
        "game",
        "minutes",
        "self-play games",
        "champion",
        "player",
        "vs MCTS-100",
        "vs MCTS-1000",
        "vs MCTS-10000 (perfect play: no loss)",
        "command",
        "measured",
    ),
    # the same for any other game (a user's own: bench_zero.references), against random and the
    # run's untrained v0 in the champion's seats of each deal: the champion's head-to-head score
    # and fair share (win share x players, 1.0 = par), Student-t 95% intervals by deal
    "zero_own": (
        "game",
        "minutes",
        "self-play games",
        "champion",
        "player",
        "vs random: score; fair share (95%, by deal)",
        "vs v0 (paired): score; fair share (95%, by deal)",
        "command",
        "measured",
    ),
    # a run from nothing in poker (run=zero, bench_poker_zero) by its exploitability (NashConv /
    # 2, exact): each champion at its promotion and at the run's end, the learner's latest
    # snapshot then, and OpenSpiel's NFSP and CFR+ at the same minutes (NFSP also at the same
    # self-play games)
    **dict.fromkeys(
        POKER,
        (
            "game",
            "minutes",
            "self-play games",
            "champion",
            "champion network",
            "champion search",
            "learner's latest snapshot, network",
            "NFSP at equal minutes",
            "NFSP at equal games",
            "CFR+ at equal minutes",
            "command",
            "measured",
        ),
    ),
}


@dataclass(frozen=True)
class Figure:
    """One figure of a benchmark, as the results tables show it (every field but ``name`` text)."""

    name: str  # what is measured, e.g. "ISMCTS sims/s, Leduc, 1 random rollout/leaf"
    figure: str  # the figure with its unit (and its 95% interval for a strength figure)
    reference: str = ""  # what it is compared with, measured in the same run
    ratio: str = ""  # figure / reference, or the bar it is held to
    command: str = ""  # the command that reproduces it
    table: str = "speed"  # "speed" or "strength"
    headline: str = ""  # a short label: the figure also goes into the README's small table
    cells: tuple[str, ...] = ()  # a CELL_TABLES row: its cells after the game (COLUMNS)


def results_dir() -> Path:
    return Path(os.environ.get("OMEGA_RESULTS_DIR", ROOT / "docs" / "results"))


def _commit() -> str:
    """The short commit of the tree, ``+dirty`` when it has changes ("unknown" outside git)."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("+dirty" if dirty else "")


def record(
    bench: str, figures: Sequence[Figure], *, quick: bool = False, whole: bool = False
) -> Path | None:
    """Write ``figures`` into ``<results dir>/<bench>.json`` (None and nothing written if quick).
    ``whole``: the run measures every figure of the benchmark (one run's curve), so they replace
    all the old ones, whatever their names."""
    if quick:
        print("(--quick: figures not recorded in docs/results/)")
        return None
    for f in figures:
        if f.table not in TABLES:
            raise ValueError(f"figure {f.name!r}: table must be one of {TABLES}, got {f.table!r}")
    path = results_dir() / f"{bench}.json"
    old = json.loads(path.read_text(encoding="utf-8"))["figures"] if path.exists() else []
    labels = {e["name"]: e.get("headline", "") for e in old}  # a rerun keeps its README label
    tables = {f.table for f in figures} & set(WHOLE_TABLES)
    old = [] if whole else [e for e in old if e.get("table", "speed") not in tables]
    stamp = {"date": dt.datetime.now(dt.UTC).date().isoformat(), "source": _commit()}
    new = {
        f.name: {**asdict(f), "headline": f.headline or labels.get(f.name, ""), **stamp}
        for f in figures
    }
    merged = [new.pop(e["name"], e) for e in old] + list(new.values())
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"bench": bench, "figures": merged}, indent=2, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"(figures recorded in {path}; python -m bench.results renders docs/results.md)")
    return path


def _order(path: Path) -> tuple[int, str]:
    name = path.stem
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


def load(directory: Path | None = None) -> list[dict[str, Any]]:
    """Every recorded figure, benchmark by benchmark (in ``ORDER``, then by name), in file order."""
    entries: list[dict[str, Any]] = []
    for path in sorted((directory or results_dir()).glob("*.json"), key=_order):
        data = json.loads(path.read_text(encoding="utf-8"))
        entries.extend({"bench": data["bench"], **e} for e in data["figures"])
    return entries


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_table(table: str, entries: Iterable[dict[str, Any]]) -> str:
    """The markdown table ``table`` (one of ``COLUMNS``) of ``entries``."""
    if table not in COLUMNS:
        raise ValueError(f"unknown table {table!r}; tables: {', '.join(COLUMNS)}")
    if table == "headline":  # speed rows first, then strength
        rows = [
            (e["headline"], e["figure"], e.get("reference", ""), e.get("ratio", ""))
            for e in sorted(entries, key=lambda e: e.get("table", "speed") != "speed")
            if e.get("headline")
        ]
    elif table in CELL_TABLES:  # the game is the name's last part
        rows = [
            (
                e["name"].rsplit(", ", 1)[-1],
                *e.get("cells", ()),
                f"`{e['command']}`" if e.get("command") else "",
                f"{e.get('date', '')}, {e.get('source', '')}".strip(", "),
            )
            for e in entries
            if e.get("table") == table
        ]
    else:
        rows = [
            (
                e["name"],
                e["figure"],
                e.get("reference", ""),
                e.get("ratio", ""),
                f"`{e['command']}`" if e.get("command") else "",
                f"{e.get('date', '')}, {e.get('source', '')}".strip(", "),
            )
            for e in entries
            if e.get("table", "speed") == table
        ]
    head = COLUMNS[table]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def update(text: str, tables: Iterable[str], entries: Sequence[dict[str, Any]]) -> str:
    """``text`` with each marked table replaced by its rendering (a missing marker is an error)."""
    for table in tables:
        pattern = re.compile(
            rf"(<!-- results:{table} -->\n).*?(<!-- /results:{table} -->)", re.DOTALL
        )
        if not pattern.search(text):
            raise ValueError(
                f"no '<!-- results:{table} -->' ... '<!-- /results:{table} -->' markers"
            )
        body = render_table(table, entries)
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    root = Path(args[args.index("--root") + 1]) if "--root" in args else ROOT
    entries = load(root / "docs" / "results")
    stale = []
    for rel, tables in DOCUMENTS.items():
        path = root / rel
        old = path.read_text(encoding="utf-8")
        new = update(old, tables, entries)
        if new != old:
            stale.append(rel)
            if not check:
                path.write_text(new, encoding="utf-8")
    if check:
        print(f"out of date: {', '.join(stale)}" if stale else "results tables up to date")
        return 1 if stale else 0
    print(f"rewrote {', '.join(stale)}" if stale else "results tables already up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
