"""Typed configurations and result records of self-play and the learner.

:class:`SelfPlayConfig` / :class:`SelfPlayStats` belong to :mod:`.selfplay`, :class:`LearnerConfig` /
:class:`LearnerStats` to :mod:`.learner` (both modules re-export them). Each config validates itself
on construction and names the field, the bad value and the allowed values; the stats are frozen
records of what a run did, with throughput as properties. The service layer builds these from
Hydra configs (:mod:`omega_cluster.wiring`) and logs the stats.

The search's own knobs (budget, selection rule and constants, root noise) are not repeated here:
:attr:`SelfPlayConfig.search` is an :class:`~omega_cluster.search.ismcts.ISMCTSConfig`, declared and
validated once by the search; self-play adds only what is its own (the cheap budget of
playout-cap randomisation, the move-temperature schedule, what to record).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from omega_cluster.data.schema import min_row_bytes
from omega_cluster.fields import FieldChecks, FieldError, number_problem
from omega_cluster.model.network import DEVICE_NAMES, is_device_name
from omega_cluster.search.ismcts import ISMCTSConfig, simulation_bytes
from omega_cluster.train.losses import VALUE_TARGETS

__all__ = [
    "HEAD_FIGURES",
    "LEARNER_MODES",
    "MODES",
    "SCHEDULES",
    "LearnerConfig",
    "LearnerConfigError",
    "LearnerError",
    "LearnerStats",
    "NonFiniteLossError",
    "SelfPlayConfig",
    "SelfPlayError",
    "SelfPlayStats",
]

MODES = ("search", "network")


class SelfPlayError(FieldError):
    """A bad self-play configuration or an evaluator that cannot serve the chosen mode."""


@dataclass(frozen=True, kw_only=True)
class SelfPlayConfig:
    """One self-play run (validated on construction; errors name the field and the range)."""

    games: int = 64  # games to play
    concurrent_games: int = 16  # K games in flight; their searches share evaluator batches
    mode: str = "search"  # "search" (visit targets) or "network" (sample the policy, no search)
    # the full search: simulations, selection (uct | puct on the evaluator's prior), c_uct, c_puct,
    # root noise (dirichlet_alpha, dirichlet_fraction: on full searches only) and the rest of the
    # ISMCTS knobs; its temperature is replaced by the schedule below. A simultaneous-move game's
    # SM-MCTS takes its simulations (and search_options).
    search: ISMCTSConfig = field(default_factory=ISMCTSConfig)
    fast_simulations: int = 32  # cheap search budget (playout-cap randomisation)
    full_search_probability: float = 1.0  # p of a full search; 1.0 = every move a full search
    temperature: float = 1.0  # move temperature for each game's first `temperature_moves` moves
    temperature_moves: int = 30  # decisions (all players) played at `temperature`
    final_temperature: float = 0.0  # temperature afterwards (0 = the best move)
    search_options: Mapping[str, Any] = field(default_factory=dict)  # SM-MCTS knobs
    record_forced: bool = False  # also record moves with a single legal action
    record_prior: bool = False  # mode "network": the evaluator's prior is the policy target
    # (policy_weight 1, no root value): distilling a teacher such as a TeacherEvaluator
    max_moves: int | None = None  # abandon a game after this many decisions (its rows dropped)
    seed: int = 0  # every game's deal, chance and search streams derive from it
    champion_version: int = 0  # version of the network that plays (stamped on every record)
    record_weight: float = 1.0  # weight of every record (< 1: a weak teacher, down-weighted)
    actor: str = "selfplay"  # writer id stamped on records and game ids

    def __post_init__(self) -> None:
        check = FieldChecks(self, SelfPlayError)
        check.integer("games", 1)
        check.integer("concurrent_games", 1)
        check.choice("mode", MODES)
        if not isinstance(self.search, ISMCTSConfig):  # the search validated its own knobs
            raise SelfPlayError(
                f"SelfPlayConfig.search must be an ISMCTSConfig, got {type(self.search).__name__}"
            )
        check.integer("fast_simulations", 1)
        check.budget("fast_simulations", simulation_bytes, "the search tree")
        # the K games' searches are in flight together: K trees of the larger budget
        sims = max(self.search.simulations, self.fast_simulations)
        check.budget("concurrent_games", lambda k: simulation_bytes(sims, k),
                     f"its search trees of {sims} simulations")  # fmt: skip
        check.number("full_search_probability", 0.0, 1.0)
        check.number("temperature", 0.0)
        check.number("final_temperature", 0.0)
        check.integer("temperature_moves", 0)
        if self.record_prior and self.mode != "network":
            raise SelfPlayError(
                "SelfPlayConfig.record_prior records the evaluator's prior of mode 'network'; "
                f"mode={self.mode!r} records the search's visits (set mode='network')"
            )
        check.integer("max_moves", 1, optional=True)
        check.integer("seed")
        check.integer("champion_version", 0)
        check.number("record_weight", 0.0)

    def temperature_at(self, move: int) -> float:
        """The move temperature of a game's ``move``-th decision (0-based)."""
        return self.temperature if move < self.temperature_moves else self.final_temperature


