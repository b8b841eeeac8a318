"""Text and rich-table views of an arena :class:`~omega_cluster.eval.arena.MatchResult`.

Split from :mod:`omega_cluster.eval.arena` (which re-exports these names) so the match loop stays
short.
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from omega_cluster.eval.arena import MatchResult
    from omega_cluster.eval.stats import ConfidenceInterval

__all__ = ["format_table", "print_table", "results_table"]


def results_table(result: MatchResult) -> Table:
    """The match as a rich table: one row per player, intervals as ± half-widths."""
    level = f"{result.players[0].fair_share_ci.level:.0%}" if result.players else "95%"
    show_score = any(r.scores != r.returns for r in result.records)
    seats = "seats rotated" if result.rotate_seats else "fixed seats"
    table = Table(
        title=f"{result.game} · {result.num_players} players · {result.games} games · "
        f"seed {result.seed} · {seats}",
        caption=_caption(result, level),
    )
    table.add_column("player")
    table.add_column("wins", justify="right")
    table.add_column(f"win rate [{level}]", justify="right")
    table.add_column("fair share", justify="right")
    table.add_column("mean return", justify="right")
    if show_score:
        table.add_column("mean score", justify="right")
    count_keys = list(result.players[0].counts) if result.players else []
    for key in count_keys:
        table.add_column(key, justify="right")
    for p in result.players:
        row = [
            p.label,
            f"{p.wins:g}",
            f"{p.win_rate:.3f} [{p.win_rate_ci.low:.3f}, {p.win_rate_ci.high:.3f}]",
            _pm(p.fair_share_ci),
            _pm(p.return_ci),
        ]
        if show_score:
            row.append(_pm(p.score_ci))
        row.extend(f"{p.counts[k]:.3g}" for k in count_keys)
        table.add_row(*row)
    return table


def format_table(result: MatchResult, *, width: int = 120) -> str:
    """The results table as plain text (no colours), e.g. for logs and tests."""
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False)
    console.print(results_table(result))
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    return text


def wide_console() -> Console:
    """A stdout console; when stdout is not a terminal (a pipe, a log file, CI) it is 140 columns
    wide instead of rich's 80, so result tables are not folded."""
    return Console() if sys.stdout.isatty() else Console(width=140)


def print_table(result: MatchResult, *, console: Console | None = None) -> None:
    """Print the results table to ``console`` (default: stdout)."""
    (console or wide_console()).print(results_table(result))


def _pm(ci: ConfidenceInterval) -> str:
    return f"{ci.estimate:.3f} ± {ci.half_width:.3f}"


def _caption(result: MatchResult, level: str) -> str:
    text = (
        f"fair share = {result.num_players} × mean win share (1.0 is par); ± is the {level} "
        f"t-interval half-width; {result.elapsed_s:.1f}s"
    )
    if not result.balanced:
        text += (
            f"\nseats unbalanced: {result.games} games is not a multiple of "
            f"{result.num_players} rotations"
        )
    return text
