"""The learner: AdamW steps on batches sampled from a replay window, checkpoints that resume.

:class:`Learner` owns a :class:`~omega_cluster.model.PolicyValueNet`, its AdamW optimizer (Loshchilov
& Hutter 2019) with a warmup + cosine (or constant) learning-rate schedule, the numpy generator
that samples batches and the manifest position of the replay window it trains from.
:meth:`Learner.train_steps` refreshes the window (new shards), samples batches (on a GPU the
next one is prepared on a helper thread while the current one trains: ``prefetch``) and takes
steps with the :mod:`.losses` of the configured mode: ``"alphazero"`` (visit cross-entropy +
value MSE) or ``"actor_critic"`` (REINFORCE with a baseline, standardised clipped advantages,
entropy bonus), both with gradient-norm clipping (against a policy collapse). On CUDA it runs
under autocast with a GradScaler (``mixed_precision``); elsewhere in float32.

A loss that is not finite stops training with :class:`NonFiniteLossError` *before* the step is
applied: the weights and optimizer stay those of the last good step and any checkpoint on disk is
untouched (nothing is overwritten).

:meth:`Learner.save` / :meth:`Learner.load` go through :mod:`omega_cluster.model.checkpoint`
(safetensors + JSON, optimizer state without pickle) and add the learner's own state — step,
config, sampling generator, torch RNG, replay-window position — so a restarted learner continues
exactly: on CPU with fixed seeds, interrupted + resumed training gives the same weights as
uninterrupted training (tested). :meth:`Learner.window` rebuilds the replay window at the saved
position, accepting only shards of this game and encoder version.
"""

from __future__ import annotations

import base64
import dataclasses
import math
import time
from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from omega_cluster.data import (
    LegacyPosition,
    ManifestEntry,
    ManifestPosition,
    ReplayWindow,
    ShardStore,
    TrainingBatch,
)
from omega_cluster.games.api import Game
from omega_cluster.games.encoding import Encoder, EncoderError
from omega_cluster.games.registry import make_game
from omega_cluster.model.checkpoint import (
    CheckpointError,
    CheckpointMetadata,
    load_checkpoint,
    read_metadata,
    save_checkpoint,
)
from omega_cluster.model.encoders import encoder_from_info
from omega_cluster.model.network import PolicyValueNet, select_device
from omega_cluster.model.threads import pin_threads
from omega_cluster.train._slices import SliceSums
from omega_cluster.train.config import (
    LEARNER_MODES,
    LearnerConfig,
    LearnerError,
    LearnerStats,
    NonFiniteLossError,
)
from omega_cluster.train.losses import (
    LossTerms,
    TensorBatch,
    actor_critic_loss,
    alphazero_loss,
    to_tensors,
)

__all__ = [
    "LEARNER_MODES",
    "Learner",
    "LearnerConfig",
    "LearnerError",
    "LearnerStats",
    "NonFiniteLossError",
]


