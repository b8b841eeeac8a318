"""Load a run's configuration: Hydra composes ``conf/``, the schema types it, the checks judge it.

``load_settings(["game=goofspiel", "run=smoke", "cluster.self_play_actors=2"])`` composes
``conf/config.yaml`` and its groups with Hydra's compose API, merges the result onto
``OmegaConf.structured(Settings)`` (the dataclasses of :mod:`omega_cluster.config.schema`: an
unknown key or a value of the wrong type fails here), converts it into a :class:`Settings`
instance and runs :func:`validate` (allowed values, ranges, the game and its players). Every
Hydra and OmegaConf exception becomes a :class:`ConfigError` whose message names the full key and
what is allowed (the keys of the group, the group's options, the expected type).

The presets in ``conf/`` say only what differs from the schema's defaults, so an override of a
key the schema knows sets it whether a preset names it or not: ``cluster.self_play_actors=2``
and ``+cluster.self_play_actors=2`` both become Hydra's ``++`` (add or replace), and ``~key``
resets the key to its default. ``game.params`` is a free mapping (each game declares its own
parameters), so an override of one of its entries adds or replaces it the same way
(``game.params.num_cards=4``); the game then rejects names it does not know. A key the schema
does not know is left to Hydra and fails, naming the key and the keys allowed there.

:func:`to_yaml` and :func:`flat_params` render a :class:`Settings` for the run's log and for
MLflow params (:mod:`omega_cluster.tracking`). The CLI calls :func:`load_settings`;
:mod:`omega_cluster.wiring` (the service layer) turns the groups into components' configs.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.errors import (
    ConfigCompositionException,
    HydraException,
    MissingConfigException,
    OverrideParseException,
)
from hydra.initialize import get_gh_backup, restore_gh_from_backup
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import (
    ConfigAttributeError,
    ConfigKeyError,
    ConfigTypeError,
    MissingMandatoryValue,
    OmegaConfBaseException,
    ValidationError,
)

from omega_cluster.config import resume
from omega_cluster.config._checks import validate
from omega_cluster.config._flat import flat_params
from omega_cluster.config.errors import ConfigError
from omega_cluster.config.schema import GameSettings, Settings

__all__ = [
    "CONF_ENV",
    "ConfigError",
    "conf_dir",
    "flat_params",
    "load_settings",
    "to_yaml",
    "validate",
]

CONF_ENV = "OMEGA_CLUSTER_CONF"  # a conf/ directory that replaces the repository's
_PRIMARY = "config"  # conf/config.yaml: the defaults list
_DICT_FIELDS = ("game.params",)  # free mappings: their entries are added or replaced (++)
_REPLACED_FIELDS = ("game.fleet", "gate.anchors")  # mappings a value replaces whole


def conf_dir() -> Path:
    """The ``conf/`` directory: ``$OMEGA_CLUSTER_CONF`` if set, else ``conf/`` at the root of the
    repository that holds this package."""
    env = os.environ.get(CONF_ENV)
    path = Path(env).expanduser() if env else Path(__file__).resolve().parents[2] / "conf"
    return _check_dir(path, f"${CONF_ENV}" if env else "the repository's conf/")


def _check_dir(path: Path, source: str) -> Path:
    path = path.resolve()
    if not (path / f"{_PRIMARY}.yaml").is_file():
        raise ConfigError(
            f"no Hydra configuration at {path} ({source}): {_PRIMARY}.yaml is missing; "
            f"point {CONF_ENV} or config_dir at a conf/ directory with {_PRIMARY}.yaml"
        )
    return path


def load_settings(
    overrides: Sequence[str] = (),
    *,
    config_dir: str | Path | None = None,
    run_dir: str | Path | None = None,
) -> Settings:
    """Compose ``conf/config.yaml`` with Hydra ``overrides`` (``group=option``, ``key=value``,
    ``+key=value``), type it with the schema and validate it. Raises :class:`ConfigError`.

    A resumed run (``run.resume=<run dir>``, or ``run_dir``: the directory an MLflow run id of
    ``run.resume`` names) starts from the run's saved ``config.yaml`` instead, and the overrides
    may change only what does not change what was trained (:mod:`omega_cluster.config.resume`).
    """
    if isinstance(overrides, str):
        raise ConfigError(f"overrides must be a list of strings, got the string {overrides!r}")
    directory = conf_dir() if config_dir is None else _check_dir(Path(config_dir), "config_dir")
    overrides = [e for o in overrides for e in _schema_override(o)]

    def compose(given: list[str]) -> DictConfig:
        return _compose(directory, _game_params_reset(directory, given) + given)

    saved = _saved_run(overrides) if run_dir is None else Path(run_dir).expanduser()
    if saved is not None and (saved / resume.SAVED_CONFIG).is_file():
        groups = {p.name for p in directory.iterdir() if p.is_dir()}
        return resume.merge_saved(saved.resolve(), overrides, compose, groups)
    return validate(_to_settings(compose(overrides)))


def _saved_run(overrides: Sequence[str]) -> Path | None:
    """The directory ``run.resume=`` names, if it is one (an MLflow run id is not)."""
    values = [o.lstrip("+").partition("=")[2].strip() for o in overrides
              if o.lstrip("+").partition("=")[0].strip() == "run.resume"]  # fmt: skip
    if not values or not values[-1] or values[-1] == "null":
        return None
    path = Path(values[-1]).expanduser()
    return path if path.is_dir() else None


def _schema_override(override: str) -> list[str]:
    """Hydra's forms for an override of a key the schema knows, whether a preset names it or not:
    ``[+]key=v`` → ``++key=v`` (add or replace); ``~key`` → ``++key=<placeholder> ~key`` (the key is then
    absent: its schema default); ``game.fleet={...}`` replaces the preset's mix whole (Hydra would
    merge the two mappings). Any other override (``group=option``, an unknown key) is left as is."""
    text = override.strip()
    if text.startswith("~"):
        key, eq, _ = text[1:].partition("=")
        key = key.strip()
        if eq or not (key.startswith(tuple(f"{f}." for f in _DICT_FIELDS)) or _is_leaf(key)):
            return [text]
        # Hydra deletes only a key that holds a value (not null): give it one first
        placeholder = {"dict": "{}", "list": "[]"}.get(str(_annotation(key)).partition("[")[0], "0")
        return [f"++{key}={placeholder}", text]
    bare = text.lstrip("+")
    key, eq, value = bare.partition("=")
    key = key.strip()
    if not eq:
        return [text]
    if key in _REPLACED_FIELDS:
        return [f"++{key}={{}}", f"~{key}", f"+{key}={value.strip()}"]
    if key.startswith(tuple(f"{f}." for f in _DICT_FIELDS)) or _is_leaf(key):
        return [f"++{bare}"]
    return [text]


def _is_leaf(key: str) -> bool:
    """Whether ``key`` (``cluster.self_play_actors``) is a value of the schema, not a group."""
    node: Any = Settings
    for part in key.split("."):
        if not (isinstance(node, type) and dataclasses.is_dataclass(node)):
            return False
        fields = {f.name: f for f in dataclasses.fields(node)}
        if part not in fields:
            return False
        node = typing.get_type_hints(node)[part]
    return not (isinstance(node, type) and dataclasses.is_dataclass(node))


def _game_params_reset(directory: Path, overrides: Sequence[str]) -> list[str]:
    """``["~game.params"]`` when ``game.name=`` names another game than the game preset's and no
    ``game.params=`` says which parameters to use: the preset's parameters belong to its own game
    (``rounds`` of Mexican Train), not to ``kuhn_poker`` or a user's ``<module>:<Class>``.
    Entries given as ``game.params.x=v`` still apply, after the reset."""
    values = dict(o.lstrip("+~").partition("=")[::2] for o in overrides)
    values = {k.strip(): v.strip() for k, v in values.items()}
    if "game.name" not in values or "game.params" in values:
        return []
    if values["game.name"] == _preset_game_name(directory, values.get("game")):
        return []
    return ["++game.params={}", "~game.params"]


def _preset_game_name(directory: Path, option: str | None) -> str | None:
    """``name`` of the game preset ``option`` (None: the defaults list's; a preset without
    ``name`` has the schema's), or None if unreadable."""
    try:
        if option is None:
            defaults = yaml.safe_load((directory / f"{_PRIMARY}.yaml").read_text())["defaults"]
            option = next(d["game"] for d in defaults if isinstance(d, dict) and "game" in d)
        preset = yaml.safe_load((directory / "game" / f"{option}.yaml").read_text()) or {}
        if isinstance(preset.get("game"), dict):  # a preset of package _global_ (connect_four)
            preset = preset["game"]
        name = preset.get("name", GameSettings.name)
    except (OSError, KeyError, TypeError, AttributeError, StopIteration, yaml.YAMLError):
        return None
    return str(name)


def _compose(directory: Path, overrides: list[str]) -> DictConfig:
    # Hydra keeps one global instance: clear it for this compose (so repeated calls work) and
    # put back whatever was there (a caller may itself run under @hydra.main).
    previous = get_gh_backup()
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(
            version_base=None, config_dir=str(directory), job_name="omega_cluster"
        ):
            return compose(config_name=_PRIMARY, overrides=overrides)
    except MissingConfigException as err:
        raise _missing_option(err, directory) from err
    except OverrideParseException as err:
        raise ConfigError(
            f"{_compact(err)} (forms: group=option, key=value, +key=value, ~key)"
        ) from err
    except ConfigCompositionException as err:
        cause = err.__cause__
        if isinstance(cause, (ConfigAttributeError, ConfigKeyError)) and cause.full_key:
            raise _unknown_key(cause.full_key) from err
        raise ConfigError(_compact(err)) from err
    except HydraException as err:
        raise ConfigError(_compact(err)) from err
    except ValueError as err:  # Hydra: e.g. a group given a number (search=3)
        raise ConfigError(f"{_compact(err)} (overrides: {' '.join(overrides)})") from err
    finally:
        restore_gh_from_backup(previous)


def _compact(err: BaseException) -> str:
    """An exception's message on one line, with its cause's when that adds something."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = "; ".join(line for line in lines if not line.startswith("See https://"))
    cause = err.__cause__
    if cause is not None and str(cause).strip() and str(cause).strip() not in text:
        text += f" ({str(cause).strip().splitlines()[0]})"
    return text


def _missing_option(err: MissingConfigException, directory: Path) -> ConfigError:
    missing = err.missing_cfg_file or ""
    group, _, option = missing.rpartition("/")
    if not group:
        return ConfigError(f"{_compact(err)} (config directory {directory})")
    available = sorted(p.stem for p in (directory / group).glob("*.yaml"))
    # a game of one's own is named by its import path, a key (the arena's game= takes either)
    own = f"; a game's import path is a key: game.name={option}" if ":" in option else ""
    return ConfigError(
        f"unknown option {option!r} of config group {group!r} ({group}={option}); available: "
        f"{', '.join(available) or 'none'} (the files {directory / group}/*.yaml){own}"
    )


def _to_settings(composed: DictConfig) -> Settings:
    """Merge the composed config onto the schema and build the :class:`Settings` instance."""
    groups = _field_types(Settings)
    for name in composed:
        if name in groups and not isinstance(composed[name], DictConfig):
            keys = ", ".join(_field_types(groups[name][1]))
            raise ConfigError(f"{name}={composed[name]!r} must be a mapping with keys: {keys}")
    try:
        merged = OmegaConf.merge(OmegaConf.structured(Settings), composed)
        settings = OmegaConf.to_object(merged)
    except ConfigKeyError as err:
        raise _unknown_key(err.full_key or str(err.key)) from err
    except (ValidationError, ConfigTypeError) as err:
        raise _wrong_type(err, composed) from err
    except MissingMandatoryValue as err:
        raise ConfigError(f"{err.full_key} has no value (???); set it: {err.full_key}=...") from err
    except OmegaConfBaseException as err:
        where = f"{err.full_key}: " if err.full_key else ""
        raise ConfigError(f"{where}{_compact(err)}") from err
    if not isinstance(settings, Settings):  # to_object of a structured Settings config
        raise ConfigError(f"the composed config is a {type(settings).__name__}, not Settings")
    return settings


def _field_types(cls: type) -> dict[str, tuple[str, Any]]:
    """``name -> (annotation as written, resolved type)`` of a schema dataclass."""
    hints = typing.get_type_hints(cls)
    return {f.name: (str(f.type), hints[f.name]) for f in dataclasses.fields(cls)}


def _unknown_key(full_key: str) -> ConfigError:
    """Name the first unknown part of ``full_key`` and list the keys allowed there."""
    parts = full_key.split(".")
    node: Any = Settings
    annotation = "Settings"
    for depth, part in enumerate(parts):
        parent = ".".join(parts[:depth])
        if not (isinstance(node, type) and dataclasses.is_dataclass(node)):
            return ConfigError(
                f"unknown key {full_key!r}: {parent!r} is a value ({annotation}), not a group"
            )
        fields = _field_types(node)
        if part not in fields:
            key = ".".join(parts[: depth + 1])
            close = difflib.get_close_matches(part, list(fields), n=1)
            hint = f" (did you mean {'.'.join([*parts[:depth], close[0]])!r}?)" if close else ""
            where = f"keys of {parent!r}" if parent else "config groups and top-level keys"
            return ConfigError(f"unknown key {key!r}{hint}; {where}: {', '.join(fields)}")
        annotation, node = fields[part]
    return ConfigError(f"unknown key {full_key!r}")


def _annotation(full_key: str) -> str | None:
    """The schema's annotation of ``full_key`` (``"int | None"``), None if it has none."""
    node: Any = Settings
    annotation: str | None = None
    for part in full_key.split("."):
        if not (isinstance(node, type) and dataclasses.is_dataclass(node)):
            return None
        fields = _field_types(node)
        if part not in fields:
            return None
        annotation, node = fields[part]
    return annotation


def _wrong_type(err: OmegaConfBaseException, composed: DictConfig) -> ConfigError:
    key = err.full_key
    expected = _annotation(key) if key else None
    if not key or expected is None:
        return ConfigError(_compact(err))
    value = OmegaConf.select(composed, key, throw_on_resolution_failure=False)
    if isinstance(value, DictConfig) or OmegaConf.is_list(value):
        value = OmegaConf.to_container(value)
    return ConfigError(f"{key}={value!r} has the wrong type; expected {expected}")


def to_yaml(settings: Settings) -> str:
    """The resolved configuration as YAML (schema order), for the run's log and artifacts."""
    return OmegaConf.to_yaml(OmegaConf.structured(settings), resolve=True)
