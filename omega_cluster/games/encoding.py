"""The encoder protocol: a game position, as one player sees it, turned into network inputs.

An encoder is built for one game (``encoder_for(game)``) and turns ``(state, player)`` into

* an **observation** vector ``float32[observation_size]`` — only what ``player`` may know (their
  own private data plus the public record), seat-relative where the game has seats, so one network
  plays every seat: relative seat ``k`` is absolute seat ``(player + k) % num_players``;
* **action features** ``float32[len(legal), action_feature_size]`` — one row per legal action,
  the input of the action-conditioned policy (:mod:`omega_cluster.model.network`), so the same
  network scores a legal set that changes every move.

Every encoder carries a ``version`` that goes into every self-play record and every checkpoint:
bump it whenever the meaning of any input changes, so old shards and checkpoints are refused
instead of silently misread. :class:`EncoderInfo` is the JSON-able description that checkpoints
and the exported agent bundle carry (sizes, version, and the layout of both vectors, segment by
segment, for people who write their own encoder in another language).

Encoders run for every leaf of every search, so implementations preallocate, use precomputed
tables and avoid per-element Python work (see ``bench/bench_inference.py`` for µs per state).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from omega_cluster.errors import UserError
from omega_cluster.games.api import State

__all__ = [
    "AuxHeadSpec",
    "Encoder",
    "EncoderError",
    "EncoderInfo",
    "HiddenSpec",
    "LayoutBuilder",
    "OneHotActions",
    "Segment",
    "encode_position",
]


class EncoderError(UserError, ValueError):
    """A game an encoder cannot serve, or a position it cannot encode (naming the problem)."""


@dataclass(frozen=True)
class Segment:
    """A named slice ``[start, start + size)`` of an encoded vector."""

    name: str
    start: int
    size: int
    doc: str


@dataclass(frozen=True)
class AuxHeadSpec:
    """An auxiliary prediction target the encoder's game offers (the network grows a head)."""

    name: str  # e.g. "round_pips"
    size: int  # outputs of the head
    kind: str  # "regression" (MSE on raw outputs) or "classification" (logits, cross-entropy)
    doc: str


@dataclass(frozen=True)
class HiddenSpec:
    """What a record's ``hidden_state`` column holds for the games an encoder serves: the hidden
    state at a decision, for training only (no player ever receives it as input).

    ``kind="locations"``: ``size`` items (Mexican Train's tiles, a poker deck's cards), each given
    as a code in ``0 .. classes - 1`` relative to the acting player: 0 — not hidden from it (its
    own, public, or out of play); 1 — the undealt pool (boneyard, deck); ``1 + k`` — the hand of
    the seat ``k`` places after it (``k = 1 .. N - 1``). ``classes = 1 + max_players``. The
    network's belief head predicts the code of each hidden item from the public observation; the
    perfect-information critic reads the codes one-hot.
    ``kind="vector"``: ``size`` raw floats (e.g. an OpenSpiel game's other players' information
    state tensors); the critic reads them as they are; no belief head.
    """

    kind: str  # "locations" | "vector"
    size: int  # items (locations) or floats (vector)
    classes: int = 0  # locations: codes 0 .. classes - 1; vector: 0
    doc: str = ""


@dataclass(frozen=True)
class EncoderInfo:
    """What a checkpoint or an exported bundle records about the encoder (JSON-able)."""

    name: str  # encoder name, e.g. "mexican_train"
    version: int  # bumped whenever the meaning of an input changes
    game_name: str  # game.spec.name the encoder serves
    observation_size: int
    action_feature_size: int
    max_players: int  # value seats of the network (seat-relative)
    options: dict[str, Any] = field(default_factory=dict)  # encoder knobs that fix the layout
    observation_layout: tuple[Segment, ...] = ()
    action_layout: tuple[Segment, ...] = ()
    aux_heads: tuple[AuxHeadSpec, ...] = ()
    hidden: HiddenSpec | None = None  # the records' hidden_state column (training only), if any

    @classmethod
    def of(cls, encoder: Any, **layout: Any) -> EncoderInfo:
        """The info of ``encoder``: its identity and sizes, plus ``options`` and the layouts."""
        return cls(
            name=encoder.name,
            version=encoder.version,
            game_name=encoder.game_name,
            observation_size=encoder.observation_size,
            action_feature_size=encoder.action_feature_size,
            max_players=encoder.max_players,
            **layout,
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EncoderInfo:
        return cls(
            name=str(data["name"]),
            version=int(data["version"]),
            game_name=str(data["game_name"]),
            observation_size=int(data["observation_size"]),
            action_feature_size=int(data["action_feature_size"]),
            max_players=int(data["max_players"]),
            options=dict(data.get("options", {})),
            observation_layout=tuple(Segment(**s) for s in data.get("observation_layout", ())),
            action_layout=tuple(Segment(**s) for s in data.get("action_layout", ())),
            aux_heads=tuple(AuxHeadSpec(**a) for a in data.get("aux_heads", ())),
            hidden=HiddenSpec(**data["hidden"]) if data.get("hidden") else None,
        )


@runtime_checkable
class Encoder(Protocol):
    """Turns ``(state, player)`` into network inputs using only what ``player`` may know."""

    name: str  # encoder name (recorded with its version)
    game_name: str  # game.spec.name of the games it serves
    version: int
    observation_size: int  # D
    action_feature_size: int  # F
    max_players: int  # value seats (the network's values are seat-relative to ``player``)

    def encode_observation(self, state: State, player: int) -> np.ndarray:
        """float32[D]: ``player``'s view of ``state``."""
        ...

    def encode_actions(self, state: State, player: int, legal: Sequence[int]) -> np.ndarray:
        """float32[len(legal), F]: one feature row per legal action, in ``legal``'s order."""
        ...

    def info(self) -> EncoderInfo:
        """Sizes, version, options and layouts, for checkpoints and exported bundles."""
        ...


def encode_position(
    encoder: Encoder, state: State, player: int, legal: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(observation float32[D], action_features float32[L, F])`` for ``player``'s legal actions."""
    if legal is None:
        legal = state.legal_actions(player)
    return encoder.encode_observation(state, player), encoder.encode_actions(state, player, legal)


class LayoutBuilder:
    """Allocates consecutive named segments of a vector while an encoder is built."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.size = 0

    def add(self, name: str, size: int, doc: str) -> int:
        """Reserve ``size`` entries; returns the segment's start offset."""
        start = self.size
        self.segments.append(Segment(name, start, size, doc))
        self.size += size
        return start


class OneHotActions:
    """Action features of games with a small fixed action space: the action id, one-hot."""

    def __init__(self, num_actions: int) -> None:
        self.size = num_actions
        self._eye = np.eye(num_actions, dtype=np.float32)
        self.layout = (Segment("action_id", 0, num_actions, "the action id, one-hot"),)

    def __call__(self, legal: Sequence[int]) -> np.ndarray:
        """float32[len(legal), num_actions] (a fresh array)."""
        return self._eye[np.fromiter(legal, np.intp, len(legal))]
