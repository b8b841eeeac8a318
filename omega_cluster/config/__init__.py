"""The configuration of a training run: the Hydra schema, loading and validation.

``load_settings(["game=goofspiel", "run=smoke"])`` composes ``conf/`` (Hydra groups game, search,
model, learner, gate, cluster, tracking, run) into a validated :class:`Settings`; a wrong key,
type or value raises :class:`ConfigError` naming the key and what is allowed. :func:`to_yaml` and
:func:`flat_params` render it for the run log and MLflow. A resumed run (``run.resume=<dir>``)
starts from its saved ``config.yaml``; overrides may change only :data:`SAFE_ON_RESUME`.

Layer: the checks read the allowed names from the components (search leaves, learner modes,
gate modes), so this package sits above training and evaluation and below the service layer;
it builds no component, and no worker imports it (:mod:`omega_cluster.wiring` is the only
translation from settings to components' configs).
"""

from omega_cluster.config.errors import ConfigError
from omega_cluster.config.load import (
    CONF_ENV,
    conf_dir,
    flat_params,
    load_settings,
    to_yaml,
    validate,
)
from omega_cluster.config.resume import SAFE_ON_RESUME, read_saved_settings, resume_changes
from omega_cluster.config.schema import (
    ClusterSettings,
    GameSettings,
    GateSettings,
    LearnerSettings,
    ModelSettings,
    RunSettings,
    SearchSettings,
    Settings,
    TrackingSettings,
)

__all__ = [
    "CONF_ENV",
    "SAFE_ON_RESUME",
    "ClusterSettings",
    "ConfigError",
    "GameSettings",
    "GateSettings",
    "LearnerSettings",
    "ModelSettings",
    "RunSettings",
    "SearchSettings",
    "Settings",
    "TrackingSettings",
    "conf_dir",
    "flat_params",
    "load_settings",
    "read_saved_settings",
    "resume_changes",
    "to_yaml",
    "validate",
]
