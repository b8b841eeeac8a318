"""The Commander's named heuristic terms and their weights: :class:`CommanderWeights`.

One frozen dataclass so a tuner (CMA-ES over self-play games; Hansen & Ostermeier 2001) can change
the weights without touching the player: ``Commander(game, weights=CommanderWeights(dump_pips=1.5))``
or ``CommanderWeights.from_dict({...})`` (unknown keys are rejected by name); the tuner's
presets are JSON files (``CommanderWeights.preset(name)``, ``commander:weights=<name>``). Every float field
named in :data:`TERMS` is the weight of the term of the same name in
:mod:`omega_cluster.games.mexican_train.officers.terms`; a move's score is ``sum(weight × feature)``. The
remaining fields are thresholds the features use. Each term is named for what it measures
(``dump_pips``: the pips a move lays; ``hand_flexibility``: how many own tiles still play; …).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["PRESETS_DIR", "TERMS", "CommanderWeights", "available_presets", "weights_from_dict"]

W = TypeVar("W")

TERMS: tuple[str, ...] = (
    "dump_pips",
    "campaign_dump",
    "endgame_dump",
    "urgent_dump",
    "hand_flexibility",
    "stranded_pips",
    "playable_tiles",
    "own_train",
    "unmark_own_train",
    "mexican_train",
    "opponent_train",
    "block_opponent",
    "feed_opponents",
    "cover_double",
    "double_followup",
    "double_uncovered",
    "doubles_kept",
    "goes_out",
    "draw",
    "pass_turn",
)
"""Term names in feature-vector order (the order :meth:`CommanderWeights.vector` returns)."""


@dataclass(frozen=True)
class CommanderWeights:
    """Weights of the Commander's terms (feature units in brackets) and the danger threshold.

    Defaults: hand-set, then one pass of coordinate search (each weight × 0, ½, 2, kept when
    the variant beat the defaults beyond noise in seat-rotated double-12 single rounds at 2, 4
    and 6 players). It moved two weights: raw pip dumping to 0 (in a
    single round whoever goes out wins whatever the pips, so keeping a long own chain matters
    far more) and hand_flexibility from 3 to 6; the other terms scored within noise of their
    hand-set values. Over 3-round points campaigns campaign_dump at 0, 0.25 and 0.5 played
    level and 2.0 clearly worse. ``cover_double`` only matters under lenient doubles and was
    set by hand. Strength figures: ``tests/unit/test_officers.py``.
    """

    dump_pips: float = 0.0  # [pips] of the tile laid (0|0 counts double_blank_value)
    campaign_dump: float = 0.25  # [pips] ... when pips left in hand count (points, > 1 round)
    endgame_dump: float = 1.0  # [pips] ... when the boneyard is empty (a blocked round scores)
    urgent_dump: float = 0.5  # [pips × urgency] dump faster while an opponent is about to go out
    hand_flexibility: float = 6.0  # [tiles] longest chain from own train's end after the move
    stranded_pips: float = -0.2  # [pips] in hand outside that chain (must go on other trains)
    playable_tiles: float = 1.0  # [tiles] in hand matching an end open to us after the move
    own_train: float = 1.0  # [0/1] the tile goes on our own train
    unmark_own_train: float = 4.0  # [0/1] ... and takes our marker down
    mexican_train: float = 0.0  # [0/1] the tile goes on the Mexican train
    opponent_train: float = 1.0  # [0/1] the tile goes on another seat's train
    block_opponent: float = 5.0  # [urgency × (1 − share of unseen tiles matching the new end)]
    feed_opponents: float = -3.0  # [share of unseen tiles matching a shared train's new end]
    cover_double: float = 20.0  # [0/1] the tile covers an open double (choice only if lenient)
    double_followup: float = 8.0  # [0/1] a double laid that we can cover ourselves
    double_uncovered: float = -6.0  # [0/1] a double laid that we cannot cover
    doubles_kept: float = -3.0  # [doubles] left in hand after the move
    goes_out: float = 1000.0  # [0/1] the move lays our last tile
    draw: float = -5.0  # [0/1] draw while a play is available (must_play=False)
    pass_turn: float = -20.0  # [0/1] pass / end a first-turn chain
    danger_hand_size: int = 3  # urgency = 1 at 1 tile, falls linearly to 0 above this size

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "danger_hand_size":
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(
                        f"CommanderWeights.danger_hand_size must be an int >= 1, got {value!r}"
                    )
            elif isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"CommanderWeights.{f.name} must be a number, got {value!r}")
            elif value != value or value in (float("inf"), float("-inf")):
                raise ValueError(f"CommanderWeights.{f.name} must be finite, got {value!r}")

    @classmethod
    def preset(cls, name: str) -> CommanderWeights:
        """The defaults (``default``), a preset of :data:`PRESETS_DIR` by name, or a preset
        file's weights (a path ending in ``.json``); unknown names list the presets there."""
        if name == "default":
            return cls()
        return cls.from_dict(_preset_weights(name))

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> CommanderWeights:
        """Build from a mapping of field names (missing ones keep their defaults)."""
        return weights_from_dict(cls, values)

    def as_dict(self) -> dict[str, float | int]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> CommanderWeights:
        """A copy with some fields changed (unknown names rejected like :meth:`from_dict`)."""
        return CommanderWeights.from_dict({**self.as_dict(), **changes})

    def vector(self) -> tuple[float, ...]:
        """The term weights in :data:`TERMS` order."""
        return tuple(float(getattr(self, name)) for name in TERMS)


PRESETS_DIR = Path(__file__).with_name("presets")
"""Where the tuner's presets live: ``<name>.json``, written by ``omega-cluster tune`` (the
weights and the run that made them) and loaded by name."""


def weights_from_dict(cls: type[W], values: Mapping[str, Any]) -> W:
    """A weights dataclass from a mapping of its field names (missing ones keep their
    defaults); an unknown key is a ``ValueError`` naming the allowed ones."""
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(
            f"unknown {cls.__name__} key(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(sorted(known))}"
        )
    return cls(**dict(values))


def available_presets() -> list[str]:
    """``default`` and the names of the preset files in :data:`PRESETS_DIR`."""
    return ["default", *sorted(p.stem for p in PRESETS_DIR.glob("*.json"))]


def _preset_weights(name: str) -> Mapping[str, Any]:
    """The weights of preset ``name`` (a file in :data:`PRESETS_DIR`) or of a preset file."""
    path = Path(name) if name.endswith(".json") or "/" in name else PRESETS_DIR / f"{name}.json"
    if not path.is_file():
        raise ValueError(
            f"unknown CommanderWeights preset {name!r}; allowed: "
            f"{', '.join(available_presets())} or the path of a preset .json"
        )
    try:
        data = json.loads(path.read_text())
        weights, target = data["weights"], data.get("target", "commander")
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"CommanderWeights preset {str(path)!r} is not a preset ({err})") from None
    if target != "commander" or not isinstance(weights, dict):
        raise ValueError(
            f"CommanderWeights preset {str(path)!r} holds {target!r} weights, not commander's"
        )
    return weights
