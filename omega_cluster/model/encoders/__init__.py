"""Encoders: one per game, and the registry that picks one for a game (``encoder_for(game)``).

Built-in encoders are lazy ``"module:Class"`` entries keyed by ``game.spec.name`` (``openspiel:*``
games share the pyspiel-tensor encoder); :func:`register_encoder` adds one for a user's game.
An encoder is built as ``Cls(game, **options)``; :func:`encoder_from_info` rebuilds the encoder
a checkpoint was trained with and refuses one whose version or sizes differ.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeAlias

from omega_cluster.games.api import Game
from omega_cluster.games.encoding import (
    AuxHeadSpec,
    Encoder,
    EncoderError,
    EncoderInfo,
    LayoutBuilder,
    OneHotActions,
    Segment,
    encode_position,
)

__all__ = [
    "AuxHeadSpec",
    "Encoder",
    "EncoderError",
    "EncoderInfo",
    "LayoutBuilder",
    "OneHotActions",
    "Segment",
    "available_encoders",
    "check_encoder_matches",
    "encode_position",
    "encoder_for",
    "encoder_from_info",
    "register_encoder",
]

EncoderFactory: TypeAlias = Callable[..., Encoder]

_PKG = "omega_cluster.model.encoders"
_ENCODERS: dict[str, str | EncoderFactory] = {
    "mexican_train": "omega_cluster.games.mexican_train.encoder:MexicanTrainEncoder",
    "goofspiel": f"{_PKG}.goofspiel:GoofspielEncoder",
    "kuhn_poker": f"{_PKG}.kuhn_poker:KuhnPokerEncoder",
    "leduc_poker": f"{_PKG}.leduc_poker:LeducPokerEncoder",
    "openspiel": f"{_PKG}.openspiel:OpenSpielEncoder",
}
# options of the built-in encoders that a checkpoint records and encoder_from_info passes back
_REBUILD_OPTIONS: dict[str, tuple[str, ...]] = {
    "mexican_train": ("max_players", "log_length", "heuristic_features")
}


def register_encoder(
    game_name: str, factory: str | EncoderFactory, *, replace: bool = False
) -> None:
    """Make ``encoder_for(game)`` build ``factory(game, **options)`` for games named ``game_name``."""
    if game_name in _ENCODERS and not replace:
        raise EncoderError(f"game {game_name!r} already has an encoder (pass replace=True)")
    _ENCODERS[game_name] = factory


def available_encoders() -> list[str]:
    """Game names with an encoder (``openspiel`` stands for every ``openspiel:<name>``)."""
    return sorted(_ENCODERS)


def encoder_for(game: Game, **options: Any) -> Encoder:
    """The encoder of ``game`` (keyword options go to its constructor)."""
    name = game.spec.name
    key = "openspiel" if name.startswith("openspiel:") and name not in _ENCODERS else name
    target = _ENCODERS.get(key)
    if target is None:
        raise EncoderError(
            f"no encoder for game {name!r}; encoders exist for {', '.join(available_encoders())} "
            "(register one with omega_cluster.model.encoders.register_encoder)"
        )
    if isinstance(target, str):
        module, _, attr = target.partition(":")
        target = getattr(importlib.import_module(module), attr)
    assert callable(target)
    try:
        return target(game, **options)
    except TypeError as err:
        raise EncoderError(f"encoder for {name}: bad options {options!r}: {err}") from err


def encoder_from_info(game: Game, info: EncoderInfo) -> Encoder:
    """Rebuild the encoder ``info`` describes for ``game``; raise :class:`EncoderError` if the
    installed encoder differs (another game, name or version, or other sizes)."""
    if info.game_name != game.spec.name:
        raise EncoderError(
            f"the encoder was made for game {info.game_name!r}, not {game.spec.name!r}"
        )
    keys = _REBUILD_OPTIONS.get(info.name, ())
    encoder = encoder_for(game, **{k: info.options[k] for k in keys if k in info.options})
    check_encoder_matches(encoder, info)
    return encoder


def check_encoder_matches(encoder: Encoder, info: EncoderInfo) -> None:
    """Raise :class:`EncoderError` naming the first difference between ``encoder`` and ``info``."""
    for field in ("name", "version", "observation_size", "action_feature_size", "max_players"):
        have, want = getattr(encoder, field), getattr(info, field)
        if have != want:
            raise EncoderError(
                f"encoder {field} mismatch for {info.game_name}: the checkpoint was made with "
                f"{field}={want!r}, the installed encoder has {field}={have!r}"
            )