@dataclass(frozen=True)
class SelfPlayStats:
    """Throughput and counts of a self-play run (so far)."""

    games: int  # games finished (truncated ones included)
    truncated_games: int  # games abandoned at max_moves (their rows dropped)
    decisions: int  # player decisions (each acting player at a simultaneous node counts one)
    records: int  # rows yielded
    searches: int  # searched decisions (full + fast)
    full_searches: int  # searches whose visits are policy targets
    simulations: int  # search simulations run
    evaluator_calls: int  # batched evaluator calls
    leaves: int  # leaves evaluated
    seconds: float  # wall-clock time
    slices: dict[str, int] = field(default_factory=dict)  # games finished per table of the mix

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0

    @property
    def simulations_per_s(self) -> float:
        return self.simulations / self.seconds if self.seconds > 0 else 0.0

    @property
    def mean_batch(self) -> float:
        return self.leaves / self.evaluator_calls if self.evaluator_calls else 0.0


LEARNER_MODES = ("alphazero", "actor_critic")
HEAD_FIGURES = ("belief_loss", "critic_loss", "value_ev", "critic_ev")
"""The learner's figures of the hidden-information heads (:class:`LearnerStats`)."""
SCHEDULES = ("constant", "cosine")


class LearnerError(ValueError):
    """A bad learner configuration, or data the learner must not train on."""


class LearnerConfigError(LearnerError, FieldError):
    """A :class:`LearnerConfig` field refused (naming the field, its value and what is allowed)."""


class NonFiniteLossError(RuntimeError):
    """A NaN/inf loss or gradient: training stopped before applying the step."""


