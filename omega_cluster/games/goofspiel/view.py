"""Goofspiel as one seat sees it at the play and serve tables (the plugin hook ``seat_view``,
drawn from :mod:`omega_cluster.games.picture`): the prize being bid for, every hand it may see
(its own cards are its bids: a click on one bids it; with ``imp_info`` the others' hands are face
down), who took each prize so far and the points."""

from __future__ import annotations

from typing import Any

from omega_cluster.games.goofspiel.state import GoofspielState
from omega_cluster.games.picture import Card, Row, card_view

__all__ = ["seat_view"]


def seat_view(state: GoofspielState, seat: int) -> dict[str, Any]:
    """Goofspiel as ``seat`` sees it (module docstring); a bid's action is its card index."""
    obs = state.observation(seat)
    game = state.game
    bidding = len(obs.point_cards) > len(obs.wins)
    rows = [Row("prize", [Card(str(obs.point_cards[-1] + 1))] if bidding else [])]
    own = obs.hands[0] if game.imp_info else obs.hands[seat]
    for p in range(game.num_players):
        if p == seat:
            cards = [Card(str(c + 1), c) for c in own]
        elif game.imp_info:
            cards = [Card(None) for _ in own]  # every seat holds as many cards
        else:
            cards = [Card(str(c + 1)) for c in obs.hands[p]]
        rows.append(Row(f"seat {p} · {obs.points[p]} points", cards, p))
    history = [
        f"{card + 1} to " + (f"seat {w}" if w >= 0 else "nobody (tie)")
        for card, w in zip(obs.point_cards, obs.wins, strict=False)
    ]
    return card_view(game, seat, rows, history)
