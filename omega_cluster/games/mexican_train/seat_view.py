"""Mexican Train as one seat sees it, for the tables of :mod:`omega_cluster.play` (the plugin
hook ``seat_view``): built from ``observation(seat)`` and the seat's own legal moves only, so no
other hand ever shows.

The view is what the terminal prints and the web table draws (``kind: "dominoes"``): the engine,
each train as tile names turned to match from the engine outwards (:func:`.render.turned_names`)
with its owner (:func:`.tiles.train_owner`, the names the moves use), open end, marker and open
double, the seat's hand, hand sizes, the boneyard, scores and round, and ``plays``: which tile of
the hand each legal play lays on which train (what lights up when a tile is picked).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from omega_cluster.games.mexican_train.render import turned_names
from omega_cluster.games.mexican_train.tiles import train_owner

__all__ = ["seat_view"]


def seat_view(state: Any, seat: int) -> dict[str, Any]:
    """Mexican Train as ``seat`` sees it (module docstring)."""
    obs = state.observation(seat)
    g = state.game
    tiles = g.tiles
    trains = [
        {
            "slot": t.slot,
            "owner": train_owner(t.slot),
            "tiles": turned_names(tiles, obs.engine, t.tiles),
            "open_end": t.open_end,
            "marker": t.marked,
            "open_double": t.slot in obs.open_doubles,
        }
        for t in obs.trains
    ]
    plays = []
    for action in state.legal_actions(seat) if seat in state.current_players else ():
        decoded = tiles.decode_action(action)
        if decoded is not None:
            plays.append({"action": action, "tile": tiles.name(decoded[0]), "train": decoded[1]})
    view: dict[str, Any] = {
        "game": g.spec.name,
        "kind": "dominoes",
        "round": obs.round_index + 1,
        "rounds": g.num_rounds,
        "engine": obs.engine,
        "hand": [tiles.name(t) for t in tiles.mask_tiles(obs.hand)],
        "trains": trains,
        "plays": plays,
        "current": obs.current_player,
        "open_doubles": list(obs.open_doubles),
        "must_cover": obs.must_cover,
        "chain": obs.chain,
        "hand_sizes": list(obs.hand_sizes),
        "boneyard": obs.boneyard_size,
        "scores": list(obs.scores),
        "rounds_won": list(obs.rounds_won),
        "round_results": [dataclasses.asdict(r) for r in obs.round_results],
        "drawn": obs.drawn,
    }
    view["text"] = _text(view, seat)
    return view


def _text(v: dict[str, Any], seat: int) -> str:
    lines = [f"round {v['round']}/{v['rounds']}, engine {v['engine']}|{v['engine']}"]
    for t in v["trains"]:
        flags = "".join(
            f" [{f}]"
            for f, on in (("marker", t["marker"]), ("open double", t["open_double"]))
            if on
        )
        laid = " ".join(t["tiles"]) or "(empty)"
        lines.append(f"  {t['owner']:>8}: {laid} -> end {t['open_end']}{flags}")
    lines.append(f"  your hand (seat {seat}): {' '.join(v['hand']) or '-'}")
    sizes = ", ".join(f"seat {i}: {n}" for i, n in enumerate(v["hand_sizes"]))
    lines.append(f"  hand sizes: {sizes}; boneyard {v['boneyard']}")
    lines.append(f"  scores (pips): {', '.join(map(str, v['scores']))}")
    return "\n".join(lines)
