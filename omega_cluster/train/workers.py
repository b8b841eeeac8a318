"""The service's workers as pure classes: self-play chunks, candidate training, weights.

Each class does one job of the data flow in docs/design.md in one process; :mod:`omega_cluster.cluster`
wraps each in a Ray actor (a thin shell: same methods, same arguments) and
:mod:`omega_cluster.pipeline.driver` drives them, with or without Ray.

* :class:`Weights` — a network version as a pickle-free payload (safetensors bytes) plus its
  version and persisted URI: what the driver puts in Ray's object store once per champion and
  every actor pulls at its next chunk boundary.
* :class:`SelfPlayWorker` — plays one *chunk* (a fixed number of games, seeded from the run seed
  and the chunk's global index) with the champion's weights and writes it as exactly one shard,
  named after the chunk. A chunk re-run after a crash first looks for its shard, so a game is
  never written twice.
* :class:`LearnerWorker` — trains ONE network continuously on the replay window (AlphaGo Zero,
  Leela Zero, KataGo): it starts from the first champion, and every candidate is a snapshot of
  that network after its next stint of steps, within KataGo's cap on samples per new row. The
  gate only decides which snapshot plays self-play and the anchors: a rejected candidate's steps
  are kept, so a gain that needs several stints of training is not thrown away. Its state
  (weights, optimizer, window position, counters) is checkpointed after every candidate so a
  restarted learner continues where it stopped.

Each worker takes its own frozen, picklable config (:class:`SelfPlayWorkerConfig`,
:class:`LearnerWorkerConfig`), built from the run's settings by the service layer
(:mod:`omega_cluster.wiring`); nothing here reads the Hydra settings. :class:`NetworkSpec` is how a
worker rebuilds the run's game, encoder and a freshly initialised network in its own process.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from omega_cluster.data import (
    CorruptShardError,
    DuplicateGamesError,
    ShardStore,
    ShardWriter,
    Slicing,
    count_distinct,
)
from omega_cluster.data.batch import table_to_batch
from omega_cluster.games.api import Game
from omega_cluster.games.chance import derive_seed
from omega_cluster.games.encoding import Encoder
from omega_cluster.games.fleet import Fleet, TableSlice, fleet_for
from omega_cluster.games.registry import make_game
from omega_cluster.model.checkpoint import CheckpointError
from omega_cluster.model.encoders import encoder_for
from omega_cluster.model.network import ModelConfig, PolicyValueNet
from omega_cluster.model.threads import pin_threads
from omega_cluster.players.leaf_spec import LeafSpec
from omega_cluster.train._slices import slice_metrics
from omega_cluster.train._tables import Table, table_games
from omega_cluster.train.config import LearnerConfig, SelfPlayConfig
from omega_cluster.train.learner import Learner
from omega_cluster.train.selfplay import SelfPlay

__all__ = [
    "CandidateReport",
    "ChunkReport",
    "LearnerWorker",
    "LearnerWorkerConfig",
    "NetworkSpec",
    "SelfPlayWorker",
    "SelfPlayWorkerConfig",
    "Weights",
    "chunk_writer_id",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NetworkSpec:
    """The run's game (by name and parameters), its network's sizes and the initial weights' seed:
    enough for any process to rebuild the game, the encoder and the first champion's network;
    and the run's tables (its fleet), which one network plays all of."""

    game: str
    game_params: Mapping[str, Any]
    model: ModelConfig
    init_seed: int = 0
    fleet: Fleet | None = None  # the run's tables (None: the one table of game_params)

    def build_game(self) -> Game:
        """The run's own table (``game_params``): the encoder and the network's sizes."""
        return make_game(self.game, **dict(self.game_params))

    def tables(self) -> Fleet:
        """The run's tables: its fleet, or the one table of ``game_params``."""
        return self.fleet if self.fleet is not None else fleet_for(self.game, self.game_params)

    def table_games(self) -> list[tuple[TableSlice, Game, Encoder]]:
        """Every table's game and encoder, checked to share the layout of the network's own
        table (a :class:`~omega_cluster.games.fleet.FleetError` names the two that differ)."""
        return table_games(self.tables(), like=self.build_game())

    @staticmethod
    def build_encoder(game: Game) -> Encoder:
        return encoder_for(game)

    def fresh_model(self, encoder: Encoder) -> PolicyValueNet:
        """A freshly initialised network, seeded by ``init_seed`` (torch's global rng is kept)."""
        state = torch.random.get_rng_state()
        torch.manual_seed(self.init_seed)
        try:
            return PolicyValueNet(self.model, encoder.observation_size,
                                  encoder.action_feature_size)  # fmt: skip
        finally:
            torch.random.set_rng_state(state)


