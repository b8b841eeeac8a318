"""List the modules and functions over the size limits of the codebase's style.

A module is over when it has more than ``--module-lines`` lines (400); a function (or method)
is over when it spans more than ``--function-lines`` lines (60), counted from its ``def`` line
to its last line, docstring included (decorators not counted). Run from the repository root::

    python scripts/sizes.py                 # omega_cluster/
    python scripts/sizes.py omega_cluster/train omega_cluster/cli.py --summary

It prints one line per module and per function over the limit, longest first, and the two
counts at the end; ``--summary`` prints only the counts.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def _files(root: Path) -> list[Path]:
    """``root`` itself if it is a file, else every ``.py`` file under it."""
    return [root] if root.is_file() else sorted(root.rglob("*.py"))


def module_sizes(root: Path) -> list[tuple[int, str]]:
    """(line count, path) of every ``.py`` file under ``root``."""
    return [
        (len(path.read_text(encoding="utf-8").splitlines()), str(path)) for path in _files(root)
    ]


def function_sizes(root: Path) -> list[tuple[int, str]]:
    """(line count, "path:line qualified.name") of every function under ``root``."""
    out: list[tuple[int, str]] = []
    for path in _files(root):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out.extend(_walk(tree, str(path), ""))
    return out


def _walk(node: ast.AST, path: str, prefix: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            name = f"{prefix}{child.name}"
            end = child.end_lineno or child.lineno
            out.append((end - child.lineno + 1, f"{path}:{child.lineno} {name}"))
            out.extend(_walk(child, path, f"{name}."))
        elif isinstance(child, ast.ClassDef):
            out.extend(_walk(child, path, f"{prefix}{child.name}."))
        else:
            out.extend(_walk(child, path, prefix))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", default=["omega_cluster"])
    parser.add_argument("--module-lines", type=int, default=400)
    parser.add_argument("--function-lines", type=int, default=60)
    parser.add_argument("--summary", action="store_true", help="print only the two counts")
    args = parser.parse_args()
    modules: list[tuple[int, str]] = []
    functions: list[tuple[int, str]] = []
    for root in map(Path, args.roots):
        modules += [m for m in module_sizes(root) if m[0] > args.module_lines]
        functions += [f for f in function_sizes(root) if f[0] > args.function_lines]
    if not args.summary:
        print(f"modules over {args.module_lines} lines:")
        for lines, where in sorted(modules, reverse=True):
            print(f"  {lines:5d}  {where}")
        print(f"functions over {args.function_lines} lines:")
        for lines, where in sorted(functions, reverse=True):
            print(f"  {lines:5d}  {where}")
    print(
        f"{len(modules)} modules > {args.module_lines} lines, "
        f"{len(functions)} functions > {args.function_lines} lines"
    )


if __name__ == "__main__":
    main()
