"""A card game as a table shows it: one schema for every card game's seat view.

A card game's plugin hook ``seat_view`` returns :func:`card_view`: rows of cards (a seat's hand,
the board, the card being bid for), each card face up, face down, or a move (the card a click
plays: Goofspiel's bids), the public history as move names and a few facts (pot, points), as
JSON (``kind: "cards"``), with the text the terminal prints. The web table draws every card game
from this one schema, so a game says *what* lies on its table and never how it is drawn. A game
with a table of its own (Mexican Train's dominoes) builds its own view; a game with no hook gets
the generic view of :mod:`omega_cluster.play.session` (its observation's fields).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Card", "Row", "card_view"]

FACE_DOWN = "##"  # a face-down card in the text picture


@dataclass(frozen=True)
class Card:
    """One card: its face (None: face down) and the move that plays it (None: not a move)."""

    face: str | None
    action: int | None = None


@dataclass(frozen=True)
class Row:
    """A row of cards: a label, the cards and the seat it belongs to (None: the board's)."""

    label: str
    cards: Sequence[Card]
    seat: int | None = None


def card_view(
    game: Any,
    seat: int,
    rows: Sequence[Row],
    history: Sequence[str] = (),
    facts: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """The seat view of a card game (module docstring); ``seat`` is the viewer."""
    view: dict[str, Any] = {
        "game": game.spec.name,
        "kind": "cards",
        "rows": [
            {
                "label": r.label,
                "seat": r.seat,
                "cards": [{"face": c.face, "action": c.action} for c in r.cards],
            }
            for r in rows
        ],
        "history": list(history),
        "facts": [[k, v] for k, v in facts],
    }
    lines = []
    for r in rows:
        you = " (you)" if r.seat == seat else ""
        faces = " ".join(FACE_DOWN if c.face is None else c.face for c in r.cards)
        lines.append(f"{r.label}{you}: {faces or '-'}")
    lines.append(f"history: {' · '.join(history) or '-'}")
    lines += [f"{k}: {v}" for k, v in facts]
    view["text"] = "\n".join(lines)
    return view
