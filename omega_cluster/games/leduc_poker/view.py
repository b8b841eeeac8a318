"""Leduc poker as one seat sees it at the play and serve tables (the plugin hook ``seat_view``,
drawn from :mod:`omega_cluster.games.picture`): its own card, the others face down, the board
card once turned, both betting rounds, the pot and, at the end, who took it."""

from __future__ import annotations

from typing import Any

from omega_cluster.games._poker import seat_rows
from omega_cluster.games.leduc_poker.rules import ACTION_NAMES
from omega_cluster.games.leduc_poker.state import LeducPokerState
from omega_cluster.games.picture import Card, Row, card_view

__all__ = ["seat_view"]


def seat_view(state: LeducPokerState, seat: int) -> dict[str, Any]:
    """Leduc poker as ``seat`` sees it (module docstring): the chips in are public."""
    obs = state.observation(seat)
    game = state.game
    rows = seat_rows(game.num_players, seat, obs.card, game.card_name, state._folded)
    rows.append(Row("board", [Card(game.card_name(obs.board) if obs.board >= 0 else None)]))
    history = [
        f"round {k}: " + " ".join(ACTION_NAMES[a] for a in actions)
        for k, actions in ((1, obs.round1), (2, obs.round2))
        if actions
    ]
    facts: list[tuple[str, Any]] = [("pot", sum(state._ante))]
    if obs.winners:
        facts.append(("won by", ", ".join(f"seat {w}" for w in obs.winners)))
    return card_view(game, seat, rows, history, facts)
