"""A run's network, released: the folder ``omega-cluster release`` writes (``models/<game>/`` in
the repository) that ``network:<folder>`` seats in ``arena``, ``play`` and ``serve``.

    omega-cluster release run=runs/mexican_train-20261129-120000 out=models/mexican_train
    omega-cluster release run=<run dir> version=7 strength=bench/champion.json out=<dir>
    omega-cluster arena game=mexican_train seats=network:models/mexican_train,commander

* :mod:`.record` — :func:`read_run`: what the run recorded about the version (its resolved
  config, registry, Elo log and anchored ratings, code version) and the ``train`` overrides that
  reproduce it;
* :mod:`.strength` — the strength file a bench writes (:class:`StrengthRow` rows) and its table;
* :mod:`.card` — ``MODEL_CARD.md`` from all of that;
* :mod:`.write` — :func:`write_release`: the checkpoint (safetensors + JSON), the ONNX bundle, the
  card and ``release.json``, atomically; a different release is replaced only when forced.

In the service layer: it reads a run through :mod:`omega_cluster.wiring` and the pipeline's run
state; the CLI (:mod:`omega_cluster.cli.release`) parses the command line into these calls.
"""

from omega_cluster.release.card import NO_STRENGTH, CardInputs, model_card
from omega_cluster.release.record import ReleaseError, RunRecord, read_run, reproduce_overrides
from omega_cluster.release.strength import (
    StrengthRow,
    StrengthTable,
    read_strength,
    strength_markdown,
)
from omega_cluster.release.write import RELEASE_FILE, ReleaseResult, write_release

__all__ = [
    "NO_STRENGTH",
    "RELEASE_FILE",
    "CardInputs",
    "ReleaseError",
    "ReleaseResult",
    "RunRecord",
    "StrengthRow",
    "StrengthTable",
    "model_card",
    "read_run",
    "read_strength",
    "reproduce_overrides",
    "strength_markdown",
    "write_release",
]