@dataclass(frozen=True)
class SelfPlayWorkerConfig:
    """What a :class:`SelfPlayWorker` plays: the network, the search leaf and the self-play
    config of a chunk (``games``, ``seed``, ``champion_version`` and ``actor`` are set per chunk;
    ``concurrent_games`` is the most games in flight)."""

    network: NetworkSpec
    leaf: LeafSpec
    selfplay: SelfPlayConfig
    run_seed: int = 0  # a chunk's seed derives from it and the chunk's index
    torch_threads: int = 1

    def chunk_config(
        self, *, games: int, seed: int, champion_version: int, actor: str
    ) -> SelfPlayConfig:
        s = self.selfplay
        return dataclasses.replace(s, games=games, concurrent_games=min(s.concurrent_games, games),
                                   seed=seed, champion_version=champion_version, actor=actor)  # fmt: skip


@dataclass(frozen=True)
class LearnerWorkerConfig:
    """What a :class:`LearnerWorker` trains: the network, the learner config and the replay
    window's rules (its size, the rows it needs first, the cap on samples per new row, and for
    a run over a mix of tables the mix: its slices' losses are reported, and with
    ``balance_slices`` each slice gets its weight's share of the samples)."""

    network: NetworkSpec
    learner: LearnerConfig
    window_rows: int
    min_rows: int
    max_samples_per_row: float = 0.0  # KataGo's train-per-data cap (0: no cap)
    fleet: Fleet | None = None  # the run's tables (None or one table: no per-slice figures)
    balance_slices: bool = False  # sample each slice in proportion to its fleet weight

    def slicing(self) -> Slicing | None:
        """How the replay window labels (and balances) slices; None for a run of one table."""
        if self.fleet is None or not self.fleet.mixed:
            return None
        weights = self.fleet.weights() if self.balance_slices else None
        return Slicing(self.fleet.key_of, weights)


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
    torch_threads: int = (
        0  # torch's intra-op threads when the chunk ended (0: replayed, not played)
    )
    search_path: str = ""  # "compiled", or "python: <why the compiled search did not apply>"

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0


