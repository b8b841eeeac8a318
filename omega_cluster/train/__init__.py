"""Training: self-play that turns games into records, the losses, the learner and a one-process loop.

* :mod:`.selfplay` — :class:`SelfPlay`: K concurrent games (searches batched through
  ``run_searches``, or moves sampled from the network), records with visit targets, playout-cap
  randomisation, Dirichlet noise, a temperature schedule and per-round credit labels;
* :mod:`.losses` — AlphaZero (visit cross-entropy, value MSE, aux) and actor-critic (REINFORCE
  with a baseline, standardised clipped advantages, entropy bonus) losses;
* :mod:`.learner` — :class:`Learner`: AdamW + schedule, gradient clipping, mixed precision on CUDA,
  checkpoints that resume exactly, a stop with a clear error on a NaN loss;
* :mod:`.pipeline` — the service's driver (collect → train → gate → promote, sync or async, one
  set of steps), reaching its workers (:mod:`.workers`) through a :mod:`.backend`, with its
  state on disk in :mod:`.run_state`.

Pure code: no Ray, no MLflow (``omega_cluster.cluster`` wraps these classes in actors).
"""

from omega_cluster.train.learner import (
    LEARNER_MODES,
    Learner,
    LearnerConfig,
    LearnerError,
    LearnerStats,
    NonFiniteLossError,
)
from omega_cluster.train.losses import (
    LossError,
    LossTerms,
    TensorBatch,
    actor_critic_loss,
    alphazero_loss,
    aux_loss,
    to_tensors,
)
from omega_cluster.train.selfplay import (
    SelfPlay,
    SelfPlayConfig,
    SelfPlayError,
    SelfPlayStats,
    play_games,
)

__all__ = [
    "LEARNER_MODES",
    "Learner",
    "LearnerConfig",
    "LearnerError",
    "LearnerStats",
    "LossError",
    "LossTerms",
    "NonFiniteLossError",
    "SelfPlay",
    "SelfPlayConfig",
    "SelfPlayError",
    "SelfPlayStats",
    "TensorBatch",
    "actor_critic_loss",
    "alphazero_loss",
    "aux_loss",
    "play_games",
    "to_tensors",
]
