"""The service's workers as pure classes: self-play chunks, candidate training, weights.

Each class does one job of DESIGN.md's data flow in one process; :mod:`omega_cluster.cluster`
wraps each in a Ray actor (a thin shell: same methods, same arguments) and
:mod:`omega_cluster.train.pipeline` drives them, with or without Ray.

* :class:`Weights` — a network version as a pickle-free payload (safetensors bytes) plus its
  version and persisted URI: what the driver puts in Ray's object store once per champion and
  every actor pulls at its next chunk boundary.
* :class:`SelfPlayWorker` — plays one *chunk* (a fixed number of games, seeded from the run seed
  and the chunk's global index) with the champion's weights and writes it as exactly one shard,
  named after the chunk. A chunk re-run after a crash first looks for its shard, so a game is
  never written twice.
* :class:`LearnerWorker` — reads the replay window, warm-starts from the champion, trains a
  candidate within KataGo's cap on samples per new row, and saves it as a checkpoint; its own
  state (optimizer, window position, counters) is checkpointed after every candidate so a
  restarted learner continues where it stopped.
"""

from __future__ import annotations

import json
import math
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from omega_cluster.config.build import (
    build_encoder,
    build_game,
    build_model,
    leaf_evaluator,
    learner_config,
    selfplay_config,
    uses_network,
)
from omega_cluster.config.schema import Settings
from omega_cluster.data import CorruptShardError, ShardStore, ShardWriter
from omega_cluster.games.chance import derive_seed
from omega_cluster.model.network import PolicyValueNet
from omega_cluster.search.evaluators import Evaluator
from omega_cluster.train.learner import Learner
from omega_cluster.train.selfplay import SelfPlay

__all__ = [
    "CandidateReport",
    "ChunkReport",
    "LearnerWorker",
    "SelfPlayWorker",
    "Weights",
    "chunk_writer_id",
]


@dataclass(frozen=True)
class Weights:
    """A network version in transit: safetensors bytes (never pickle), version and URI."""

    version: int
    uri: str  # the checkpoint directory it was saved to
    payload: bytes

    @classmethod
    def of(cls, model: PolicyValueNet, *, version: int, uri: str) -> Weights:
        state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
        return cls(version, uri, save_safetensors(state))

    def load_into(self, model: PolicyValueNet) -> None:
        model.load_state_dict(load_safetensors(self.payload))


def chunk_writer_id(chunk: int) -> str:
    """The shard writer id of chunk ``chunk``: its manifest entry names the chunk."""
    return f"chunk{chunk:08d}"


@dataclass(frozen=True)
class ChunkReport:
    """What one self-play chunk did."""

    chunk: int
    actor: int
    node: str
    version: int  # champion version that played
    games: int
    records: int
    shard: str  # manifest key of the chunk's shard ("" if the chunk had no record)
    decisions: int
    simulations: int
    seconds: float
    replayed: bool = False  # the shard already existed (a retried chunk): its games, not new ones

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0


class SelfPlayWorker:
    """Plays chunks of self-play games and writes each as one shard (module docstring)."""

    def __init__(self, settings: Settings, *, actor: int, store_uri: str) -> None:
        torch.set_num_threads(settings.cluster.torch_threads)
        self.settings = settings
        self.actor = actor
        self.node = f"{socket.gethostname()}:{os.getpid()}"
        self.game = build_game(settings)
        self.encoder = build_encoder(settings, self.game)
        self.model = build_model(settings, self.game, self.encoder)
        self.store = ShardStore(store_uri)
        self.version: int | None = None
        self._evaluator: Evaluator | None = None

    def _evaluator_for(self, weights: Weights) -> Evaluator:
        """The leaf evaluator with ``weights`` loaded (rebuilt only when the version changes)."""
        if self.version != weights.version or self._evaluator is None:
            if uses_network(self.settings.search.leaf):
                weights.load_into(self.model)
            self._evaluator = leaf_evaluator(self.settings, self.game, self.model, self.encoder)
            self.version = weights.version
        return self._evaluator

    def existing(self, chunk: int) -> ChunkReport | None:
        """The report of chunk ``chunk`` if its shard is already in the manifest (a retry).

        The failed attempt played and wrote those games but its report was lost (its actor
        died after the write), so this report counts them: the shard's distinct game ids. A
        shard that does not read back is quarantined and the chunk played again.
        """
        writer = chunk_writer_id(chunk)
        for entry in self.store.entries():
            if entry.writer_id == writer:
                try:
                    table = self.store.read(entry)
                except CorruptShardError as err:
                    self.store.quarantine(entry, f"retried chunk {chunk}: {err}")
                    return None
                games = len(pc.unique(table.column("game_id")))
                return ChunkReport(
                    chunk, self.actor, entry.node_id, max(entry.champion_versions, default=0),
                    games, entry.rows, entry.key, 0, 0, 0.0, replayed=True,
                )  # fmt: skip
        return None

    def play_chunk(
        self, weights: Weights, chunk: int, games: int, *, retry: bool = False
    ) -> ChunkReport:
        """Play ``games`` games with ``weights`` and write them as one shard."""
        if retry:
            found = self.existing(chunk)
            if found is not None:
                return found
        started = time.perf_counter()
        evaluator = self._evaluator_for(weights)
        seed = derive_seed(self.settings.run.seed, "chunk", chunk)
        config = selfplay_config(
            self.settings, games=games, seed=seed, champion_version=weights.version,
            actor=f"selfplay{self.actor}",
        )  # fmt: skip
        runner = SelfPlay(self.game, self.encoder, config, evaluator=evaluator)
        records = list(runner.play())
        if retry:  # the failed attempt may have written its shard while this one played
            found = self.existing(chunk)
            if found is not None:
                return found
        key = ""
        if records:
            writer = ShardWriter(self.store, writer_id=chunk_writer_id(chunk), node_id=self.node)
            key = writer.write(records).entry.key
        s = runner.stats
        return ChunkReport(
            chunk, self.actor, self.node, weights.version, s.games, len(records), key,
            s.decisions, s.simulations, time.perf_counter() - started,
        )  # fmt: skip