class SelfPlayWorker:
    """Plays chunks of self-play games and writes each as one shard (module docstring)."""

    def __init__(self, config: SelfPlayWorkerConfig, *, actor: int, store_uri: str) -> None:
        pin_threads(config.torch_threads)
        self.config = config
        self.actor = actor
        self.node = f"{socket.gethostname()}:{os.getpid()}"
        self.game = config.network.build_game()
        self.encoder = config.network.build_encoder(self.game)
        self.model = config.network.fresh_model(self.encoder)
        self.fleet = config.network.tables()
        self._games = config.network.table_games()  # every table's game and encoder
        self.store = ShardStore(store_uri)
        self.version: int | None = None
        self._tables: list[Table] = []

    def _tables_for(self, weights: Weights) -> list[Table]:
        """Every table with its leaf evaluator on the one network, ``weights`` loaded (rebuilt
        only when the version changes)."""
        if self.version != weights.version or not self._tables:
            if self.config.leaf.uses_network:
                weights.load_into(self.model)
            leaf = self.config.leaf
            self._tables = [Table(s.key, game, encoder, leaf.build(game, self.model, encoder))
                            for s, game, encoder in self._games]  # fmt: skip
            self.version = weights.version
        return self._tables

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
                games = count_distinct(table, "game_id")
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
        tables = self._tables_for(weights)
        seed = derive_seed(self.config.run_seed, "chunk", chunk)
        config = self.config.chunk_config(games=games, seed=seed, champion_version=weights.version,
                                          actor=f"selfplay{self.actor}")  # fmt: skip
        runner = SelfPlay.over_fleet(self.fleet, tables, config)
        records = list(runner.play())
        if retry:  # the failed attempt may have written its shard while this one played
            found = self.existing(chunk)
            if found is not None:
                return found
        key = ""
        s = runner.stats
        if records:
            writer = ShardWriter(self.store, writer_id=chunk_writer_id(chunk), node_id=self.node)
            try:
                key = writer.write(records).entry.key
            except DuplicateGamesError as err:  # quarantined, not committed: nothing new stored
                found = self.existing(chunk) if retry else None
                if found is not None:  # the failed attempt's shard holds them: report it
                    return found
                log.warning("self-play chunk %d: %s", chunk, err)
                return ChunkReport(
                    chunk, self.actor, self.node, weights.version, 0, 0, "", s.decisions,
                    s.simulations, time.perf_counter() - started,
                    torch_threads=torch.get_num_threads(), search_path=runner.search_path,
                )  # fmt: skip
        return ChunkReport(
            chunk, self.actor, self.node, weights.version, s.games, len(records), key,
            s.decisions, s.simulations, time.perf_counter() - started,
            torch_threads=torch.get_num_threads(),
            search_path=runner.search_path,
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

    def __init__(self, config: LearnerWorkerConfig, *, run_dir: str | Path, store_uri: str) -> None:
        self.config = config
        self.run_dir = Path(run_dir)
        self.game = config.network.build_game()
        self.encoder = config.network.build_encoder(self.game)
        self.store = ShardStore(store_uri)
        state_dir = self.run_dir / self.STATE
        learner = config.learner
        if (state_dir / "metadata.json").exists():
            self.learner = Learner.load(state_dir, game=self.game, encoder=self.encoder,
                                        config=learner)  # fmt: skip
            counters = _read_counters(state_dir / "counters.json")
        else:
            model = config.network.fresh_model(self.encoder)
            self.learner = Learner(model, learner, game=self.game, encoder=self.encoder)
            counters = {}
        self.samples = int(counters.get("samples", 0))
        self.window = self.learner.window(
            self.store, window_rows=config.window_rows, slicing=config.slicing()
        )
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
        cap = self.config.max_samples_per_row
        batch = self.config.learner.batch_size
        wanted = self.config.learner.steps_per_call
        if cap <= 0:
            return wanted
        budget = cap * self.rows_seen - self.samples
        return max(0, min(wanted, math.floor(budget / batch)))

    def train_candidate(self, champion: Weights, version: int) -> CandidateReport:
        """Train the learner's network one more stint and save it as ``models/v<version>``.

        The network starts from ``champion`` only before its first step (the run's v0); after
        that it carries its own weights and optimizer state from candidate to candidate, whatever
        the gate decided (module docstring)."""
        added = self.window.refresh()
        cfg = self.config
        # a waiting learner has still read the new rows: the async driver's back-pressure counts
        # them as read (else self-play stops for good while the window is short of min_rows)
        read = {"rows_seen": float(self.rows_seen), "window_rows": float(self.window.rows)}
        if self.window.rows < cfg.min_rows:
            return CandidateReport(None, champion.version, "", 0, read,
                                   waiting=f"replay window holds {self.window.rows} rows, "
                                           f"needs {cfg.min_rows}")  # fmt: skip
        steps = self.allowed_steps()
        if steps < 1:
            return CandidateReport(None, champion.version, "", 0, read,
                                   waiting=f"trained {self.samples} samples on {self.rows_seen} "
                                           f"rows: the cap is {cfg.max_samples_per_row}/row")  # fmt: skip
        if self.learner.step == 0:
            champion.load_into(self.learner.model)
        heldout = self.heldout_losses(added)  # before the network has seen those games
        self.learner.version, self.learner.parent_version = version, champion.version
        stats = self.learner.train_steps(self.window, steps)
        self.samples += stats.steps * cfg.learner.batch_size
        metrics = {
            "loss": stats.loss,
            "policy_loss": stats.policy_loss,
            "value_loss": stats.value_loss,
            "samples_per_s": stats.samples_per_s,
            "window_rows": float(stats.window_rows),
            "rows_seen": float(self.rows_seen),
            "learner_step": float(self.learner.step),
        }
        metrics.update(stats.head_metrics())  # belief/critic losses, explained variances
        metrics.update(heldout)
        metrics.update(slice_metrics(stats.slices, stats.samples))
        uri = str(self.run_dir / "models" / f"v{version}")
        self.learner.save(uri, metrics=metrics)
        self.checkpoint()
        return CandidateReport(version, champion.version, uri, stats.steps, metrics)

    def heldout_losses(self, added: int) -> dict[str, float]:
        """The network's losses on the newest ``added`` rows of the window, read before it trains
        on them: games it has never seen, so their value loss measures what generalises (the
        training batches' loss also falls as the network memorises deals). ``heldout/<loss>``;
        empty when no row was added."""
        rows = min(added, HELDOUT_ROWS)
        if rows < 1:
            return {}
        table = self.window.table()
        fresh = table.slice(table.num_rows - rows, rows)
        figures = self.learner.evaluate(table_to_batch(fresh, validate=False))
        keep = ("policy_loss", "value_loss", "value_ev")
        return {f"heldout/{k}": v for k, v in figures.items() if k in keep}

    def checkpoint(self) -> None:
        """Save the learner's own state (weights, optimizer, window position, counters)."""
        state_dir = self.run_dir / self.STATE
        self.learner.save(state_dir)
        tmp = state_dir / "counters.json.tmp"
        tmp.write_text(json.dumps({"samples": self.samples}))
        os.replace(tmp, state_dir / "counters.json")


HELDOUT_ROWS = 4096  # the most fresh rows a candidate's held-out losses are measured on


def _read_counters(path: Path) -> dict[str, Any]:
    """The learner's counters beside its checkpoint (CheckpointError naming the file if bad)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as err:  # ValueError: bad JSON, bytes that are not UTF-8
        raise CheckpointError(f"learner state {path} is unreadable ({err})") from err
    if not isinstance(data, dict) or not isinstance(data.get("samples", 0), int):
        raise CheckpointError(
            f"learner state {path} is not {{'samples': <int>}}: {str(data)[:80]!r}"
        )
    return data
