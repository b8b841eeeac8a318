"""A search leaf as a typed value: :class:`LeafSpec`, and its one parser :func:`parse_leaf`.

The leaf language (``search.leaf``, a search player's ``leaf`` argument):

* ``network`` — the network's prior and value (the network leaf);
* ``critic`` — the network's prior and its perfect-information critic's value;
* a rollout leaf: ``random`` / ``random_rollout`` (uniform random playouts) or
  ``<player>_rollout`` (the game's rule-based player ``<player>`` at every seat);
* ``network+<rollout leaf>`` — the network's prior, its value mixed with the rollout's;
* ``hand``, ``tables``, ``tables+hand`` — the hand-written value, n-tuple tables, their blend
  (:mod:`.table_leaves`).

The config checks, the service wiring and the player specs parse a leaf's text here, once; the
code below them takes the :class:`LeafSpec` and reads its fields, never the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from omega_cluster.players.registry import PlayerSpecError

__all__ = [
    "BLEND",
    "CRITIC",
    "HAND",
    "KINDS",
    "NETWORK",
    "RANDOM",
    "ROLLOUT",
    "TABLES",
    "TABLES_HAND",
    "TABLE_KINDS",
    "LeafSpec",
    "LeafSpecError",
    "parse_leaf",
]

NETWORK, CRITIC, ROLLOUT, BLEND = "network", "critic", "rollout", "blend"
HAND, TABLES, TABLES_HAND = "hand", "tables", "tables+hand"
TABLE_KINDS = (HAND, TABLES, TABLES_HAND)
KINDS = (NETWORK, CRITIC, ROLLOUT, BLEND, *TABLE_KINDS)
RANDOM = "random"  # the rollout policy of ``random`` / ``random_rollout``
_SUFFIX = "_rollout"
_BLEND_PREFIX = NETWORK + "+"
FORMS = (
    "random, random_rollout, <player>_rollout (a rule-based player of the game's plugin, e.g. "
    "heuristic_rollout), hand, tables, tables+hand, network, critic, network+<rollout leaf>"
)
"""The allowed forms, as an error line names them."""


class LeafSpecError(PlayerSpecError):
    """A leaf text outside the leaf language (the message names it and the allowed forms)."""


@dataclass(frozen=True)
class LeafSpec:
    """One search leaf (module docstring): its ``kind`` (one of :data:`KINDS`), the rollout
    policy of a rollout or blend leaf (``random`` or a rule-based player's name), the rollouts
    averaged per leaf and the network's share of a blend's value."""

    kind: str = NETWORK
    rollout: str | None = None  # kind rollout | blend: "random" or a rule-based player's name
    rollouts: int = 1  # rollouts per leaf (rollout leaves)
    network_value_weight: float = 0.5  # blend: the network's share of the value

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise LeafSpecError(f"LeafSpec.kind={self.kind!r}; allowed: {', '.join(KINDS)}")
        if (self.rollout is not None) != (self.kind in (ROLLOUT, BLEND)):
            raise LeafSpecError(
                f"LeafSpec: a {self.kind} leaf "
                + ("needs a rollout policy" if self.rollout is None else "takes no rollout")
            )

    @property
    def uses_network(self) -> bool:
        """Whether the leaf reads the network (``network``, ``critic``, ``network+<rollout>``)."""
        return self.kind in (NETWORK, CRITIC, BLEND)

    @property
    def rollout_leaf(self) -> str | None:
        """The rollout leaf's text (``random``, ``<player>_rollout``), None without one."""
        if self.rollout is None:
            return None
        return RANDOM if self.rollout == RANDOM else self.rollout + _SUFFIX

    @property
    def text(self) -> str:
        """The leaf in the leaf language (``parse_leaf(spec.text)`` gives the leaf back)."""
        if self.kind == ROLLOUT:
            return str(self.rollout_leaf)
        if self.kind == BLEND:
            return f"{_BLEND_PREFIX}{self.rollout_leaf}"
        return self.kind

    def __str__(self) -> str:
        return self.text

    def build(self, game: Any, model: Any = None, encoder: Any = None) -> Any:
        """The leaf evaluator for ``game`` (``model`` and ``encoder`` for a network leaf):
        :func:`omega_cluster.players.leaf.build_leaf`."""
        from omega_cluster.players.leaf import build_leaf  # torch: when a leaf is built

        return build_leaf(self, game, model, encoder)


def _rollout_policy(text: str) -> str | None:
    """``random`` / ``random_rollout`` -> ``random``; ``<player>_rollout`` -> the player."""
    if text in (RANDOM, RANDOM + _SUFFIX):
        return RANDOM
    name = text.removesuffix(_SUFFIX)
    return name if name != text and name.isidentifier() else None


def parse_leaf(text: Any, *, rollouts: int = 1, network_value_weight: float = 0.5) -> LeafSpec:
    """The :class:`LeafSpec` that ``text`` names (case and surrounding blanks ignored), with
    ``rollouts`` and ``network_value_weight``; a :class:`LeafSpecError` naming ``text`` and the
    allowed forms (:data:`FORMS`) when it names none."""
    name = text.strip().lower() if isinstance(text, str) else None
    if name in (NETWORK, CRITIC, *TABLE_KINDS):
        return LeafSpec(name, None, rollouts, network_value_weight)
    if name is not None and name.startswith(_BLEND_PREFIX):
        policy = _rollout_policy(name[len(_BLEND_PREFIX) :])
        if policy is not None:
            return LeafSpec(BLEND, policy, rollouts, network_value_weight)
    elif name is not None and (policy := _rollout_policy(name)) is not None:
        return LeafSpec(ROLLOUT, policy, rollouts, network_value_weight)
    raise LeafSpecError(f"unknown leaf {text!r}; allowed: {FORMS}")