@dataclass(frozen=True)
class CandidateReport:
    """A trained candidate (or, with ``version`` None, why there was none yet)."""

    version: int | None
    parent: int
    uri: str
    steps: int
    metrics: dict[str, float] = field(default_factory=dict)  # losses, samples/s, window rows
    waiting: str = ""  # why no candidate was trained (not enough data)


class LearnerWorker:
    """Trains candidates from the replay window (module docstring)."""

    STATE = "learner"  # <run dir>/learner: the learner's own checkpoint

    def __init__(self, settings: Settings, *, run_dir: str | Path, store_uri: str) -> None:
        self.settings = settings
        self.run_dir = Path(run_dir)
        self.game = build_game(settings)
        self.encoder = build_encoder(settings, self.game)
        self.store = ShardStore(store_uri)
        state_dir = self.run_dir / self.STATE
        config = learner_config(settings, seed=derive_seed(settings.run.seed, "learner"))
        if (state_dir / "metadata.json").exists():
            self.learner = Learner.load(state_dir, game=self.game, encoder=self.encoder,
                                        config=config)  # fmt: skip
            counters = json.loads((state_dir / "counters.json").read_text())
        else:
            model = build_model(settings, self.game, self.encoder)
            self.learner = Learner(model, config, game=self.game, encoder=self.encoder)
            counters = {}
        self.samples = int(counters.get("samples", 0))
        self.window = self.learner.window(self.store, window_rows=settings.learner.window_rows)
        self.device = str(self.learner.device)

    @property
    def rows_seen(self) -> int:
        """Rows the window has read from the manifest over the run (kept in its position)."""
        return self.window.position.rows_seen

    def status(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "step": self.learner.step,
            "rows_seen": self.rows_seen,
            "samples": self.samples,
            "window_rows": self.window.rows,
        }

    def allowed_steps(self) -> int:
        """Steps the cap on samples per new row allows now (KataGo's train-per-data limit)."""
        cap = self.settings.learner.max_samples_per_row
        batch = self.settings.learner.batch_size
        wanted = self.settings.learner.steps_per_candidate
        if cap <= 0:
            return wanted
        budget = cap * self.rows_seen - self.samples
        return max(0, min(wanted, math.floor(budget / batch)))

    def train_candidate(self, champion: Weights, version: int) -> CandidateReport:
        """Warm-start from ``champion``, train, save as ``models/v<version>``."""
        self.window.refresh()
        lr = self.settings.learner
        # a waiting learner has still read the new rows: the async driver's back-pressure counts
        # them as read (else self-play stops for good while the window is short of min_rows)
        read = {"rows_seen": float(self.rows_seen), "window_rows": float(self.window.rows)}
        if self.window.rows < lr.min_rows:
            return CandidateReport(None, champion.version, "", 0, read,
                                   waiting=f"replay window holds {self.window.rows} rows, "
                                           f"needs {lr.min_rows}")  # fmt: skip
        steps = self.allowed_steps()
        if steps < 1:
            return CandidateReport(None, champion.version, "", 0, read,
                                   waiting=f"trained {self.samples} samples on {self.rows_seen} "
                                           f"rows: the cap is {lr.max_samples_per_row}/row")  # fmt: skip
        champion.load_into(self.learner.model)
        self.learner.version, self.learner.parent_version = version, champion.version
        stats = self.learner.train_steps(self.window, steps)
        self.samples += stats.steps * lr.batch_size
        metrics = {
            "loss": stats.loss,
            "policy_loss": stats.policy_loss,
            "value_loss": stats.value_loss,
            "samples_per_s": stats.samples_per_s,
            "window_rows": float(stats.window_rows),
            "rows_seen": float(self.rows_seen),
            "learner_step": float(self.learner.step),
        }
        uri = str(self.run_dir / "models" / f"v{version}")
        self.learner.save(uri, metrics=metrics)
        self.checkpoint()
        return CandidateReport(version, champion.version, uri, stats.steps, metrics)

    def checkpoint(self) -> None:
        """Save the learner's own state (weights, optimizer, window position, counters)."""
        state_dir = self.run_dir / self.STATE
        self.learner.save(state_dir)
        tmp = state_dir / "counters.json.tmp"
        tmp.write_text(json.dumps({"samples": self.samples}))
        os.replace(tmp, state_dir / "counters.json")
