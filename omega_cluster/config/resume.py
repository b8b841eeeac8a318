"""Resuming a run: the run's saved ``config.yaml`` is the truth, the command line may change only
what does not change what was trained.

``load_settings(["run.resume=runs/x", "run.iterations=20"])`` loads ``runs/x/config.yaml`` as the
base and applies only the keys the overrides set explicitly: a ``key=value`` sets that key (and
the keys under it); a ``group=option`` sets every key of its group and every key the preset
changes elsewhere (``run=smoke`` also sets ``model``). Keys the command line leaves alone keep
their saved values, so resuming without the preset the run was trained with does not switch
presets. Of the keys set, those of :data:`SAFE_ON_RESUME` may change (how long the run goes, where
it is tracked, the resources it runs on); any other change (the game, the network, the search,
the learner, the gate, the seed, the shard store, ...) raises one :class:`ConfigError` naming
each key with its saved and its new value: a network trained as ``model=small`` cannot become
``model=default`` in the middle of a run. Start a new run to train other settings.

:func:`resume_changes` is the same check between two resolved configurations; the service runs
it on every resume (also for a caller that passes its own :class:`Settings`) and records the
safe changes it returns in the run directory and in MLflow.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from omega_cluster.config._flat import flat_params, leaves
from omega_cluster.config.errors import ConfigError
from omega_cluster.config.schema import Settings

__all__ = ["SAFE_ON_RESUME", "merge_saved", "read_saved_settings", "resume_changes"]

SAFE_ON_RESUME = (
    "run.iterations", "run.max_minutes", "run.progress", "run.resume", "run.dir",
    "tracking.enabled", "tracking.uri", "tracking.flush_every_s", "tracking.log_onnx",
    "cluster.backend", "cluster.address", "cluster.num_cpus", "cluster.self_play_actors",
    "cluster.bench_workers", "cluster.learner_gpus", "cluster.mode", "cluster.concurrent_games",
    "cluster.max_policy_lag", "cluster.max_rows_ahead", "cluster.max_restarts",
    "cluster.torch_threads", "cluster.dashboard", "cluster.dashboard_host",
    "learner.device", "learner.threads",
)  # fmt: skip
"""Keys a resumed run may change: its length, its tracking, the resources and schedule it runs
on. Everything else was part of what was trained."""

SAVED_CONFIG = "config.yaml"
_SHOWN = 6  # changes named in the refusal before "and N more"
_UNSET = "(not set)"
Compose = Callable[[list[str]], DictConfig]


def read_saved_settings(path: Path) -> Settings:
    """A run's saved ``config.yaml`` as :class:`Settings` (:class:`ConfigError` naming the file
    if it is unreadable or no longer a valid configuration)."""
    from omega_cluster.config.load import _to_settings, validate  # load.py imports this module

    try:
        saved = OmegaConf.load(path)
    except (OSError, OmegaConfBaseException, ValueError) as err:
        raise ConfigError(f"cannot read the saved configuration {path}: {err}") from err
    if not isinstance(saved, DictConfig):
        raise ConfigError(f"the saved configuration {path} is not a mapping of config groups")
    try:
        return validate(_to_settings(saved))
    except ConfigError as err:
        raise ConfigError(f"the saved configuration {path} is not valid: {err}") from err


def merge_saved(
    run_dir: Path, overrides: Sequence[str], compose: Compose, groups: set[str]
) -> Settings:
    """The saved configuration of ``run_dir`` with the keys ``overrides`` set explicitly
    (module docstring). ``compose`` composes ``conf/`` with overrides; ``groups`` are its
    config groups. Raises :class:`ConfigError` for a change outside :data:`SAFE_ON_RESUME`."""
    from omega_cluster.config.load import _to_settings, validate

    def typed(given: list[str]) -> dict[str, Any]:
        # the composition on the schema: every key, the presets' or the schema's default
        return _leaves(_to_settings(compose(given)))

    saved = read_saved_settings(run_dir / SAVED_CONFIG)
    composed = typed(list(overrides))
    explicit = _explicit_keys(overrides, typed, groups, composed | _leaves(saved))
    merged, defaults = OmegaConf.structured(saved), _leaves(Settings())
    for key in sorted(explicit):
        if key in composed or key in defaults:  # a removed schema key: its default
            value = composed[key] if key in composed else defaults[key]
            OmegaConf.update(merged, key, value, merge=False, force_add=True)
        else:  # an entry of a free mapping the new composition does not have
            parent, _, name = key.rpartition(".")
            node = OmegaConf.select(merged, parent) if parent else merged
            if isinstance(node, DictConfig) and name in node:
                del node[name]
    if saved.run.dir is not None and "run.dir" not in explicit:
        merged.run.dir = str(run_dir)  # it says where the run is now (it may have moved)
    settings = validate(_to_settings(merged))
    resume_changes(saved, settings, where=str(run_dir))
    return settings


def resume_changes(
    saved: Settings, new: Settings, *, where: str | None = None
) -> dict[str, tuple[str, str]]:
    """``key -> (saved, new)`` for every setting ``new`` changes (as MLflow params' text);
    :class:`ConfigError` naming each key with both values if one of them is not in
    :data:`SAFE_ON_RESUME` (``where``: the run directory, for the message)."""
    before, after = flat_params(saved), flat_params(new)
    changed = {
        k: (before.get(k, _UNSET), after.get(k, _UNSET))
        for k in sorted(before.keys() | after.keys())
        if before.get(k) != after.get(k)
    }
    refused = [k for k in changed if not _safe(k)]
    if refused:
        shown = ", ".join(f"{k} {changed[k][0]} -> {changed[k][1]}" for k in refused[:_SHOWN])
        more = f" and {len(refused) - _SHOWN} more" if len(refused) > _SHOWN else ""
        raise ConfigError(
            f"resuming {where or new.run.resume}: it was trained with other settings; these "
            f"differ: {shown}{more} (saved -> new). A resumed run keeps what it was "
            "trained with (it may change run.iterations, run.max_minutes, tracking.uri and the "
            "cluster's resources); resume without these overrides, or start a new run "
            "(run.dir=...) to train with them"
        )
    return changed


def _safe(key: str) -> bool:
    return key in SAFE_ON_RESUME


def _explicit_keys(
    overrides: Sequence[str],
    compose: Callable[[list[str]], dict[str, Any]],
    groups: set[str],
    known: Mapping[str, Any],
) -> set[str]:
    """The leaf keys the overrides set: a key and the keys under it; for ``group=option`` the
    group's keys and those the preset changes from the defaults (``run=smoke`` sets ``model``)."""
    prefixes: set[str] = set()
    changed: set[str] = set()
    plain: dict[str, Any] | None = None
    for override in overrides:
        key = override.strip().lstrip("~+").partition("=")[0].strip().partition("@")[0]
        prefixes.add(key)
        if key in groups:
            plain = compose([]) if plain is None else plain
            alone = compose([override])
            changed |= {k for k in alone.keys() | plain.keys() if alone.get(k) != plain.get(k)}
    inside = {k for k in known if any(k == p or k.startswith(f"{p}.") for p in prefixes)}
    return inside | changed


def _leaves(config: DictConfig | Settings) -> dict[str, Any]:
    """Dotted leaf keys -> plain values (a free mapping's entries are leaves; an empty one is)."""
    data: Any
    if isinstance(config, Settings):
        data = dataclasses.asdict(config)
    else:
        data = OmegaConf.to_container(config, resolve=True)
    return leaves(data)
