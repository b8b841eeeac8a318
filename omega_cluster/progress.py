"""The live display of a training run (rich): games, shards, learner step, champion and its Elo.

On a terminal, a panel redrawn in place at most a few times a second; elsewhere (a Ray job's log,
CI, a pipe) one plain line per event, so the log reads as a history of the run.

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

__all__ = ["ProgressDisplay"]


class ProgressDisplay(Observer):
    """A rich live panel (terminal) or one log line per event (otherwise)."""

    def __init__(self, *, console: Console | None = None, live: bool | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.live_enabled = self.console.is_terminal if live is None else live
        self._live: Live | None = None
        self._started = time.monotonic()
        self._fields: dict[str, Any] = {
            "games": 0, "records": 0, "shards": 0, "learner step": 0, "loss": "-",
            "champion": "v0", "rating": "-", "chained elo": "1000", "gate": "-", "decisions": 0,
            "games/s": "-",
        }  # fmt: skip

    def _table(self) -> Table:
        table = Table(title="omega-cluster train", show_header=False, expand=False)
        table.add_column(style="bold")
        table.add_column()
        elapsed = time.monotonic() - self._started
        table.add_row("elapsed", f"{elapsed / 60:.1f} min")
        for key, value in self._fields.items():
            table.add_row(key, str(value))
        return table

    def _update(self, line: str) -> None:
        if self._live is not None:
            self._live.update(self._table())
        else:
            stamp = time.monotonic() - self._started
            self.console.print(f"[{stamp:7.1f} s] {line}", highlight=False)

    def on_start(self, pipeline: Pipeline) -> None:
        st = pipeline.state
        champion = pipeline.registry.champion
        self._fields.update(games=st.games, records=st.records, shards=st.shards,
                            decisions=st.decisions)  # fmt: skip
        if champion is not None:
            self._fields["champion"] = f"v{champion.version}"
            self._fields["chained elo"] = f"{champion.elo:.0f}" if champion.elo is not None else "-"
        if self.live_enabled:
            self._live = Live(self._table(), console=self.console, refresh_per_second=4)
            self._live.start()
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
        if self._live is not None:
            self._live.stop()
            self._live = None
