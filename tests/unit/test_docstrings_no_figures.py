"""Docstrings under ``omega_cluster/`` say what a module owns and why, not what it measured.

A measured figure (a timing, a speed-up, an interval, a fair share, an Elo, a study's game
count) goes stale in a docstring; the benches record theirs in ``docs/results/*.json``, which
``python -m bench.results`` renders into ``docs/results.md``. A docstring may point at the
bench that measures something ("measured by ``bench/bench_ismcts.py``"), not quote its numbers.

:data:`FIGURE` is what reads as a measurement; :data:`ALLOWED` the few lines where such a
pattern is not one (a confidence level, a mathematical fact), each by its file and text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "omega_cluster"

FIGURE = re.compile(
    r"""(
      \d(?:[\d,]*\d)?(?:\.\d+)?\s*(?:µs|us|ms|ns)\b              # a timing
     |\d(?:\.\d+)?(?:×|x\b)(?!\d)                                   # a speed-up: 10×, 3.2x
     |(?:times|x|×)\s+(?:faster|slower|quicker)
     |\d(?:\.\d+)?\s*%                                            # a share of time or of games
     |\[\s*-?\d*\.\d+\s*,\s*-?\d*\.\d+\s*\]                       # an interval [0.48, 0.52]
     |(?-i:[+−-]?\d+(?:\.\d+)?\s*Elo\b|\bElo\s*[+−-]?\d)          # an Elo figure
     |\bmeasured\b[^.\n]*\d                                       # "measured ... 0.61"
     |\d\.\d+\s*(?:±|\+-)                                         # an estimate ± its error
     |(?<![\w.-])\d[\d,]*\d\s+(?:[\w-]+\s+){0,3}(?:games|deals|rounds|positions)\b  # a study
     |\d*\.\d+\s+(?:mean\s+)?fair\ share|fair\ share\s+(?:of\s+)?(?:only\s+)?~?\d
     |\d(?:\.\d+)?\s*(?:s|min|seconds|minutes)\s+(?:per|a|an|each)\b
     |(?:games?|positions?|leaves|rows)\s*/\s*(?:s|min)\b           # a rate
     |(?:~|\babout\s+|\bonly\s+)\d                                # an approximate figure
     |\(\d+\s*[-–]\s*\d+\s*s\)                                    # a time range (10-25 s)
     |\b(?:scored|won|reaches|reached|gives|gave)\s+(?:>\s*|~)?[+-]?\d*\.\d+  # a score
    )""",
    re.VERBOSE | re.IGNORECASE,
)

# (file under omega_cluster/, text in the line): a pattern of FIGURE that is no measurement
ALLOWED: tuple[tuple[str, str], ...] = (
    ("*", "95% interval"),  # the confidence level of the reports, not a result
    ("*", "95% quantile"),
    ("eval/sprt.py", "the sample variance is ~0"),  # after one win: a fact of the estimator
    ("eval/report.py", "fair share 1.0)"),  # par, by definition
)


def _docstrings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(first line, text) of the module's, its classes' and its functions' docstrings."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                text = first.value.value
                if isinstance(text, str):
                    yield first.lineno, text


def _allowed(name: str, line: str) -> bool:
    return any(where in ("*", name) and text in line for where, text in ALLOWED)


def figure_lines(package: Path = PACKAGE) -> dict[str, list[str]]:
    """Per module (path under ``package``), its docstring lines that quote a measurement."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        for first, text in _docstrings(ast.parse(path.read_text(encoding="utf-8"))):
            for offset, line in enumerate(text.splitlines()):
                if FIGURE.search(line) and not _allowed(name, line):
                    found.setdefault(name, []).append(f"{first + offset}: {line.strip()}")
    return found


def test_no_docstring_quotes_a_measurement() -> None:
    found = figure_lines()
    listing = "\n".join(
        f"omega_cluster/{name}:{line}" for name, rows in found.items() for line in rows
    )
    assert not found, (
        "docstrings quote measured figures (move them to a bench's docs/results, or drop them; "
        f"a pointer to the bench is fine):\n{listing}"
    )


def test_the_pattern_catches_figures_and_passes_prose() -> None:
    for figure in (
        "~6.5 µs a simulation",
        "the same moves, ~10× faster",
        "fair share 1.34 [1.26, 1.41]",
        "adds +0.001 ± 0.005 over",
        "2,400 games on 600 fresh deals",
        "selection ~35 %",
        "+35 Elo over the champion",
        "(10-25 s)",
        "scored 0.440 against Commander",
        "beat the defaults by > 0.06 mean fair share over 800 seat-rotated double-12 single rounds",
        "a fair share of only ~1.11",
    ):
        assert FIGURE.search(figure), figure
    for prose in (
        "H0 'Elo ≤ elo0' against H1",
        "a GSPRT (Lee & Sidford 2021)",
        "measured by bench/bench_ismcts.py",
        "the default 1 thread",
        "min_rows <= window_rows, elo0 < elo1",
    ):
        assert not FIGURE.search(prose), prose