class Learner:
    """Trains ``model`` (module docstring). ``game`` and ``encoder`` go into every checkpoint."""

    def __init__(
        self,
        model: PolicyValueNet,
        config: LearnerConfig,
        *,
        game: Game,
        encoder: Encoder,
        version: int = 0,
        parent_version: int | None = None,
    ) -> None:
        if (model.observation_size, model.action_feature_size) != (
            encoder.observation_size,
            encoder.action_feature_size,
        ):
            raise LearnerError(
                f"model inputs ({model.observation_size}, {model.action_feature_size}) do not fit "
                f"encoder {encoder.name} v{encoder.version} ({encoder.observation_size}, "
                f"{encoder.action_feature_size})"
            )
        self.config, self.game, self.encoder = config, game, encoder
        self.version, self.parent_version = version, parent_version
        if config.threads is not None:
            # More threads than free cores makes small CPU steps 10-100x slower (spin-waits)
            pin_threads(config.threads)
        self.device = select_device(config.device)
        self.model = model.to(self.device).train()
        self.optimizer = torch.optim.AdamW(
            self.model.parameters(),
            lr=config.lr,
            betas=config.betas,
            weight_decay=config.weight_decay,
        )
        on_gpu = self.device.type == "cuda"
        self.amp = config.mixed_precision and on_gpu
        self.prefetch = on_gpu if config.prefetch is None else config.prefetch
        self.scaler = torch.amp.GradScaler("cuda") if self.amp else None
        self.step = 0
        self.sampling_rng = np.random.default_rng(config.seed)
        self.window_position: ManifestPosition | LegacyPosition | None = None
        lo, hi = model.config.value_range or (-1.0, 1.0)
        self.value_scale = (hi - lo) / 2.0  # value errors in half-ranges of the head
        self.seats = model.config.num_value_seats
        # the records' flat aux targets follow the encoder's heads; the model trains its own
        self.aux_layout = encoder.info().aux_heads if model.config.aux_heads else ()
        if config.value_target == "critic" and not model.config.critic:
            raise LearnerError(
                "LearnerConfig.value_target='critic' regresses the value head on the critic's "
                "values; this model has no critic (set the model's critic=true)"
            )

    # -- the replay window ------------------------------------------------------------------
    def accepts(self, entry: ManifestEntry) -> bool:
        """Whether a shard holds only this game and encoder version (others are skipped)."""
        return entry.games == (self.game.spec.name,) and entry.encoder_versions == (
            self.encoder.version,
        )

    def window(self, store: ShardStore, **options: Any) -> ReplayWindow:
        """A replay window over ``store`` at this learner's saved position (if any), accepting
        only shards of this game and encoder version; ``options`` go to ReplayWindow."""
        options.setdefault("accept", self.accepts)
        return ReplayWindow(store, start=self.window_position, **options)

    # -- training ---------------------------------------------------------------------------
    def tensors(self, batch: TrainingBatch) -> TensorBatch:
        """Check a batch (encoder version, sizes) and move it to the device."""
        versions = np.unique(batch.encoder_versions)
        if versions.size != 1 or int(versions[0]) != self.encoder.version:
            raise LearnerError(
                f"batch has encoder versions {versions.tolist()}; this learner trains encoder "
                f"{self.encoder.name} version {self.encoder.version} only"
            )
        width = batch.observations.shape[1]
        if width != self.model.observation_size:
            raise LearnerError(
                f"batch observations have {width} entries, the model expects "
                f"{self.model.observation_size}"
            )
        tb = to_tensors(
            batch,
            seats=self.seats,
            value_target=self.config.value_target,
            device=self.device,
            aux_layout=self.aux_layout,
        )
        spec = self.model.config.hidden
        if (
            tb.hidden_state is not None
            and spec is not None
            and (tb.hidden_state.shape[1] != spec.size)
        ):
            raise LearnerError(
                f"batch hidden states have {tb.hidden_state.shape[1]} entries, the model's "
                f"belief head and critic expect {spec.size} (records of another encoder?)"
            )
        return tb

    def loss(self, tb: TensorBatch) -> LossTerms:
        """The configured loss of a batch under the current weights (autograd on)."""
        cfg = self.config
        with torch.autocast(device_type=self.device.type, dtype=torch.float16, enabled=self.amp):
            output = self.model(tb.observations, tb.action_features, tb.legal_mask, tb.hidden_state)
        heads = self.model.config.aux_heads
        if cfg.mode == "actor_critic":
            return actor_critic_loss(
                output, tb, value_scale=self.value_scale, value_coef=cfg.value_coef,
                entropy_coef=cfg.entropy_coef, advantage_clip=cfg.advantage_clip,
                aux_coef=cfg.aux_coef, aux_heads=heads,
            )  # fmt: skip
        return alphazero_loss(
            output, tb, value_scale=self.value_scale, policy_coef=cfg.policy_coef,
            value_coef=cfg.value_coef, aux_coef=cfg.aux_coef, aux_heads=heads,
        )  # fmt: skip

    def evaluate(self, batch: TrainingBatch) -> dict[str, float]:
        """The losses of ``batch`` without a step (eval mode, no gradients)."""
        self.model.eval()
        try:
            with torch.no_grad():
                return self.loss(self.tensors(batch)).as_floats()
        finally:
            self.model.train()

    def train_batch(self, tb: TensorBatch) -> tuple[LossTerms, float]:
        """One optimizer step on a batch; returns its losses and the gradient norm."""
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.lr_at(self.step)
        self.optimizer.zero_grad(set_to_none=True)
        terms = self.loss(tb)
        if not torch.isfinite(terms.total):
            raise NonFiniteLossError(
                f"non-finite loss at learner step {self.step} ({terms.as_floats()}); the step was "
                f"not applied: the weights are those of step {self.step} (the last good one) and "
                "no checkpoint was written. Check the records (NaN inputs?) and the lr."
            )
        clip = self.config.grad_clip
        if self.scaler is not None:
            self.scaler.scale(terms.total).backward()
            self.scaler.unscale_(self.optimizer)
            norm = self._grad_norm(clip)
            self.scaler.step(self.optimizer)  # skips the step itself on inf/NaN gradients
            self.scaler.update()
        else:
            terms.total.backward()
            norm = self._grad_norm(clip)
            if not math.isfinite(norm):
                self.optimizer.zero_grad(set_to_none=True)
                raise NonFiniteLossError(
                    f"non-finite gradient norm at learner step {self.step}; the step was not "
                    f"applied: the weights are those of step {self.step} (the last good one)"
                )
            self.optimizer.step()
        self.step += 1
        return terms, norm

    def _grad_norm(self, clip: float | None) -> float:
        params = [p for p in self.model.parameters() if p.grad is not None]
        limit = clip if clip is not None else float("inf")
        return float(torch.nn.utils.clip_grad_norm_(params, limit))

    def train_steps(
        self,
        window: ReplayWindow,
        n: int | None = None,
        rng: np.random.Generator | None = None,
    ) -> LearnerStats:
        """Refresh ``window`` and take ``n`` steps (default ``steps_per_call``) on batches drawn
        with ``rng`` (default: the learner's own generator, saved in checkpoints)."""
        cfg = self.config
        steps = cfg.steps_per_call if n is None else n
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise LearnerError(f"n={n!r} must be an int >= 1")
        rng = self.sampling_rng if rng is None else rng
        started = time.perf_counter()
        window.refresh()
        if window.rows == 0:
            raise LearnerError(f"the replay window over {window.store.uri} holds no rows yet")

        labels = window.slice_labels() if window.slicing is not None else None
        slices = SliceSums(labels.keys if labels is not None else (), self.device)

        def draw() -> tuple[TensorBatch, np.ndarray]:
            batch, indices = window.sample_rows(cfg.batch_size, rng, weighted=cfg.weighted_sampling)
            return self.tensors(batch), indices

        # losses and figures per step (the heads' figures only on batches that measured them)
        figures: dict[str, list[float]] = defaultdict(list)
        norms = 0.0
        pool = ThreadPoolExecutor(max_workers=1) if self.prefetch and steps > 1 else None
        try:
            upcoming: Future[tuple[TensorBatch, np.ndarray]] | None = None
            for i in range(steps):
                tb, indices = upcoming.result() if upcoming is not None else draw()
                # draw exactly `steps` batches: a resumed learner's generator then matches
                upcoming = pool.submit(draw) if pool is not None and i + 1 < steps else None
                terms, norm = self.train_batch(tb)
                for key, value in terms.as_floats().items():
                    figures[key].append(value)
                norms += norm
                if labels is not None:
                    slices.add(labels.codes[indices], terms)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self.window_position = window.position
        seconds = time.perf_counter() - started
        means = {k: float(np.mean(v)) for k, v in figures.items()}
        return LearnerStats(
            steps=steps,
            step=self.step,
            samples=steps * cfg.batch_size,
            seconds=seconds,
            grad_norm=norms / steps,
            lr=cfg.lr_at(self.step - 1),
            window_rows=window.rows,
            slices=slices.figures(window.slice_rows()) if labels is not None else {},
            **means,
        )

    # -- checkpoints ------------------------------------------------------------------------
    def training_state(self) -> dict[str, Any]:
        """The JSON-able state a checkpoint needs to resume this learner exactly."""
        torch_rng = base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode()
        return {
            "config": dataclasses.asdict(self.config),
            "sampling_rng": self.sampling_rng.bit_generator.state,
            "torch_rng": torch_rng,
            "window_position": None
            if self.window_position is None
            else self.window_position.to_dict(),
        }

    def save(
        self,
        directory: str | Path,
        *,
        metrics: dict[str, float] | None = None,
        overwrite: bool = True,
    ) -> CheckpointMetadata:
        """Write a checkpoint (weights, optimizer, learner state) atomically to ``directory``."""
        return save_checkpoint(
            directory,
            self.model,
            game=self.game,
            encoder=self.encoder,
            optimizer=self.optimizer,
            step=self.step,
            version=self.version,
            parent_version=self.parent_version,
            metrics=metrics,
            training_state=self.training_state(),
            overwrite=overwrite,
        )

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        game: Game | None = None,
        encoder: Encoder | None = None,
        config: LearnerConfig | None = None,
    ) -> Learner:
        """A learner restored from a checkpoint (weights, optimizer, step, generators, window
        position). ``game`` / ``encoder``: check the checkpoint against them (a checkpoint of
        another game or encoder raises CheckpointError); default: rebuilt from its metadata.
        ``config``: override the saved config (e.g. a new lr for the next phase)."""
        meta = read_metadata(directory)
        if game is None:
            game = make_game(meta.game, **meta.game_params)
        elif game.spec.name != meta.game:
            raise CheckpointError(
                f"checkpoint {directory} is for game {meta.game!r}, not {game.spec.name!r}"
            )
        if encoder is None:
            try:
                encoder = encoder_from_info(game, meta.encoder)
            except EncoderError as err:
                raise CheckpointError(f"checkpoint {directory}: {err}") from err
        state = meta.training_state
        if config is None:
            saved = dict(state.get("config", {}))
            config = LearnerConfig(**saved) if saved else LearnerConfig()
        loaded = load_checkpoint(
            directory, expected_game=game, expected_encoder=encoder, device="cpu"
        )
        learner = cls(
            loaded.model, config, game=game, encoder=encoder,
            version=meta.version, parent_version=meta.parent_version,
        )  # fmt: skip
        if loaded.optimizer_state is not None:
            learner.optimizer.load_state_dict(loaded.optimizer_state)
        learner.step = meta.step
        try:
            learner._restore(state)
        except ValueError as err:  # a malformed replay position or generator state
            raise CheckpointError(f"checkpoint {directory}: {err}") from err
        return learner

    def _restore(self, state: dict[str, Any]) -> None:
        rng_state = state.get("sampling_rng")
        if rng_state is not None:
            self.sampling_rng.bit_generator.state = _plain(rng_state)
        torch_rng = state.get("torch_rng")
        if torch_rng:
            raw = np.frombuffer(base64.b64decode(torch_rng), np.uint8).copy()
            torch.set_rng_state(torch.from_numpy(raw))
        position = state.get("window_position")
        if position is not None:
            data = dict(position)
            if "recent" in data:  # an older checkpoint's position: its list comes back a tuple
                data["recent"] = list(data["recent"])
            self.window_position = ManifestPosition.from_dict(data)


def _plain(value: Any) -> Any:
    """Checkpoint JSON comes back with tuples for lists: numpy's state wants dicts and ints."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
