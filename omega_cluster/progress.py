"""The live displays of the long commands (rich): :class:`ProgressDisplay` for a training run
(games, shards, learner step, champion and its Elo) and :class:`BaselineProgress` for
``omega-cluster baseline`` (its phase, each PPO iteration, the time left of its limit).

Both are a :class:`LivePanel`: on a terminal, a table redrawn in place a few times a second
(rebuilt at each refresh, so its clock runs between events: a long iteration still shows time
passing); elsewhere (a Ray job's log, CI, a pipe) one plain line per event, so the log reads as a
history of the run.

In the service layer (next to :mod:`omega_cluster.service`): it observes the pipeline's events of
both training (chunks, candidates) and evaluation (gate decisions, anchors).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from omega_cluster.eval.anchors import AnchorReport
from omega_cluster.eval.gatekeeper import GateOutcome
from omega_cluster.pipeline.driver import Observer, Pipeline, PipelineState
from omega_cluster.train.workers import CandidateReport, ChunkReport

__all__ = ["BaselineProgress", "LivePanel", "ProgressDisplay"]


class LivePanel:
    """Named fields as a rich live panel (terminal) or one log line per event (otherwise).

    ``limit_s``: a wall-clock limit counted from ``started`` (``time.monotonic()``; default now),
    shown as the time left.
    """

    def __init__(
        self,
        title: str,
        fields: dict[str, Any],
        *,
        console: Console | None = None,
        live: bool | None = None,
        started: float | None = None,
        limit_s: float | None = None,
    ) -> None:
        self.console = console or Console(stderr=True)
        self.live_enabled = self.console.is_terminal if live is None else live
        self.title = title
        self._live: Live | None = None
        self._started = time.monotonic() if started is None else started
        self._limit_s = limit_s
        self._fields = fields

    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def left(self) -> float | None:
        """Seconds left of the limit (negative past it; None without one)."""
        return None if self._limit_s is None else self._limit_s - self.elapsed()

    def _table(self) -> Table:
        table = Table(title=self.title, show_header=False, expand=False)
        table.add_column(style="bold")
        table.add_column()
        table.add_row("elapsed", f"{self.elapsed() / 60:.1f} min")
        left = self.left()
        if left is not None:
            table.add_row("left", f"{max(left, 0.0) / 60:.1f} min")
        for key, value in self._fields.items():
            table.add_row(key, str(value))
        return table

    def _open(self) -> None:
        if self.live_enabled and self._live is None:
            self._live = Live(console=self.console, refresh_per_second=4,
                              get_renderable=self._table)  # fmt: skip
            self._live.start()

    def _update(self, line: str) -> None:
        if self._live is not None:
            self._live.refresh()
        else:  # one line, never wrapped (a log is read and grepped line by line)
            self.console.print(f"[{self.elapsed():7.1f} s] {line}", highlight=False,
                               soft_wrap=True)  # fmt: skip

    def close(self) -> None:
        """Stop the live panel (nothing to do off a terminal or once stopped)."""
        if self._live is not None:
            self._live.stop()
            self._live = None


class BaselineProgress(LivePanel):
    """``omega-cluster baseline``: Ray's start and RLlib's build, then one event per iteration,
    against the command's wall-clock limit."""

    def __init__(self, baseline: str, game: str, *, minutes: float, started: float,
                 console: Console | None = None, live: bool | None = None) -> None:  # fmt: skip
        fields: dict[str, Any] = {
            "game": game, "phase": "starting Ray, building RLlib's PPO", "iteration": 0,
            "env steps": 0, "episodes": 0, "main return": "-", "loss": "-", "last iteration": "-",
        }  # fmt: skip
        super().__init__(f"omega-cluster baseline {baseline}", fields, console=console,
                         live=live, started=started, limit_s=minutes * 60.0)  # fmt: skip
        self._minutes = minutes

    def start(self) -> None:
        self._open()
        self._update(f"{self.title} on {self._fields['game']}, limit {self._minutes:g} min: "
                     "starting Ray and building RLlib's PPO")  # fmt: skip

    def built(self) -> None:
        self._fields["phase"] = "training"
        self._update(f"built in {self.elapsed():.1f} s; training")

    def iteration(self, summary: dict[str, float]) -> None:
        step, seconds = int(summary["iteration"]), summary["seconds"]
        self._fields.update({
            "iteration": step, "env steps": int(summary["env_steps"]),
            "episodes": int(summary["episodes"]), "main return": f"{summary['main_return_mean']:.3f}",
            "loss": f"{summary['total_loss']:.3f}", "last iteration": f"{seconds:.1f} s",
        })  # fmt: skip
        left = max(self.left() or 0.0, 0.0)
        self._update(f"iteration {step}: {int(summary['env_steps'])} env steps, "
                     f"{int(summary['episodes'])} episodes, main return "
                     f"{summary['main_return_mean']:.3f}, loss {summary['total_loss']:.3f} "
                     f"({seconds:.1f} s; {left:.0f} s left)")  # fmt: skip

    def stop(self, reason: str) -> None:
        self._fields["phase"] = reason
        self._update(f"stopped: {reason}")
        self.close()