@dataclass(frozen=True, kw_only=True)
class LearnerConfig:
    """How the learner trains (validated on construction; errors name the field)."""

    mode: str = "alphazero"  # "alphazero" (visit targets) or "actor_critic" (REINFORCE)
    value_target: str = "final"  # "final", "round" (per-round credit), "search", "mixed",
    # "critic" (the perfect-information critic's values; needs a model with critic=true)
    lr: float = 3e-4  # peak AdamW learning rate (the warm starts of bench/bench_training.py)
    weight_decay: float = 1e-4  # AdamW decoupled weight decay
    betas: tuple[float, float] = (0.9, 0.999)  # AdamW moments
    schedule: str = "constant"  # "constant" or "cosine" (after warmup, down to min_lr_fraction)
    warmup_steps: int = 0  # linear warmup from 0 to lr
    total_steps: int = 10_000  # cosine horizon
    min_lr_fraction: float = 0.1  # cosine floor, as a fraction of lr
    batch_size: int = 256  # rows per step
    steps_per_call: int = 100  # steps of train_steps() when n is not given
    weighted_sampling: bool = False  # sample rows ∝ record weight (else uniform, weights in loss)
    policy_coef: float = 1.0  # alphazero: weight of the policy cross-entropy
    value_coef: float = 1.0  # weight of the value MSE
    aux_coef: float = 0.25  # weight of the auxiliary losses (when the batch has aux targets)
    entropy_coef: float = 0.05  # actor_critic: entropy bonus (0.05 by default)
    advantage_clip: float = 3.0  # actor_critic: clip standardised advantages at ±k σ
    grad_clip: float | None = 1.0  # max gradient norm (None: no clipping)
    device: str = "auto"  # "auto" (CUDA, then MPS, then CPU), "cpu", "cuda[:i]", "mps" (the
    # name is checked here, the Learner checks that this machine has it)
    mixed_precision: bool = True  # autocast float16 + GradScaler, on CUDA only
    # prepare the next batch on a helper thread; None: on a GPU, where the host's batch
    # preparation bounds the step (bench/bench_learner.py), and off on a CPU, whose step
    # the helper would take a core from
    prefetch: bool | None = None
    threads: int | None = None  # torch intra-op threads (process-wide; None: torch's default)
    seed: int = 0  # seed of the batch-sampling generator

    def __post_init__(self) -> None:
        check = FieldChecks(self, LearnerConfigError)
        check.choice("mode", LEARNER_MODES)
        check.choice("value_target", VALUE_TARGETS)
        check.choice("schedule", SCHEDULES)
        check.number("lr", 0.0, open_low=True)
        check.number("weight_decay", 0.0)
        check.integer("warmup_steps", 0)
        check.integer("batch_size", 1)
        row = min_row_bytes()
        check.budget("batch_size", lambda rows: rows * row, f"its rows (>= {row} B each)")
        check.integer("steps_per_call", 1)
        check.number("grad_clip", 0.0, open_low=True, optional=True)
        if not (isinstance(self.device, str) and is_device_name(self.device)):
            # the name only: whether this machine has the device is the Learner's to check
            check.refuse("device", f"is not allowed; allowed: {DEVICE_NAMES}")
        check.integer("threads", 1, optional=True)
        check.integer("total_steps", 1)
        for name in ("min_lr_fraction", "advantage_clip"):
            check.number(name, 0.0, open_low=True)
        for name in ("policy_coef", "value_coef", "aux_coef", "entropy_coef"):
            check.number(name, 0.0)
        betas = self.betas
        if not (
            isinstance(betas, (tuple, list))
            and len(betas) == 2
            and all(number_problem(b, 0.0, 1.0, open_high=True) is None for b in betas)
        ):
            check.refuse("betas", "must be two numbers in [0, 1)")
        object.__setattr__(self, "betas", (float(betas[0]), float(betas[1])))

    def lr_at(self, step: int) -> float:
        """The learning rate of step ``step`` (0-based): linear warmup, then constant or cosine."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        if self.schedule == "constant":
            return self.lr
        span = max(1, self.total_steps - self.warmup_steps)
        progress = min(1.0, (step - self.warmup_steps) / span)
        floor = self.min_lr_fraction
        return self.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


@dataclass(frozen=True)
class LearnerStats:
    """What one :meth:`Learner.train_steps` call did (losses are means over its steps)."""

    steps: int  # steps taken in this call
    step: int  # the learner's total steps after the call
    samples: int  # rows trained on (steps × batch size)
    seconds: float  # wall-clock time of the call (sampling included)
    loss: float
    policy_loss: float
    value_loss: float
    entropy: float
    aux_loss: float
    grad_norm: float  # mean gradient norm before clipping
    lr: float  # learning rate of the last step
    window_rows: int  # rows the replay window sampled from
    # per slice of the window (a window with a slicing): "policy_loss" and "value_loss" (weighted
    # means over the call's rows of that slice), "samples" (rows of it trained on), "window_rows"
    slices: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # the hidden-information heads, means over the call's batches that measured them (NaN where
    # none did: no such head, or no row with a hidden state): the belief cross-entropy (nats per
    # hidden item), the critic's MSE, and the explained variance 1 - Var(target - prediction) /
    # Var(target) of the acting player's value (seat 0), value head and critic, vs the outcome
    belief_loss: float = math.nan
    critic_loss: float = math.nan
    value_ev: float = math.nan
    critic_ev: float = math.nan

    def head_metrics(self) -> dict[str, float]:
        """The measured figures of the hidden-information heads (the NaN ones left out)."""
        figures = {name: getattr(self, name) for name in HEAD_FIGURES}
        return {name: value for name, value in figures.items() if math.isfinite(value)}

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0
