"""How Mexican Train is laid out on a table, and its text picture.

:func:`turned` is the one home of how a train lies: its tiles in the order they were laid, each
turned so that the end it was laid on touches the tile before it, reading from the engine
outwards (``12|3 3|7 7|10 10|10``, never ``3|12 7|3 10|7``). The seat views of the tables
(:mod:`.seat_view`: the terminal and the web table draw from them) and :func:`render_state` read
trains through it, and every table names a train's owner by :func:`~.tiles.train_owner` (``seat 2``,
``Mexican``), as the moves do (``12|3 on seat 2's train``).

:func:`render_state` is the omniscient picture (debugging, the CLI, conformance checks, the game
viewer's full position): the round and engine, every train with its tiles, open end and marker,
open doubles, every hand (hidden tiles included), the boneyard size and the scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from omega_cluster.games.mexican_train.tiles import TileSet, train_owner

if TYPE_CHECKING:
    from omega_cluster.games.mexican_train.state import MexicanTrainState

__all__ = ["render_state", "turned", "turned_names"]


def turned(tiles: TileSet, engine: int, laid: Sequence[int]) -> list[tuple[int, int]]:
    """A train's tiles (indices, in laying order) as ``(near, far)`` pip pairs turned to match:
    the first ``near`` is the engine, each next ``near`` the ``far`` before it."""
    out: list[tuple[int, int]] = []
    end = engine
    for tile in laid:
        far = tiles.other_end(tile, end)
        out.append((end, far))
        end = far
    return out


def turned_names(tiles: TileSet, engine: int, laid: Sequence[int]) -> list[str]:
    """:func:`turned` as tile names: ``["12|3", "3|7", "7|10"]``."""
    return [f"{near}|{far}" for near, far in turned(tiles, engine, laid)]


def render_state(state: MexicanTrainState) -> str:
    g = state.game
    tiles = g.tiles
    lines = [
        f"Mexican Train double-{g.max_value}, {g.num_players} players, objective {g.objective}: "
        f"round {state.round_index + 1}/{g.num_rounds}, engine {state.engine}|{state.engine}"
    ]
    trains = state.all_train_tiles()
    for s in g.train_slots():
        laid = " ".join(turned_names(tiles, state.engine, trains[s])) or "(empty)"
        marker = " [marker]" if state.is_marked(s) else ""
        double = " [open double]" if s in state.open_doubles else ""
        lines.append(f"  {train_owner(s):>8}: {laid} -> end {state.ends[s]}{marker}{double}")
    for p in range(g.num_players):
        hand = " ".join(tiles.name(t) for t in tiles.mask_tiles(state.hands[p]))
        lines.append(
            f"  hand of seat {p} ({state.hands[p].bit_count()}): {hand or '-'}"
            f"   pips so far {state.pip_totals[p]}, out {state.outs[p]}x"
        )
    lines.append(f"  boneyard: {len(state.boneyard)} tiles")
    if state.over:
        lines.append(f"  game over; returns {state.returns()}")
    else:
        flags = [f for f, on in (("drawn", state.drawn), ("chain", state.chain)) if on]
        extra = f" ({', '.join(flags)})" if flags else ""
        lines.append(f"  to act: seat {state.current}{extra}")
    return "\n".join(lines)
