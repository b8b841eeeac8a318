"""A readable text picture of a Mexican Train state (debugging, the CLI, conformance checks).

Shows the round and engine, every train with its tiles, open end and marker, open doubles, every
hand (this is the omniscient view: it includes hidden tiles), the boneyard size and the scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from omega_cluster.games.mexican_train.tiles import MEXICAN_SLOT

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["render_state"]


def _train_name(slot: int) -> str:
    return "Mexican " if slot == MEXICAN_SLOT else f"player {slot}"


def render_state(state: MexicanTrainState) -> str:
    g = state.game
    tiles = g.tiles
    lines = [
        f"Mexican Train double-{g.max_value}, {g.num_players} players, objective {g.objective}: "
        f"round {state.round_index + 1}/{g.num_rounds}, engine {state.engine}|{state.engine}"
    ]
    trains = state.all_train_tiles()
    for s in g.train_slots():
        laid = " ".join(tiles.name(t) for t in trains[s]) or "(empty)"
        marker = " [marker]" if state.is_marked(s) else ""
        double = " [open double]" if s in state.open_doubles else ""
        lines.append(f"  {_train_name(s)}: {laid} -> end {state.ends[s]}{marker}{double}")
    for p in range(g.num_players):
        hand = " ".join(tiles.name(t) for t in tiles.mask_tiles(state.hands[p]))
        lines.append(
            f"  hand {p} ({state.hands[p].bit_count()}): {hand or '-'}"
            f"   pips so far {state.pip_totals[p]}, out {state.outs[p]}x"
        )
    lines.append(f"  boneyard: {len(state.boneyard)} tiles")
    if state.over:
        lines.append(f"  game over; returns {state.returns()}")
    else:
        flags = [f for f, on in (("drawn", state.drawn), ("chain", state.chain)) if on]
        extra = f" ({', '.join(flags)})" if flags else ""
        lines.append(f"  to act: player {state.current}{extra}")
    return "\n".join(lines)