class ProgressDisplay(LivePanel, Observer):
    """A training run's panel (module docstring)."""

    def __init__(self, *, console: Console | None = None, live: bool | None = None) -> None:
        fields: dict[str, Any] = {
            "games": 0, "records": 0, "shards": 0, "learner step": 0, "loss": "-",
            "champion": "v0", "rating": "-", "chained elo": "1000", "gate": "-", "decisions": 0,
            "games/s": "-",
        }  # fmt: skip
        super().__init__("omega-cluster train", fields, console=console, live=live)

    def on_start(self, pipeline: Pipeline) -> None:
        st = pipeline.state
        champion = pipeline.registry.champion
        self._fields.update(games=st.games, records=st.records, shards=st.shards,
                            decisions=st.decisions)  # fmt: skip
        if champion is not None:
            self._fields["champion"] = f"v{champion.version}"
            self._fields["chained elo"] = f"{champion.elo:.0f}" if champion.elo is not None else "-"
        self._open()
        self._update(f"run {pipeline.paths.root} ({pipeline.settings.cluster.mode} mode, "
                     f"{len(pipeline.backend.selfplay)} self-play actors)")  # fmt: skip

    def on_chunk(self, report: ChunkReport, state: PipelineState) -> None:
        elapsed = max(time.monotonic() - self._started, 1e-9)
        self._fields.update(games=state.games, records=state.records, shards=state.shards,
                            **{"games/s": f"{state.games / elapsed:.2f}"})  # fmt: skip
        self._update(f"chunk {report.chunk} (actor {report.actor}, champion v{report.version}): "
                     f"{report.games} games, {report.records} records in {report.seconds:.1f} s")  # fmt: skip

    def on_candidate(self, report: CandidateReport, state: PipelineState) -> None:
        if report.version is None:
            self._update(f"learner waits: {report.waiting}")
            return
        m = report.metrics
        self._fields["learner step"] = int(m.get("learner_step", 0))
        self._fields["loss"] = f"{m.get('loss', float('nan')):.3f}"
        self._update(f"candidate v{report.version} (from v{report.parent}): {report.steps} steps, "
                     f"loss {m.get('loss', float('nan')):.3f} (value "
                     f"{m.get('value_loss', float('nan')):.3f})")  # fmt: skip

    def on_gate(self, outcome: GateOutcome, row: dict[str, Any], state: PipelineState) -> None:
        self._fields["decisions"] = state.decisions
        self._fields["gate"] = f"v{outcome.candidate} {outcome.verdict} ({outcome.score:.2f})"
        if outcome.promoted:
            self._fields["champion"] = f"v{outcome.candidate}"
            self._fields["chained elo"] = f"{row['elo']:.0f} [{row['low']:.0f}, {row['high']:.0f}]"
        self._update(f"gate v{outcome.candidate} vs v{outcome.champion}: {outcome.verdict}, "
                     f"score {outcome.score:.3f} [{outcome.score_low:.3f}, "
                     f"{outcome.score_high:.3f}] over {outcome.games} games — {outcome.reason}")  # fmt: skip

    def on_anchors(self, report: AnchorReport, state: PipelineState) -> None:
        text = ", ".join(f"{r.objective} {r.kind} {r.fit.rating:.0f} [{r.fit.low:.0f}, "
                         f"{r.fit.high:.0f}]" for r in report.ratings)  # fmt: skip
        self._fields["rating"] = text  # anchored: against the fixed anchors' Elo
        self._update(f"champion v{report.version} rated against the anchors: {text}")

    def on_stop(self, state: PipelineState, reason: str) -> None:
        self._update(f"stopped: {reason}; {state.decisions} decisions, {state.promotions} "
                     f"promotions, {state.games} games")  # fmt: skip
        self.close()
