"""Encoders: the built-in games' encoders, the generic one, and ``encoder_for(game)``.

A game's encoder comes from its plugin (:class:`~omega_cluster.games.plugin.GamePlugin`'s
``encoder`` hook, built as ``factory(game, **options)``); a game whose plugin gives none gets the
:class:`~omega_cluster.model.encoders.generic.GenericEncoder`, built from its fixed-length
numeric observation and fixed action space. :func:`encoder_from_info` rebuilds the encoder a
checkpoint was trained with (the options it records are the plugin's ``encoder_options``) and
refuses one whose version or sizes differ.
"""

from __future__ import annotations

from typing import Any

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
from omega_cluster.games.registry import game_plugin
from omega_cluster.model.encoders.generic import GenericEncoder

__all__ = [
    "AuxHeadSpec",
    "Encoder",
    "EncoderError",
    "EncoderInfo",
    "GenericEncoder",
    "LayoutBuilder",
    "OneHotActions",
    "Segment",
    "check_encoder_matches",
    "encode_position",
    "encoder_for",
    "encoder_from_info",
]


def encoder_for(game: Game, **options: Any) -> Encoder:
    """The encoder of ``game``: its plugin's, else the generic one (options go to its factory)."""
    factory = game_plugin(game).hook("encoder") or GenericEncoder
    try:
        encoder: Encoder = factory(game, **options)
    except TypeError as err:
        raise EncoderError(f"encoder for {game.spec.name}: bad options {options!r}: {err}") from err
    return encoder


def encoder_from_info(game: Game, info: EncoderInfo) -> Encoder:
    """Rebuild the encoder ``info`` describes for ``game``; raise :class:`EncoderError` if the
    installed encoder differs (another game, name or version, or other sizes)."""
    if info.game_name != game.spec.name:
        raise EncoderError(
            f"the encoder was made for game {info.game_name!r}, not {game.spec.name!r}"
        )
    if info.name == GenericEncoder.name:  # a game trained with the generic encoder keeps it
        encoder: Encoder = GenericEncoder(game)
    else:
        keys = game_plugin(game).encoder_options
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
